import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { requireOperatorDecidable } from "../operator-decision.js";
import { withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { moveWithdrawal } from "../withdrawal-moves.js";
import type { Rpc } from "./index.js";

const request = z.object({ withdrawalId });

/** An operator's decision on a transfer the bank left undecided: processing → completed, the held amount paid out. */
export function completeWithdrawal(ctx: PayoutContext): Rpc<"completeWithdrawal"> {
  return {
    async completeWithdrawal(req) {
      const input = parseRequest(request, req);
      const result = await ctx.db.transaction(async (trx) => {
        await requireOperatorDecidable(trx, ctx, input.withdrawalId);
        return moveWithdrawal(trx, ctx.clock, { withdrawalId: input.withdrawalId, move: "complete" });
      });
      ctx.outbox.nudge();
      ctx.logger.info({ withdrawalId: input.withdrawalId, merchantId: result.row.merchant_id }, "withdrawal completed by an operator");
      return { withdrawal: withdrawalFromRow(result.row) };
    },
  };
}
