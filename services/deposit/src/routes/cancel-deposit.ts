import { merchantScope, merchantScopeFields, parseRequest } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { moveDeposit } from "../deposit-moves.js";
import { depositId } from "../requests.js";
import { depositFromRow } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({ ...merchantScopeFields, depositId });

export function cancelDeposit(ctx: DepositContext): Rpc<"cancelDeposit"> {
  return {
    async cancelDeposit(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const result = await ctx.db.transaction((trx) =>
        moveDeposit(trx, ctx.clock, {
          depositId: input.depositId,
          merchantId,
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
