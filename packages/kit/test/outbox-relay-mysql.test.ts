import test from "ava";
import { Writable } from "node:stream";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import type { Knex } from "knex";
import {
  createLogger,
  outboxMigrations,
  recordEvent,
  startOutboxRelay,
  systemClock,
  type Clock,
  type EventBus,
  type OutboxRelay,
} from "../src/index.js";
import { eventually, manualClock, migratedTestDatabase } from "@payments/testing";

// The relay against the real MySQL/MariaDB: what it locks, how replicas share rows, what a
// lease protects. Each test has a database of its own.

const silent = createLogger({ service: "test", level: "silent" });
const TOPIC = "merchant.v1.merchant_changed";

/** A database of the test's own with the outbox table, as every service's. */
const outboxDatabase = (t: { teardown(fn: () => Promise<void>): void }): Promise<Knex> => migratedTestDatabase(t, outboxMigrations, { readCommitted: false });

function record(db: Knex, change: string, clock: Clock = systemClock): Promise<string> {
  return db.transaction((trx) => recordEvent(trx, clock, TOPIC, MerchantChangedSchema, { merchantId: "mer_1", change }));
}

/**
 * A bus whose publishes wait until the test lets them through: `held` lists them as they
 * arrive, `release()` lets every one waiting (and every later one) succeed.
 */
function gatedBus(): EventBus & { held: string[]; arrived(count: number): Promise<void>; release(): void } {
  const held: string[] = [];
  let open = false;
  const waiting: Array<() => void> = [];
  return {
    kind: "in-process",
    held,
    async publish(_topic, _data, msgId) {
      held.push(msgId);
      if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    async arrived(count) {
      await eventually(() => held.length >= count, `${count} publish(es) at the bus`, 10_000, 10);
    },
    release() {
      open = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
    consume: () => Promise.reject(new Error("not used")),
    consumeBatches: () => Promise.reject(new Error("not used")),
    watch: () => Promise.reject(new Error("not used")),
    close: async () => undefined,
  };
}

/** A bus that records every accepted publish, taking `delayMs` for each. */
function recordingBus(delayMs = 0): EventBus & { published: string[] } {
  const published: string[] = [];
  return {
    kind: "in-process",
    published,
    async publish(_topic, _data, msgId) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      published.push(msgId);
    },
    consume: () => Promise.reject(new Error("not used")),
    consumeBatches: () => Promise.reject(new Error("not used")),
    watch: () => Promise.reject(new Error("not used")),
    close: async () => undefined,
  };
}

/** Resolves to how long `work` took, or rejects once it took longer than `limitMs`. */
async function timed(work: Promise<unknown>, limitMs: number, what: string): Promise<number> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still waiting after ${limitMs} ms`)), limitMs)))]);
  } finally {
    clearTimeout(timer);
  }
  return Date.now() - started;
}

type OutboxRow = { event_id: string; published_at: number | null; attempts: number; last_error: string | null; lease_token: string | null; leased_until: number | null };

async function rowOf(db: Knex, eventId: string): Promise<OutboxRow> {
  return (await db("outbox").where({ event_id: eventId }).first()) as OutboxRow;
}

function stopAll(relays: OutboxRelay[]): Promise<unknown> {
  return Promise.all(relays.map((r) => r.stop()));
}

test("while a publish waits for the bus, a transaction that records an event commits at once", async (t) => {
  const db = await outboxDatabase(t);
  const bus = gatedBus();
  const relay = startOutboxRelay({ db, bus, clock: systemClock, logger: silent, pollMs: 20 });
  t.teardown(async () => {
    bus.release();
    await relay.stop();
  });
  const first = await record(db, "first");
  const second = await record(db, "second");
  relay.nudge();
  await bus.arrived(1);
  t.deepEqual(bus.held, [first]);

  // The relay is inside a publish now, with both rows claimed. Another change records its
  // event (as a deposit cancel does): it must not wait for the bus.
  const took = await timed(record(db, "third"), 3_000, "the third event's transaction");
  t.true(took < 500, `the transaction took ${took} ms`);
  // Nor are the claimed rows locked meanwhile.
  const touched = await timed(db("outbox").where({ event_id: second }).update({ last_error: null }), 3_000, "an update of a claimed row");
  t.true(touched < 500, `the update took ${touched} ms`);

  bus.release();
  await relay.flush();
  t.is(Number((await db("outbox").whereNull("published_at").count({ n: "*" }))[0]?.n), 0);
});

test("two relays on one table publish every row exactly once, while rows keep arriving", async (t) => {
  const db = await outboxDatabase(t);
  const bus = recordingBus(2);
  const relays = [0, 1].map(() => startOutboxRelay({ db, bus, clock: systemClock, logger: silent, pollMs: 5, batchSize: 4 }));
  t.teardown(() => stopAll(relays));
  const ids: string[] = [];
  // Eight writers, ten events each, nudging both relays after every commit, as services do.
  await Promise.all(
    Array.from({ length: 8 }, async (_, writer) => {
      for (let i = 0; i < 10; i++) {
        ids.push(await record(db, `w${writer}-${i}`));
        relays.forEach((r) => r.nudge());
      }
    }),
  );
  await eventually(async () => Number((await db("outbox").whereNull("published_at").count({ n: "*" }))[0]?.n) === 0, "every row published", 10_000, 10);
  await stopAll(relays);
  const counts = new Map<string, number>();
  for (const id of bus.published) counts.set(id, (counts.get(id) ?? 0) + 1);
  t.is(counts.size, ids.length);
  t.deepEqual(
    [...counts].filter(([, n]) => n !== 1),
    [],
    "no row published twice",
  );
  t.deepEqual([...counts.keys()].sort(), [...ids].sort());
  const leftovers = await db("outbox").whereNotNull("lease_token").count({ n: "*" });
  t.is(Number(leftovers[0]?.n), 0, "no lease left behind");
});

test("a lease that runs out (its relay died mid-publish) lets another relay publish the row", async (t) => {
  const db = await outboxDatabase(t);
  const clock = manualClock();
  const hung = gatedBus();
  const dying = startOutboxRelay({ db, bus: hung, clock, logger: silent, pollMs: 60_000, leaseMs: 30_000 });
  const bus = recordingBus();
  const other = startOutboxRelay({ db, bus, clock, logger: silent, pollMs: 60_000, leaseMs: 30_000 });
  t.teardown(async () => {
    hung.release();
    await stopAll([dying, other]);
  });
  const id = await record(db, "stuck", clock);
  dying.nudge();
  await hung.arrived(1);

  await other.flush();
  t.deepEqual(bus.published, [], "the lease keeps the row from a second relay while it lasts");
  clock.advance(30_001);
  await other.flush();
  t.deepEqual(bus.published, [id], "after the lease, another relay publishes it");
  const row = await rowOf(db, id);
  t.truthy(row.published_at);
  t.is(row.lease_token, null);
});

test("a relay whose lease was taken over does not mark the row published; the new holder does", async (t) => {
  const db = await outboxDatabase(t);
  const clock = manualClock();
  const slow = gatedBus();
  const stale = startOutboxRelay({ db, bus: slow, clock, logger: silent, pollMs: 60_000, leaseMs: 30_000 });
  const current = gatedBus();
  const holder = startOutboxRelay({ db, bus: current, clock, logger: silent, pollMs: 60_000, leaseMs: 30_000 });
  t.teardown(async () => {
    slow.release();
    current.release();
    await stopAll([stale, holder]);
  });
  const id = await record(db, "contended", clock);
  stale.nudge();
  await slow.arrived(1);
  const staleLease = (await rowOf(db, id)).lease_token;
  t.truthy(staleLease);

  clock.advance(30_001);
  holder.nudge();
  await current.arrived(1);
  const holderLease = (await rowOf(db, id)).lease_token;
  t.truthy(holderLease);
  t.not(holderLease, staleLease);

  // The stale relay's publish finally returns: the row is not its to mark any more.
  slow.release();
  await stale.flush();
  const meanwhile = await rowOf(db, id);
  t.is(meanwhile.published_at, null, "not marked by the relay that lost the lease");
  t.is(meanwhile.lease_token, holderLease, "the holder's lease is untouched");

  current.release();
  await holder.flush();
  const after = await rowOf(db, id);
  t.truthy(after.published_at, "marked by the lease holder");
  t.is(after.lease_token, null);
  t.deepEqual([...slow.held, ...current.held], [id, id], "at least once: both sent it, with the same Nats-Msg-Id");
});

test("a failing publish hands the rows back, keeps them in order, backs off, and warns once per streak", async (t) => {
  const db = await outboxDatabase(t);
  const warnings: string[] = [];
  const logger = createLogger({
    service: "test",
    level: "info",
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        const line = JSON.parse(chunk.toString()) as { level: string; msg: string };
        if (line.level === "warn" || line.level === "error") warnings.push(line.msg);
        done();
      },
    }),
  });
  let down = true;
  const attempts: string[] = [];
  const bus: EventBus = {
    ...recordingBus(),
    async publish(_topic, _data, msgId) {
      attempts.push(msgId);
      if (down) throw new Error("nats: disconnected");
    },
  };
  const ids = [await record(db, "a"), await record(db, "b"), await record(db, "c")];
  const relay = startOutboxRelay({ db, bus, clock: systemClock, logger, pollMs: 20, maxBackoffMs: 1_000 });
  t.teardown(() => relay.stop());
  await new Promise((resolve) => setTimeout(resolve, 700));
  for (let i = 0; i < 20; i++) relay.nudge(); // commits during an outage do not cut the pause short

  // Without a back-off a 20 ms poll tries about 35 times in 700 ms; doubling from 20 ms, at most 6.
  t.true(attempts.length >= 2 && attempts.length <= 6, `${attempts.length} attempts`);
  t.true(
    attempts.every((id) => id === ids[0]),
    "later rows wait for the first",
  );
  // One more try on demand (flush ignores the pause), awaited, so no attempt is half-recorded.
  await relay.flush();
  const first = await rowOf(db, ids[0]!);
  t.is(first.attempts, attempts.length);
  t.is(first.last_error, "nats: disconnected");
  t.is(first.published_at, null);
  t.is(Number((await db("outbox").whereNotNull("lease_token").count({ n: "*" }))[0]?.n), 0, "no row stays leased after a failure");
  t.deepEqual(warnings, ["outbox publish failed; retrying with back-off until it succeeds"], "one warning for the whole streak");

  down = false;
  await relay.flush();
  t.deepEqual(attempts.slice(-3), ids, "in order once the bus is back");
  t.is(Number((await db("outbox").whereNull("published_at").count({ n: "*" }))[0]?.n), 0);
});
