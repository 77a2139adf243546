import type { Client } from "@connectrpc/connect";
import { DeliveryStatus, type CallbackEvent, type CallbackService } from "@payments/contracts/callback";
import type { Clock } from "@payments/kit";
import { DELIVERY_STATUSES, deliveryStatusToProto, eventRecord, isDeliveryStatusName, type EventRecord } from "@payments/records";
import { z } from "zod";
import { success } from "../envelope.js";
import { ApiError, callAboutPathId, callService } from "../errors.js";
import type { RouteContext } from "../state.js";
import { authenticatedMerchantId, ID_MAX, optionalQueryValue, pageLimit, parseInput, queryValue, type Route } from "./route.js";
import { SCOPES } from "../key-scopes.js";

type Callbacks = Pick<Client<typeof CallbackService>, "getEvent" | "listEvents" | "redeliverEvent">;

export type { EventRecord };

export interface EventPage {
  /** Newest first (by the time of the status change, then id). */
  items: EventRecord[];
  /** Opaque; null at the end. */
  nextCursor: string | null;
}

/**
 * The merchant's names of the callback service's request fields, for the VALIDATION_ERROR
 * it returns (its x-error-field is a proto path).
 */
export const EVENT_FIELDS: Readonly<Record<string, string>> = {
  delivery_status: "deliveryStatus",
  transaction_id: "transactionId",
  limit: "limit",
  cursor: "cursor",
};

// Unknown parameters are ignored; a known one given twice is a VALIDATION_ERROR. The cursor is
// the service's to judge (it issued it); the transactionId's length is its limit, stated here
// so the OpenAPI document shows it.
export const listQuery = z.object({
  deliveryStatus: optionalQueryValue.transform((value, ctx) => {
    if (value === undefined || isDeliveryStatusName(value)) return value;
    ctx.addIssue({ code: "custom", message: `must be one of ${DELIVERY_STATUSES.join(", ")}` });
    return z.NEVER;
  }),
  transactionId: queryValue
    .max(ID_MAX, `must be at most ${ID_MAX} characters`)
    .optional()
    .transform((value) => (value === "" ? undefined : value)),
  limit: pageLimit,
  cursor: optionalQueryValue,
});

function event(res: { event?: CallbackEvent }): CallbackEvent {
  if (!res.event) throw new Error("the callback service answered without an event");
  return res.event;
}

/** The merchant reads an event id from a callback's X-Event-Id; one the service cannot even parse is simply not theirs. */
const eventNotFound = () => new ApiError(404, "EVENT_NOT_FOUND", "no event with this id");

/** GET /v1/events, GET /v1/events/{eventId}, POST /v1/events/{eventId}/redeliver: the callback log, from the callback-sender. */
export function events(deps: { callbacks: Callbacks; clock: Clock }): Route[] {
  const answer = (ctx: RouteContext, res: { event?: CallbackEvent }) => {
    ctx.body = success(eventRecord(event(res)), deps.clock);
  };
  const aboutEvent = { fields: EVENT_FIELDS, idField: "event_id", notFound: eventNotFound };

  return [
    {
      method: "GET",
      path: "/v1/events",
      access: "merchant",
      scopes: SCOPES.read,
      handler: async (ctx) => {
        const query = parseInput(listQuery, ctx.query, "query");
        const res = await callService(
          deps.callbacks.listEvents({
            merchantId: authenticatedMerchantId(ctx),
            deliveryStatus: query.deliveryStatus === undefined ? DeliveryStatus.UNSPECIFIED : deliveryStatusToProto(query.deliveryStatus),
            transactionId: query.transactionId ?? "",
            limit: query.limit,
            cursor: query.cursor ?? "",
          }),
          { fields: EVENT_FIELDS },
        );
        const page: EventPage = { items: res.events.map(eventRecord), nextCursor: res.nextCursor === "" ? null : res.nextCursor };
        ctx.body = success(page, deps.clock);
      },
    },
    {
      method: "GET",
      path: "/v1/events/:eventId",
      access: "merchant",
      scopes: SCOPES.read,
      handler: async (ctx) => {
        const eventId = ctx.params.eventId ?? "";
        answer(ctx, await callAboutPathId(deps.callbacks.getEvent({ merchantId: authenticatedMerchantId(ctx), eventId }), aboutEvent));
      },
    },
    {
      method: "POST",
      path: "/v1/events/:eventId/redeliver",
      access: "merchant",
      scopes: SCOPES.read,
      // Like a cancel: nothing to send, so an empty body is fine whatever its Content-Type.
      body: "none",
      handler: async (ctx) => {
        const eventId = ctx.params.eventId ?? "";
        // Any delivery status may be redelivered: delivered and failed come back pending, a pending one is sent now.
        answer(ctx, await callAboutPathId(deps.callbacks.redeliverEvent({ merchantId: authenticatedMerchantId(ctx), eventId }), aboutEvent));
      },
    },
  ];
}
