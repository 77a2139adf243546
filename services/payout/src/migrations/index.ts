import type { Migration } from "@payments/kit";
import { payoutsMigration } from "./20261122040000_payouts.js";
import { withdrawalSandboxMigration } from "./20261123010000_withdrawal_sandbox.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [payoutsMigration, withdrawalSandboxMigration];
