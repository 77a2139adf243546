import type { Migration } from "@payments/kit";
import { merchantsMigration } from "./20261122000000_merchants.js";

/** Every migration of the merchant service, oldest first. */
export const migrations: readonly Migration[] = [merchantsMigration];
