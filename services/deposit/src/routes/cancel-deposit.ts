import type { DepositService } from "@payments/contracts/deposit";
import { merchantScope, merchantScopeFields, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { moveDeposit } from "../deposit-moves.js";
import { depositId } from "../requests.js";
import { depositFromRow } from "../store.js";

const request = z.object({ ...merchantScopeFields, depositId });

export function cancelDeposit(ctx: DepositContext): Rpc<typeof DepositService, "cancelDeposit"> {
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
