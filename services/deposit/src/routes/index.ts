import type { ConnectRouter } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import type { DepositContext } from "../context.js";
import { cancelDeposit } from "./cancel-deposit.js";
import { confirmDeposit } from "./confirm-deposit.js";
import { createDeposit } from "./create-deposit.js";
import { getCheckout } from "./get-checkout.js";
import { getDeposit } from "./get-deposit.js";
import { getReconciliation } from "./get-reconciliation.js";
import { getTransfer } from "./get-transfer.js";
import { importStatementRpc } from "./import-statement.js";
import { listDeposits } from "./list-deposits.js";
import { listUnmatchedTransfers } from "./list-unmatched-transfers.js";
import { lowerModeFenceRoute } from "./lower-mode-fence.js";
import { raiseModeFenceRoute } from "./raise-mode-fence.js";
import { rejectDeposit } from "./reject-deposit.js";
import { resolveTransfer } from "./resolve-transfer.js";
import { reportTransfer } from "./report-transfer.js";
import { sandboxExpireDeposit } from "./sandbox-expire-deposit.js";
import { sandboxPayDeposit } from "./sandbox-pay-deposit.js";
import { simulatePayment } from "./simulate-payment.js";
import { summarizeDeposits } from "./summarize-deposits.js";

export function routes(router: ConnectRouter, ctx: DepositContext): void {
  router.service(DepositService, {
    ...createDeposit(ctx),
    ...getDeposit(ctx),
    ...listDeposits(ctx),
    ...summarizeDeposits(ctx),
    ...cancelDeposit(ctx),
    ...confirmDeposit(ctx),
    ...rejectDeposit(ctx),
    ...reportTransfer(ctx),
    ...listUnmatchedTransfers(ctx),
    ...getCheckout(ctx),
    ...simulatePayment(ctx),
    ...sandboxPayDeposit(ctx),
    ...sandboxExpireDeposit(ctx),
    ...getTransfer(ctx),
    ...resolveTransfer(ctx),
    ...getReconciliation(ctx),
    ...importStatementRpc(ctx),
    ...raiseModeFenceRoute(ctx),
    ...lowerModeFenceRoute(ctx),
  });
}
