import type { CallbackService } from "@payments/contracts/callback";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { CallbackContext } from "../context.js";
import { eventId, scope } from "../requests.js";
import { eventsWithAttempts, getEventRow } from "../store.js";

const request = z.object({ eventId }).and(scope.transform((merchantId) => ({ merchantId })));

/** A merchant's caller (merchant_id) sees only its own events; an operator (all_merchants) any. */
export function getEvent(ctx: CallbackContext): Rpc<typeof CallbackService, "getEvent"> {
  return {
    async getEvent(req) {
      const input = parseRequest(request, req);
      const [event] = await eventsWithAttempts(ctx.db, [await getEventRow(ctx.db, input.eventId, input.merchantId)]);
      return { event };
    },
  };
}
