import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import {
  CallbackEventSchema,
  DeliveryAttemptSchema,
  TransactionType,
  type DeliveryStatus,
  type CallbackEvent,
  type DeliveryAttempt,
} from "@payments/contracts/callback";
import { currentRequestId, currentTraceparent, isUniqueViolation, serviceError, type Clock } from "@payments/kit";
import { deliveryStatusFromProto as fromProto, deliveryStatusToProto, type DeliveryStatusName } from "@payments/contracts/statuses";
import type { Knex } from "knex";
import type { NewCallbackEvent } from "./callback-event.js";

export type { DeliveryStatusName };
export type AttemptOutcome = "delivered" | "retry" | "failed" | "lost";

export interface EventRow {
  id: string;
  merchant_id: string;
  type: string;
  transaction_type: "deposit" | "withdrawal";
  transaction_id: string;
  sequence: number | string;
  body: string;
  status: DeliveryStatusName;
  attempts: number;
  round_attempts: number;
  next_attempt_at: number | string | null;
  in_flight_since: number | string | null;
  created_at: number | string;
  received_at: number | string;
  delivered_at: number | string | null;
  updated_at: number | string;
}

export interface AttemptRow {
  event_id: string;
  number: number;
  attempted_at: number | string;
  url: string;
  status_code: number;
  latency_ms: number;
  error: string;
  outcome: AttemptOutcome;
}

/** The most attempts one event shows (the newest); redeliveries can add rounds without end. */
export const ATTEMPTS_SHOWN = 100;

/** The stored name of a proto status; undefined for UNSPECIFIED or an unknown number. */
export const deliveryStatusFromProto: (status: DeliveryStatus) => DeliveryStatusName | undefined = fromProto;

export function eventNotFound(eventId: string) {
  return serviceError(Code.NotFound, "EVENT_NOT_FOUND", `event ${eventId} not found`);
}

/**
 * The row of a new event: pending and due now, or, with `claim`, already claimed by the
 * sender taking it in (its first attempt under way until `leaseUntil`, as a claim leaves it).
 * `traceparent` and `requestId` are those of the ingest: the sender's attempts continue them.
 */
export function eventRowOf(
  event: NewCallbackEvent,
  now: number,
  options: { traceparent: string | null; requestId: string | null; claim?: { leaseUntil: number } },
): Record<string, unknown> {
  return {
    id: event.id,
    merchant_id: event.merchantId,
    type: event.type,
    transaction_type: event.transactionType,
    transaction_id: event.transactionId,
    sequence: event.sequence,
    body: event.body,
    status: "pending",
    attempts: options.claim ? 1 : 0,
    round_attempts: options.claim ? 1 : 0,
    next_attempt_at: options.claim ? options.claim.leaseUntil : now,
    in_flight_since: options.claim ? now : null,
    created_at: event.createdAt,
    received_at: now,
    delivered_at: null,
    updated_at: now,
    traceparent: options.traceparent,
    request_id: options.requestId,
  };
}

/**
 * Stores a new event as pending and due now, outside any batch (tests, tools). false when it
 * is already stored: the bus delivers at least once, and a replica may have taken it first.
 */
export async function storeEvent(db: Knex, clock: Clock, event: NewCallbackEvent): Promise<boolean> {
  try {
    await db("callback_events").insert(eventRowOf(event, clock.now().getTime(), { traceparent: currentTraceparent() ?? null, requestId: currentRequestId() ?? null }));
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** One event of a merchant (any merchant when merchantId is undefined), or EVENT_NOT_FOUND. */
export async function getEventRow(db: Knex, eventId: string, merchantId: string | undefined): Promise<EventRow> {
  const query = db<EventRow>("callback_events").where({ id: eventId });
  if (merchantId !== undefined) query.where({ merchant_id: merchantId });
  const row = await query.first();
  if (!row) throw eventNotFound(eventId);
  return row;
}

/** The attempts of each event, oldest first, at most ATTEMPTS_SHOWN (the newest) each. */
export async function attemptsOf(db: Knex, eventIds: readonly string[]): Promise<Map<string, AttemptRow[]>> {
  const byEvent = new Map<string, AttemptRow[]>(eventIds.map((id) => [id, []]));
  if (eventIds.length === 0) return byEvent;
  const rows = await db<AttemptRow>("callback_attempts")
    .whereIn("event_id", [...eventIds])
    .orderBy([{ column: "event_id" }, { column: "number" }]);
  for (const row of rows) byEvent.get(row.event_id)?.push(row);
  for (const [id, attempts] of byEvent) if (attempts.length > ATTEMPTS_SHOWN) byEvent.set(id, attempts.slice(-ATTEMPTS_SHOWN));
  return byEvent;
}

function time(value: number | string | null) {
  return value === null ? undefined : timestampFromMs(Number(value));
}

export function attemptFromRow(row: AttemptRow): DeliveryAttempt {
  return create(DeliveryAttemptSchema, {
    number: Number(row.number),
    attemptedAt: time(row.attempted_at),
    url: row.url,
    statusCode: Number(row.status_code),
    latencyMs: Number(row.latency_ms),
    error: row.error,
    outcome: row.outcome,
  });
}

export function eventFromRow(row: EventRow, attempts: readonly AttemptRow[]): CallbackEvent {
  return create(CallbackEventSchema, {
    id: row.id,
    merchantId: row.merchant_id,
    type: row.type,
    transactionType: row.transaction_type === "deposit" ? TransactionType.DEPOSIT : TransactionType.WITHDRAWAL,
    transactionId: row.transaction_id,
    sequence: BigInt(row.sequence),
    deliveryStatus: deliveryStatusToProto(row.status),
    createdAt: time(row.created_at),
    // While an attempt is under way next_attempt_at is its lease, not a planned attempt.
    nextAttemptAt: row.status === "pending" && row.in_flight_since === null ? time(row.next_attempt_at) : undefined,
    deliveredAt: time(row.delivered_at),
    bodyJson: row.body,
    attempts: attempts.map(attemptFromRow),
  });
}

/** Rows as messages, each with its attempts, in one query for all the attempts. */
export async function eventsWithAttempts(db: Knex, rows: readonly EventRow[]): Promise<CallbackEvent[]> {
  const attempts = await attemptsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => eventFromRow(row, attempts.get(row.id) ?? []));
}
