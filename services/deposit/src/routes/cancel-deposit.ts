import { parseRequest } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { moveDeposit } from "../deposit-moves.js";
import { depositId } from "../requests.js";
import { depositFromRow } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({ merchantId: z.string().max(100, "must be at most 100 characters"), depositId });

export function cancelDeposit(ctx: DepositContext): Rpc<"cancelDeposit"> {
  return {
    async cancelDeposit(req) {
      const input = parseRequest(request, req);
      const result = await ctx.db.transaction((trx) =>
        moveDeposit(trx, ctx.clock, {
          depositId: input.depositId,
          merchantId: input.merchantId === "" ? undefined : input.merchantId,
          move: "cancel",
          idempotent: true,
        }),
      );
      if (result.moved) {
        ctx.outbox.nudge();
        ctx.logger.info({ depositId: input.depositId }, "deposit cancelled");
      }
      return { deposit: depositFromRow(result.row) };
    },
  };
}
