import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { requireOperatorDecidable } from "../operator-decision.js";
import { bankReference, withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { moveWithdrawal } from "../withdrawal-moves.js";

const request = z.object({ withdrawalId, bankReference });

/**
 * An operator's decision on a transfer the bank connector left to them (the live manual
 * connector's, or one a bank accepted without deciding): processing → completed, the held
 * amount paid out, and the bank's reference of the transfer kept on the withdrawal (it
 * replaces a reference the connector gave: the operator's is the transfer that happened).
 */
export function completeWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "completeWithdrawal"> {
  return {
    async completeWithdrawal(req) {
      const input = parseRequest(request, req);
      const { result, previousReference } = await ctx.db.transaction(async (trx) => {
        const before = await requireOperatorDecidable(trx, ctx, input.withdrawalId);
        const moved = await moveWithdrawal(trx, ctx.clock, { withdrawalId: input.withdrawalId, move: "complete", patch: { bank_reference: input.bankReference }, actor: callerAttribution("payout") });
        return { result: moved, previousReference: before.bank_reference };
      });
      ctx.outbox.nudge();
      ctx.logger.info(
        { withdrawalId: input.withdrawalId, merchantId: result.row.merchant_id, bankReference: input.bankReference, connectorReference: previousReference ?? undefined },
        "withdrawal completed by an operator",
      );
      return { withdrawal: withdrawalFromRow(result.row) };
    },
  };
}
