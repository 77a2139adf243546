import type { DepositService } from "@payments/contracts/deposit";
import { merchantScope, merchantScopeFields, parseRequest, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { amount, depositId, text } from "../requests.js";
import { paySandboxDeposit, requireSandbox, SANDBOX_TRANSFER_PREFIX } from "../sandbox.js";
import { depositFromRow, getDepositRow, transferFromRow } from "../store.js";

const request = z.object({
  ...merchantScopeFields,
  depositId,
  amount: amount.optional(),
  // Empty means "the customer's name"; anything else follows ReportTransfer's rules for a sender.
  senderName: z.preprocess((v) => (v === "" ? undefined : v), text(200).optional()),
});

/**
 * POST /v1/sandbox/deposit/{id}/pay: a sandbox merchant's CI pays its own deposit without a
 * browser. Checked in the order a merchant can act on: not its deposit (TRANSACTION_NOT_FOUND),
 * not sandbox (SANDBOX_ONLY), not pending (INVALID_TRANSACTION_STATE). The transfer is
 * `sandbox-<deposit id>`: recognisable as simulated, and one per deposit however often the
 * helper is called. A different amount is reported as such and handled as a real transfer of
 * that amount would be (today: matched by reference, completed with the amount received).
 */
export function sandboxPayDeposit(ctx: DepositContext): Rpc<typeof DepositService, "sandboxPayDeposit"> {
  return {
    async sandboxPayDeposit(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const row = await getDepositRow(ctx.db, { depositId: input.depositId, merchantId });
      await requireSandbox(ctx, row);
      const outcome = await paySandboxDeposit(ctx, row, {
        amount: input.amount ?? Number(row.requested_amount),
        senderName: input.senderName ?? row.customer_name,
        bankTransactionId: `${SANDBOX_TRANSFER_PREFIX}${row.id}`,
        // The merchant's API key (its CI), the merchant's user, or an operator.
        reportedBy: `sandbox pay helper: ${callerAttribution("deposit")}`,
      });
      ctx.logger.info({ depositId: row.id, amount: outcome.transfer.amount }, "sandbox deposit paid by the merchant's pay helper");
      return { deposit: depositFromRow(outcome.deposit), transfer: transferFromRow(outcome.transfer) };
    },
  };
}
