import type { CallbackService } from "@payments/contracts/callback";
import { newestFirstPage, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { CallbackContext } from "../context.js";
import { cursor, deliveryStatus, limit, optionalTransactionId, scope } from "../requests.js";
import { eventsWithAttempts, type EventRow } from "../store.js";

const request = z.object({ deliveryStatus, transactionId: optionalTransactionId, limit, cursor }).and(scope.transform((merchantId) => ({ merchantId })));

/** Newest first by (created_at, id), the time of the status change; the cursor is the last item's position. */
export function listEvents(ctx: CallbackContext): Rpc<typeof CallbackService, "listEvents"> {
  return {
    async listEvents(req) {
      const input = parseRequest(request, req);
      const query = ctx.db("callback_events");
      if (input.merchantId) query.where({ merchant_id: input.merchantId });
      if (input.deliveryStatus) query.where({ status: input.deliveryStatus });
      if (input.transactionId) query.where({ transaction_id: input.transactionId });
      const page = await newestFirstPage<EventRow>(query, { limit: input.limit, after: input.cursor });
      return { events: await eventsWithAttempts(ctx.db, page.rows), nextCursor: page.nextCursor };
    },
  };
}
