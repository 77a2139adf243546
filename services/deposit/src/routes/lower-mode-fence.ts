import type { DepositService } from "@payments/contracts/deposit";
import { identifier, lowerModeFence, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { merchantId } from "../requests.js";

const request = z.object({ merchantId, fenceId: identifier(64), sandbox: z.boolean() });

/** Internal: the merchant service's switch is over; deposits for the merchant are taken again, of the kind it records. */
export function lowerModeFenceRoute(ctx: DepositContext): Rpc<typeof DepositService, "lowerModeFence"> {
  return {
    async lowerModeFence(req) {
      const input = parseRequest(request, req);
      const lowered = await lowerModeFence(ctx.db, { ...input, now: ctx.clock.now().getTime() });
      // A lowered fence may leave cached facts of the other kind: the next deposit asks afresh.
      ctx.merchantCache.invalidate(input.merchantId);
      ctx.logger.info({ merchantId: input.merchantId, fenceId: input.fenceId, sandbox: input.sandbox, lowered }, "merchant mode fence lowered");
      return { lowered };
    },
  };
}
