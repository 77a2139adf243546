import type { Migration } from "@payments/kit";
import { depositsMigration } from "./20261122030000_deposits.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [depositsMigration];
