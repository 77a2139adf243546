import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { identifier, text } from "../requests.js";
import { moveTransferReturn, requireReturnOperatorDecidable, transferReturnFromRow } from "../transfer-returns.js";

const request = z.object({ id: identifier(40), reason: text(100) });

/**
 * An operator's decision: processing → failed with a reason (free text, the column's 100
 * characters), and the transfer_return_failed event in the same transaction, so the deposit
 * service puts the transfer back to unmatched; a new return of it may then be created.
 */
export function failTransferReturn(ctx: PayoutContext): Rpc<typeof PayoutService, "failTransferReturn"> {
  return {
    async failTransferReturn(req) {
      const input = parseRequest(request, req);
      const row = await ctx.db.transaction(async (trx) => {
        await requireReturnOperatorDecidable(trx, ctx, input.id);
        return moveTransferReturn(trx, ctx.clock, { id: input.id, move: "fail", failureReason: input.reason });
      });
      ctx.outbox.nudge();
      ctx.logger.info({ transferReturnId: row.id, transferId: row.transfer_id, reason: input.reason }, "transfer return failed by an operator");
      return { transferReturn: transferReturnFromRow(row) };
    },
  };
}
