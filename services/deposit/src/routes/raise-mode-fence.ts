import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { DepositService } from "@payments/contracts/deposit";
import { identifier, MAX_MODE_FENCE_MS, parseRequest, raiseModeFence, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { merchantId } from "../requests.js";

const request = z.object({ merchantId, fenceId: identifier(64), ttlMs: z.number().int().min(1, "is required").max(MAX_MODE_FENCE_MS, `must be at most ${MAX_MODE_FENCE_MS}`) });

/**
 * Internal (the merchant service's sandbox/live switch): raises the merchant's mode fence, so
 * CreateDeposit refuses it MERCHANT_MODE_CHANGING, and says in the same transaction whether
 * the merchant has deposits (kit src/mode-fence.ts for why that order is safe).
 */
export function raiseModeFenceRoute(ctx: DepositContext): Rpc<typeof DepositService, "raiseModeFence"> {
  return {
    async raiseModeFence(req) {
      const input = parseRequest(request, req);
      const raised = await raiseModeFence(ctx.db, { ...input, now: ctx.clock.now().getTime() }, async (trx) => {
        const deposit = await trx("deposits").where({ merchant_id: input.merchantId }).first<{ id: string } | undefined>("id");
        return deposit ? "the merchant has deposits" : undefined;
      });
      ctx.logger.info({ merchantId: input.merchantId, fenceId: input.fenceId, blocker: raised.blocker }, "merchant mode fence raised");
      return { blocker: raised.blocker ?? "", expiresAt: timestampFromMs(raised.expiresAt) };
    },
  };
}
