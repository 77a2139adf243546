import type { Migration } from "@payments/kit";
import { payoutsMigration } from "./20261122040000_payouts.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [payoutsMigration];
