import test from "ava";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { WithdrawalStatus, WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { createLogger, createMetrics, type BatchMessage } from "@payments/kit";
import { manualClock, migratedTestDatabase } from "@payments/testing";
import type { Knex } from "knex";
import { claimableAtIngest, loadCallbackConfig, migrations, type CallbackContext, type ClaimedAttempt } from "../src/index.js";
import { takeIn } from "../src/ingest.js";
import { createAttemptRecorder, type SenderSlots } from "../src/sender.js";

// Issue 22: the ingest stores what arrived in one transaction and claims, as it stores them,
// the events that may go now; answers are recorded together. The rules of order and of the
// merchants' slots are the sender's, kept exactly.

const STATUS = { 2: WithdrawalStatus.PROCESSING, 3: WithdrawalStatus.COMPLETED } as const;
const TOPIC = { 2: "payout.v1.withdrawal_processing", 3: "payout.v1.withdrawal_completed" } as const;

function message(eventId: string, withdrawalId: string, sequence: 2 | 3, merchantId = "mer_1", requestId?: string): BatchMessage {
  const at = timestampFromMs(Date.parse("2026-11-26T10:00:00.000Z"));
  const data = toBinary(
    WithdrawalStatusChangedSchema,
    create(WithdrawalStatusChangedSchema, {
      eventId,
      occurredAt: at,
      withdrawal: { id: withdrawalId, merchantId, processId: `p-${withdrawalId}`, amount: 500n, currency: "TRY", status: STATUS[sequence], sequence: BigInt(sequence), createdAt: at, updatedAt: at },
    }),
  );
  return { topic: TOPIC[sequence], data, msgId: eventId, deliveryCount: 1, ...(requestId ? { requestId } : {}) };
}

/** Slots as the sender keeps them, counting what the ingest did with them. */
class CountingSlots implements SenderSlots {
  reserved = 0;
  released = 0;
  readonly sent: ClaimedAttempt[] = [];
  constructor(private free: number) {}
  reserve(): boolean {
    if (this.free <= 0) return false;
    this.free--;
    this.reserved++;
    return true;
  }
  release(): void {
    this.free++;
    this.released++;
  }
  send(attempt: ClaimedAttempt): void {
    this.sent.push(attempt);
  }
}

function context(db: Knex): CallbackContext {
  return {
    db,
    clock: manualClock(new Date("2026-11-26T10:00:05.000Z")),
    config: loadCallbackConfig({ CALLBACK_CLAIM_TIMEOUT: "30s" }),
    metrics: createMetrics(),
    logger: createLogger({ service: "ingest-test", level: "silent" }),
  } as unknown as CallbackContext;
}

/** Every statement the database is sent meanwhile. */
function statements(db: Knex): { sql: string[]; stop(): void } {
  const sql: string[] = [];
  const listener = (q: { sql: string }) => void sql.push(q.sql.toLowerCase());
  db.on("query", listener);
  return { sql, stop: () => void db.removeListener("query", listener) };
}

test("claimableAtIngest: the first callback goes unless an earlier change is pending; a later one needs its predecessor known and nothing earlier pending", (t) => {
  t.true(claimableAtIngest({ sequence: 2 }, []));
  t.true(claimableAtIngest({ sequence: 3 }, [{ sequence: 2, status: "delivered" }]));
  t.true(claimableAtIngest({ sequence: 3 }, [{ sequence: 2, status: "failed" }]));
  t.false(claimableAtIngest({ sequence: 3 }, [{ sequence: 2, status: "pending" }]), "its predecessor still pending");
  t.false(claimableAtIngest({ sequence: 3 }, []), "its predecessor not taken in yet");
  t.false(claimableAtIngest({ sequence: 4 }, [{ sequence: 2, status: "pending" }, { sequence: 3, status: "delivered" }]), "an earlier one pending");
  t.true(claimableAtIngest({ sequence: 4 }, [{ sequence: 2, status: "delivered" }, { sequence: 3, status: "failed" }]));
  t.false(claimableAtIngest({ sequence: 4 }, [{ sequence: 2, status: "delivered" }]), "a gap: 3 not known");
  t.true(claimableAtIngest({ sequence: 2 }, [{ sequence: 3, status: "pending" }]), "a later one pending holds nothing back");
});

test("a batch is stored in one INSERT, in one transaction, and what may go is stored claimed and sent: no claim query", async (t) => {
  const db = await migratedTestDatabase(t, migrations);
  const ctx = context(db);
  const slots = new CountingSlots(100);
  const woken: string[] = [];
  const batch = Array.from({ length: 20 }, (_, i) => message(`evt_${i}`, `wd_${i}`, 2, `mer_${i % 3}`, `req-${i}`));
  const seen = statements(db);
  const result = await takeIn(ctx, batch, slots, (ids) => void woken.push(...ids));
  seen.stop();
  t.is(result.stored.length, 20);
  t.is(result.claimed.length, 20);
  t.is(seen.sql.filter((s) => s.startsWith("insert into `callback_events`")).length, 1, seen.sql.join("\n"));
  t.is(seen.sql.filter((s) => s.includes("skip locked")).length, 0, "no claim");
  t.true(seen.sql.length <= 4, `BEGIN, the read of the batch's transactions, the INSERT, COMMIT: ${seen.sql.join(" | ")}`);
  t.is(slots.sent.length, 20);
  t.deepEqual(woken, []);
  const rows = await db("callback_events").orderBy("id");
  t.true(
    rows.every((r: { attempts: number; in_flight_since: unknown; next_attempt_at: unknown }) => Number(r.attempts) === 1 && Number(r.in_flight_since) === Date.parse("2026-11-26T10:00:05.000Z") && Number(r.next_attempt_at) === Date.parse("2026-11-26T10:00:35.000Z")),
    "claimed as a claim leaves an event: first attempt under way, leased for CALLBACK_CLAIM_TIMEOUT",
  );
  t.is(slots.sent.find((a) => a.eventId === "evt_7")!.requestId, "req-7", "each event keeps its request id");
  t.like(slots.sent.find((a) => a.eventId === "evt_7"), { number: 1, roundNumber: 1, transactionId: "wd_7", merchantId: "mer_1" });
});

test("in sequence order: a change whose predecessor is in the same batch, or still pending, is stored unclaimed and the sender is woken for its transaction", async (t) => {
  const db = await migratedTestDatabase(t, migrations);
  const ctx = context(db);
  const slots = new CountingSlots(100);
  const woken: string[] = [];
  // A later change first in the batch: order within the batch does not matter.
  const first = await takeIn(ctx, [message("evt_b3", "wd_b", 3), message("evt_b2", "wd_b", 2), message("evt_c3", "wd_c", 3)], slots, (ids) => void woken.push(...ids));
  t.deepEqual(first.claimed, ["evt_b2"]);
  t.deepEqual(first.stored.sort(), ["evt_b2", "evt_b3", "evt_c3"]);
  t.deepEqual(woken.sort(), ["wd_b", "wd_c"]);
  const b3: unknown = await db("callback_events").where({ id: "evt_b3" }).first();
  t.like(b3, { status: "pending", attempts: 0, in_flight_since: null });
  // The predecessor delivered: a later change taken in now goes at once.
  await db("callback_events").where({ id: "evt_b2" }).update({ status: "delivered", in_flight_since: null });
  await takeIn(ctx, [message("evt_c2", "wd_c", 2)], slots, () => undefined);
  const again = await takeIn(ctx, [message("evt_d2", "wd_d", 2), message("evt_b3", "wd_b", 3)], slots, () => undefined);
  t.deepEqual(again.stored, ["evt_d2"], "an event already stored is left as it is");
  t.deepEqual(again.claimed, ["evt_d2"]);
});

test("no free slot, or no sender in this process: stored due now, unclaimed, and the slots add up", async (t) => {
  const db = await migratedTestDatabase(t, migrations);
  const ctx = context(db);
  const slots = new CountingSlots(2);
  const woken: string[] = [];
  const result = await takeIn(
    ctx,
    [1, 2, 3, 4].map((i) => message(`evt_${i}`, `wd_${i}`, 2)),
    slots,
    (ids) => void woken.push(...ids),
  );
  t.is(result.claimed.length, 2);
  t.is(woken.length, 2);
  t.is(slots.reserved - slots.released, slots.sent.length);
  const none = await takeIn(ctx, [message("evt_9", "wd_9", 2)], undefined, () => undefined);
  t.deepEqual(none.claimed, []);
  t.like(await db("callback_events").where({ id: "evt_9" }).first(), { attempts: 0, in_flight_since: null });
});

test("a batch that fails gives its slots back and stores nothing; the same event twice in a batch is stored once", async (t) => {
  const db = await migratedTestDatabase(t, migrations);
  const ctx = context(db);
  const slots = new CountingSlots(10);
  const twice = await takeIn(ctx, [message("evt_x", "wd_x", 2), message("evt_x", "wd_x", 2)], slots, () => undefined);
  t.deepEqual(twice.stored, ["evt_x"]);
  // Another replica stores the event and commits between this batch's read and its INSERT:
  // the INSERT fails (the bus then hands the messages over one by one), nothing of the batch stays.
  const other = await db.transaction();
  await other("callback_events").insert({ id: "evt_y", merchant_id: "mer_1", type: "withdrawal.processing", transaction_type: "withdrawal", transaction_id: "wd_y", sequence: 2, body: "{}", status: "pending", attempts: 0, round_attempts: 0, next_attempt_at: 0, created_at: 0, received_at: 0, updated_at: 0 });
  const before = { reserved: slots.reserved, released: slots.released, sent: slots.sent.length };
  const taking = takeIn(ctx, [message("evt_y", "wd_y", 2), message("evt_z", "wd_z", 2)], slots, () => undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await other.commit();
  await t.throwsAsync(taking);
  t.is(slots.reserved - before.reserved, slots.released - before.released, "every slot it reserved given back");
  t.is(slots.sent.length, before.sent);
  t.is(await db("callback_events").where({ id: "evt_z" }).first(), undefined, "nothing of the failed batch stored");
  const alone = await takeIn(ctx, [message("evt_z", "wd_z", 2)], slots, () => undefined);
  t.deepEqual(alone.stored, ["evt_z"]);
});

test("answers that come together are recorded together: the first at once, the rest in one more transaction, each with its own outcome", async (t) => {
  const db = await migratedTestDatabase(t, migrations);
  const ctx = context(db);
  const slots = new CountingSlots(100);
  await takeIn(
    ctx,
    Array.from({ length: 12 }, (_, i) => message(`evt_${i}`, `wd_${i}`, 2)),
    slots,
    () => undefined,
  );
  const record = createAttemptRecorder(ctx);
  const seen = statements(db);
  const outcomes = await Promise.all(
    slots.sent.map((attempt, i) =>
      record(attempt, {
        url: "https://shop.example/hooks",
        result: i % 4 === 3 ? { delivered: false, statusCode: 500, latencyMs: 3, error: "HTTP 500" } : { delivered: true, statusCode: 200, latencyMs: 2, error: "" },
      }),
    ),
  );
  seen.stop();
  t.deepEqual(
    outcomes,
    slots.sent.map((_, i) => (i % 4 === 3 ? "retry" : "delivered")),
  );
  t.is(seen.sql.filter((s) => s.startsWith("insert into `callback_attempts`")).length, 2, "two records: the first answer alone, the other eleven together");
  const rows = (await db("callback_events").orderBy("id")) as Array<{ id: string; status: string; in_flight_since: unknown; next_attempt_at: unknown }>;
  const failedIds = new Set(slots.sent.filter((_, i) => i % 4 === 3).map((a) => a.eventId));
  for (const row of rows) {
    if (failedIds.has(row.id)) t.like(row, { status: "pending", in_flight_since: null }, `${row.id} due again`);
    else t.like(row, { status: "delivered", in_flight_since: null, next_attempt_at: null }, `${row.id} delivered`);
  }
  t.is((await db("callback_attempts").count({ n: "*" }).first())!.n as number, 12);
});

test("a record by a claim whose lease ran out keeps only its attempt row; the event stays with its new claim", async (t) => {
  const db = await migratedTestDatabase(t, migrations);
  const ctx = context(db);
  const slots = new CountingSlots(10);
  await takeIn(ctx, [message("evt_l", "wd_l", 2), message("evt_m", "wd_m", 2)], slots, () => undefined);
  const [stale, fresh] = slots.sent as [ClaimedAttempt, ClaimedAttempt];
  // Another sender took evt_l over after the lease: attempt 2 under way.
  await db("callback_events").where({ id: stale.eventId }).update({ attempts: 2, in_flight_since: stale.claimedAt + 31_000 });
  const record = createAttemptRecorder(ctx);
  const ok = { url: "https://shop.example/hooks", result: { delivered: true, statusCode: 200, latencyMs: 1, error: "" } };
  await Promise.all([record(stale, ok), record(fresh, ok)]);
  t.like(await db("callback_events").where({ id: stale.eventId }).first(), { status: "pending", attempts: 2 });
  t.like(await db("callback_events").where({ id: fresh.eventId }).first(), { status: "delivered" });
  t.is((await db("callback_attempts").where({ event_id: stale.eventId }).count({ n: "*" }).first())!.n as number, 1);
});
