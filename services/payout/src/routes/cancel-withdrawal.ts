import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { optionalMerchantId, withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { moveWithdrawal } from "../withdrawal-moves.js";
import type { Rpc } from "./index.js";

const request = z.object({ merchantId: optionalMerchantId, withdrawalId });

/** pending → cancelled, the held amount back to available; repeated, the withdrawal comes back unchanged. */
export function cancelWithdrawal(ctx: PayoutContext): Rpc<"cancelWithdrawal"> {
  return {
    async cancelWithdrawal(req) {
      const input = parseRequest(request, req);
      const result = await ctx.db.transaction((trx) =>
        moveWithdrawal(trx, ctx.clock, { withdrawalId: input.withdrawalId, merchantId: input.merchantId, move: "cancel", idempotent: true }),
      );
      if (result.moved) {
        ctx.outbox.nudge();
        ctx.logger.info({ withdrawalId: input.withdrawalId, merchantId: result.row.merchant_id, byOperator: input.merchantId === undefined }, "withdrawal cancelled");
      }
      return { withdrawal: withdrawalFromRow(result.row) };
    },
  };
}
