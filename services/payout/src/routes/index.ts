import type { ConnectRouter } from "@connectrpc/connect";
import { PayoutService } from "@payments/contracts/payout";
import type { PayoutContext } from "../context.js";
import { adjustBalance } from "./adjust-balance.js";
import { approveWithdrawal } from "./approve-withdrawal.js";
import { cancelWithdrawal } from "./cancel-withdrawal.js";
import { checkLedger } from "./check-ledger.js";
import { completeTransferReturn } from "./complete-transfer-return.js";
import { completeWithdrawal } from "./complete-withdrawal.js";
import { createTransferReturn } from "./create-transfer-return.js";
import { createWithdrawal } from "./create-withdrawal.js";
import { failTransferReturn } from "./fail-transfer-return.js";
import { failWithdrawal } from "./fail-withdrawal.js";
import { getBalances } from "./get-balances.js";
import { getStatement } from "./get-statement.js";
import { getWithdrawal } from "./get-withdrawal.js";
import { listLedgerEntries } from "./list-ledger-entries.js";
import { listTransferReturns } from "./list-transfer-returns.js";
import { listWithdrawalApprovals } from "./list-withdrawal-approvals.js";
import { listWithdrawals } from "./list-withdrawals.js";
import { summarizeWithdrawals } from "./summarize-withdrawals.js";
import { listWithheldCredits } from "./list-withheld-credits.js";
import { lowerModeFenceRoute } from "./lower-mode-fence.js";
import { raiseModeFenceRoute } from "./raise-mode-fence.js";
import { rejectWithdrawal } from "./reject-withdrawal.js";
import { resolveWithheldCredit } from "./resolve-withheld-credit.js";

export function routes(router: ConnectRouter, ctx: PayoutContext): void {
  router.service(PayoutService, {
    ...createWithdrawal(ctx),
    ...getWithdrawal(ctx),
    ...listWithdrawals(ctx),
    ...summarizeWithdrawals(ctx),
    ...cancelWithdrawal(ctx),
    ...completeWithdrawal(ctx),
    ...failWithdrawal(ctx),
    ...getBalances(ctx),
    ...listLedgerEntries(ctx),
    ...getStatement(ctx),
    ...adjustBalance(ctx),
    ...createTransferReturn(ctx),
    ...completeTransferReturn(ctx),
    ...failTransferReturn(ctx),
    ...listTransferReturns(ctx),
    ...checkLedger(ctx),
    ...listWithheldCredits(ctx),
    ...resolveWithheldCredit(ctx),
    ...raiseModeFenceRoute(ctx),
    ...lowerModeFenceRoute(ctx),
    ...listWithdrawalApprovals(ctx),
    ...approveWithdrawal(ctx),
    ...rejectWithdrawal(ctx),
  });
}
