import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { PayoutService } from "@payments/contracts/payout";
import { identifier, MAX_MODE_FENCE_MS, parseRequest, raiseModeFence, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { merchantId } from "../requests.js";

const request = z.object({ merchantId, fenceId: identifier(64), ttlMs: z.number().int().min(1, "is required").max(MAX_MODE_FENCE_MS, `must be at most ${MAX_MODE_FENCE_MS}`) });

/**
 * Internal (the merchant service's sandbox/live switch): raises the merchant's mode fence, so
 * CreateWithdrawal refuses it MERCHANT_MODE_CHANGING, and says in the same transaction whether
 * the merchant has withdrawals or a balance that is not zero (kit src/mode-fence.ts).
 */
export function raiseModeFenceRoute(ctx: PayoutContext): Rpc<typeof PayoutService, "raiseModeFence"> {
  return {
    async raiseModeFence(req) {
      const input = parseRequest(request, req);
      const raised = await raiseModeFence(ctx.db, { ...input, now: ctx.clock.now().getTime() }, async (trx) => {
        const withdrawal = await trx("withdrawals").where({ merchant_id: input.merchantId }).first<{ id: string } | undefined>("id");
        if (withdrawal) return "the merchant has withdrawals";
        const balances = await trx("balances").where({ merchant_id: input.merchantId }).orderBy("currency").select<Array<{ currency: string; available: number | string; held: number | string }>>("currency", "available", "held");
        const nonZero = balances.filter((b) => Number(b.available) !== 0 || Number(b.held) !== 0).map((b) => b.currency);
        return nonZero.length > 0 ? `the merchant's ${nonZero.join(", ")} balance is not zero` : undefined;
      });
      ctx.logger.info({ merchantId: input.merchantId, fenceId: input.fenceId, blocker: raised.blocker }, "merchant mode fence raised");
      return { blocker: raised.blocker ?? "", expiresAt: timestampFromMs(raised.expiresAt) };
    },
  };
}
