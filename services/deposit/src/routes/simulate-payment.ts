import type { DepositService } from "@payments/contracts/deposit";
import type { Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import type { DepositContext } from "../context.js";
import { depositForToken } from "../checkout.js";
import { paySandboxDeposit, requireSandbox } from "../sandbox.js";
import { depositFromRow } from "../store.js";

/**
 * The sandbox's stand-in for the customer's bank: reports the transfer the customer was
 * asked to make (right account, amount and reference) through the same path as a real
 * bank integration. The bank transaction id derives from the deposit, so pressing the
 * button twice pays once.
 */
export function simulatePayment(ctx: DepositContext): Rpc<typeof DepositService, "simulatePayment"> {
  return {
    async simulatePayment(req) {
      const row = await depositForToken(ctx, req.token);
      await requireSandbox(ctx, row);
      const outcome = await paySandboxDeposit(ctx, row, {
        amount: Number(row.requested_amount),
        senderName: row.customer_name,
        bankTransactionId: `SIM-${row.id}`,
        // The customer pressed the checkout's button; the gateway serves that page.
        reportedBy: `checkout "simulate payment" via ${callerAttribution("deposit")}`,
      });
      return { deposit: depositFromRow(outcome.deposit) };
    },
  };
}
