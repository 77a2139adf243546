import test from "ava";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { CallbackEventSchema, DeliveryAttemptSchema, DeliveryStatus, TransactionType, type CallbackEvent } from "@payments/contracts/callback";
import { DELIVERY_STATUSES, deliveryStatusName, deliveryStatusToProto, eventRecord, isDeliveryStatusName } from "../src/index.js";

const CHANGED = Date.UTC(2026, 10, 22, 10, 15, 30, 123);
const URL = "https://shop.example/callbacks?k=1";

/** The transaction record a callback body carries; eventRecord passes it on untouched. */
const DATA = {
  transactionId: "dep_abc",
  type: "deposit",
  processId: "order-1",
  amount: 15050,
  status: "completed",
  sequence: 2,
  completedAt: "2026-11-22T10:15:30.123Z",
};

function event(overrides: Partial<CallbackEvent> = {}): CallbackEvent {
  return create(CallbackEventSchema, {
    id: "evt_1",
    merchantId: "m_1",
    type: "deposit.completed",
    transactionType: TransactionType.DEPOSIT,
    transactionId: "dep_abc",
    sequence: 2n,
    deliveryStatus: DeliveryStatus.DELIVERED,
    createdAt: timestampFromMs(CHANGED),
    deliveredAt: timestampFromMs(CHANGED + 5_250),
    bodyJson: JSON.stringify({ id: "evt_1", type: "deposit.completed", createdAt: "2026-11-22T10:15:30.123Z", data: DATA }),
    attempts: [
      create(DeliveryAttemptSchema, { number: 1, attemptedAt: timestampFromMs(CHANGED + 10), url: URL, statusCode: 503, latencyMs: 42, error: "HTTP 503: busy", outcome: "retry" }),
      create(DeliveryAttemptSchema, { number: 2, attemptedAt: timestampFromMs(CHANGED + 5_010), url: "", statusCode: 0, latencyMs: 0, error: "the merchant has no callback URL set", outcome: "retry" }),
      create(DeliveryAttemptSchema, { number: 3, attemptedAt: timestampFromMs(CHANGED + 5_200), url: URL, statusCode: 200, latencyMs: 50, error: "", outcome: "delivered" }),
    ],
    ...overrides,
  });
}

test("an event with attempts becomes the public record: the callback body's fields, its delivery, and every attempt in order", (t) => {
  const record = eventRecord(event());
  t.deepEqual(Object.keys(record), ["id", "type", "createdAt", "data", "deliveryStatus", "nextAttemptAt", "deliveredAt", "attempts"]);
  t.deepEqual(record, {
    id: "evt_1",
    type: "deposit.completed",
    createdAt: "2026-11-22T10:15:30.123Z",
    data: DATA,
    deliveryStatus: "delivered",
    nextAttemptAt: null,
    deliveredAt: "2026-11-22T10:15:35.373Z",
    attempts: [
      { number: 1, attemptedAt: "2026-11-22T10:15:30.133Z", url: URL, statusCode: 503, latencyMs: 42, error: "HTTP 503: busy", outcome: "retry" },
      // No URL and no answer: null, not "" and 0.
      { number: 2, attemptedAt: "2026-11-22T10:15:35.133Z", url: null, statusCode: null, latencyMs: 0, error: "the merchant has no callback URL set", outcome: "retry" },
      // Delivered: no error, null rather than "".
      { number: 3, attemptedAt: "2026-11-22T10:15:35.323Z", url: URL, statusCode: 200, latencyMs: 50, error: null, outcome: "delivered" },
    ],
  });
  for (const attempt of record.attempts) t.deepEqual(Object.keys(attempt), ["number", "attemptedAt", "url", "statusCode", "latencyMs", "error", "outcome"]);
  // Internal fields never show: the merchant id, the transaction type and sequence (data has them as the merchant knows them).
  t.false(JSON.stringify(record).includes("m_1"));
});

test("a pending event waiting for a retry has nextAttemptAt; one never delivered has deliveredAt null and may have no attempts", (t) => {
  const record = eventRecord(event({ deliveryStatus: DeliveryStatus.PENDING, nextAttemptAt: timestampFromMs(CHANGED + 300_000), deliveredAt: undefined, attempts: [] }));
  t.like(record, { deliveryStatus: "pending", nextAttemptAt: "2026-11-22T10:20:30.123Z", deliveredAt: null });
  t.deepEqual(record.attempts, []);
});

test("every delivery status maps to its proto value and back; UNSPECIFIED has no public name", (t) => {
  t.deepEqual([...DELIVERY_STATUSES], ["pending", "delivered", "failed"]);
  for (const name of DELIVERY_STATUSES) {
    t.true(isDeliveryStatusName(name));
    t.is(deliveryStatusName(deliveryStatusToProto(name)), name);
    t.is(eventRecord(event({ deliveryStatus: deliveryStatusToProto(name) })).deliveryStatus, name);
  }
  t.false(isDeliveryStatusName("sent"));
  t.false(isDeliveryStatusName("PENDING"));
  t.throws(() => eventRecord(event({ deliveryStatus: DeliveryStatus.UNSPECIFIED })), { message: /delivery status/ });
});

test("a message the callback-sender never sends (no createdAt, no body, an attempt without its time) throws, naming the event", (t) => {
  t.throws(() => eventRecord(event({ createdAt: undefined })), { message: /event evt_1 has no createdAt/ });
  t.throws(() => eventRecord(event({ bodyJson: "{}" })), { message: /evt_1/ });
  t.throws(() => eventRecord(event({ bodyJson: "" })));
  t.throws(() => eventRecord(event({ attempts: [create(DeliveryAttemptSchema, { number: 1, outcome: "retry" })] })), { message: /attemptedAt/ });
});
