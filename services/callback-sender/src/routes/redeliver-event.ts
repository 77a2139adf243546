import type { CallbackService } from "@payments/contracts/callback";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { CallbackContext } from "../context.js";
import { redeliverEvent as redeliver } from "../redelivery.js";
import { eventId, scope } from "../requests.js";
import { eventsWithAttempts } from "../store.js";

const request = z.object({ eventId }).and(scope.transform((merchantId) => ({ merchantId })));

export function redeliverEvent(ctx: CallbackContext): Rpc<typeof CallbackService, "redeliverEvent"> {
  return {
    async redeliverEvent(req) {
      const input = parseRequest(request, req);
      const row = await redeliver(ctx, input.eventId, input.merchantId);
      ctx.logger.info({ eventId: row.id, merchantId: row.merchant_id, by: input.merchantId ? "merchant" : "operator" }, "redelivery requested");
      const [event] = await eventsWithAttempts(ctx.db, [row]);
      return { event };
    },
  };
}
