import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { bankReference, identifier } from "../requests.js";
import { moveTransferReturn, requireReturnOperatorDecidable, transferReturnFromRow } from "../transfer-returns.js";

const request = z.object({ id: identifier(40), bankReference });

/**
 * An operator's decision on a return the connector left to them (the live manual connector's):
 * processing → completed with the bank's reference of the payment (it replaces a connector's:
 * the operator's is the transfer that happened), and the transfer_return_completed event in the
 * same transaction, so the deposit service marks the transfer returned.
 */
export function completeTransferReturn(ctx: PayoutContext): Rpc<typeof PayoutService, "completeTransferReturn"> {
  return {
    async completeTransferReturn(req) {
      const input = parseRequest(request, req);
      const row = await ctx.db.transaction(async (trx) => {
        await requireReturnOperatorDecidable(trx, ctx, input.id);
        return moveTransferReturn(trx, ctx.clock, { id: input.id, move: "complete", patch: { bank_reference: input.bankReference } });
      });
      ctx.outbox.nudge();
      ctx.logger.info({ transferReturnId: row.id, transferId: row.transfer_id, bankReference: input.bankReference }, "transfer return completed by an operator");
      return { transferReturn: transferReturnFromRow(row) };
    },
  };
}
