import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { requireOperatorDecidable } from "../operator-decision.js";
import { reasonCode, withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { moveWithdrawal } from "../withdrawal-moves.js";

const request = z.object({ withdrawalId, reason: reasonCode });

/** An operator's decision: processing → failed with a reason code, the held amount back to available. */
export function failWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "failWithdrawal"> {
  return {
    async failWithdrawal(req) {
      const input = parseRequest(request, req);
      const result = await ctx.db.transaction(async (trx) => {
        await requireOperatorDecidable(trx, ctx, input.withdrawalId);
        return moveWithdrawal(trx, ctx.clock, { withdrawalId: input.withdrawalId, move: "fail", failureReason: input.reason, actor: callerAttribution("payout") });
      });
      ctx.outbox.nudge();
      ctx.logger.info({ withdrawalId: input.withdrawalId, merchantId: result.row.merchant_id, reason: input.reason }, "withdrawal failed by an operator");
      return { withdrawal: withdrawalFromRow(result.row) };
    },
  };
}
