import type { CallbackService } from "@payments/contracts/callback";
import { optionalTimestamp, parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { CallbackContext } from "../context.js";
import { redeliverFailedEvents as redeliverFailed } from "../redelivery.js";
import { merchantId } from "../requests.js";

const request = z.object({
  merchantId,
  since: optionalTimestamp.refine((v) => v !== undefined, "is required"),
});

export function redeliverFailedEvents(ctx: CallbackContext): Rpc<typeof CallbackService, "redeliverFailedEvents"> {
  return {
    async redeliverFailedEvents(req) {
      const input = parseRequest(request, req);
      const eventIds = await redeliverFailed(ctx, input.merchantId, input.since);
      ctx.logger.info({ merchantId: input.merchantId, since: new Date(input.since).toISOString(), count: eventIds.length }, "failed events redelivered");
      return { count: eventIds.length, eventIds };
    },
  };
}
