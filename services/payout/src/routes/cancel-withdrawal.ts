import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { merchantScope, scopeFields, withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { moveWithdrawal } from "../withdrawal-moves.js";

const request = z.object({ ...scopeFields, withdrawalId });

/**
 * pending → cancelled, the held amount back to available; repeated, the withdrawal comes
 * back unchanged. The merchant's caller names the merchant (another merchant's withdrawal is
 * not found); an operator cancels any merchant's with all_merchants.
 */
export function cancelWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "cancelWithdrawal"> {
  return {
    async cancelWithdrawal(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const result = await ctx.db.transaction((trx) => moveWithdrawal(trx, ctx.clock, { withdrawalId: input.withdrawalId, merchantId, move: "cancel", idempotent: true, actor: callerAttribution("payout") }));
      if (result.moved) {
        ctx.outbox.nudge();
        ctx.logger.info({ withdrawalId: input.withdrawalId, merchantId: result.row.merchant_id, byOperator: merchantId === undefined }, "withdrawal cancelled");
      }
      return { withdrawal: withdrawalFromRow(result.row) };
    },
  };
}
