import type { DepositService } from "@payments/contracts/deposit";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { moveDeposit } from "../deposit-moves.js";
import { depositId, text } from "../requests.js";
import { depositFromRow } from "../store.js";

const request = z.object({ depositId, reason: text(500) });

export function rejectDeposit(ctx: DepositContext): Rpc<typeof DepositService, "rejectDeposit"> {
  return {
    async rejectDeposit(req) {
      const input = parseRequest(request, req);
      const result = await ctx.db.transaction((trx) => moveDeposit(trx, ctx.clock, { depositId: input.depositId, move: "fail", failureReason: input.reason }));
      ctx.outbox.nudge();
      ctx.logger.info({ depositId: input.depositId, reason: input.reason }, "deposit rejected by an operator");
      return { deposit: depositFromRow(result.row) };
    },
  };
}
