import type { Migration } from "@payments/kit";
import { payoutsMigration } from "./20261122040000_payouts.js";
import { withdrawalSandboxMigration } from "./20261123010000_withdrawal_sandbox.js";
import { transferReturnsMigration } from "./20261126010000_transfer_returns.js";
import { ledgerProcessIdMigration } from "./20261126020000_ledger_process_id.js";
import { withheldCreditsMigration } from "./20261127010000_withheld_credits.js";
import { modeFencesMigration } from "./20261128010000_mode_fences.js";
import { listFiltersMigration } from "./20261129010000_list_filters.js";
import { attributionAndApprovalsMigration } from "./20261223010000_attribution_and_approvals.js";

/** In the order they apply. */
export const migrations: readonly Migration[] = [payoutsMigration, withdrawalSandboxMigration, transferReturnsMigration, ledgerProcessIdMigration, withheldCreditsMigration, modeFencesMigration, listFiltersMigration, attributionAndApprovalsMigration];
