import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import type { Knex } from "knex";
import { CONSUMER_ACK_WAIT_MS, ensureDatabase, migrate, openDatabase, OUTBOX_LEASE_MS } from "@payments/kit";
import { createTestDatabase, manualClock, type TestDatabase } from "@payments/testing";
import { claimDueAttempts, loadCallbackConfig, migrations, type CallbackContext } from "../src/index.js";
import { storeEvent } from "../src/store.js";

// Callbacks of one transaction reach the merchant in `sequence` order: the claim leaves a
// change alone while an earlier one of its transaction is pending, and waits a bounded time
// for a predecessor not taken in yet. On MariaDB (replicas claim concurrently) and SQLite.

const ORDER_WAIT_MS = 45_000;

function suite(name: string, open: () => Promise<{ db: Knex; close(): Promise<void> }>) {
  const clock = manualClock(new Date("2026-11-26T10:00:00.000Z"));
  let db: Knex;
  let close: () => Promise<void>;
  let n = 0;

  test.before(async () => {
    ({ db, close } = await open());
    await migrate(db, migrations);
  });
  test.after.always(async () => close());

  const ctx = () => ({ db, clock, config: loadCallbackConfig({ CALLBACK_CLAIM_TIMEOUT: "30s", CALLBACK_ORDER_WAIT: `${ORDER_WAIT_MS}ms` }) }) as unknown as CallbackContext;
  const claim = async () => (await claimDueAttempts(ctx(), { limit: 50, fullMerchants: [], merchantRoom: () => 50 })).map((a) => a.eventId);
  const event = async (transactionId: string, sequence: number) => {
    const id = `evt_${name}_${++n}`;
    await storeEvent(db, clock, { id, merchantId: "m1", type: "withdrawal.completed", transactionType: "withdrawal", transactionId, sequence, body: "{}", createdAt: clock.now().getTime() });
    return id;
  };
  /** Each test starts from no events (a claimed one of an earlier test would come due again). */
  const fresh = () => db("callback_events").delete();
  /** Records the attempt's end as the sender would: delivered or failed (the claim's lease no longer matters). */
  const setStatus = (id: string, status: "delivered" | "failed") => db("callback_events").where({ id }).update({ status, in_flight_since: null });

  test.serial(`${name}: a later change waits while an earlier one of the same transaction is pending (due, in flight or retrying); another transaction's does not`, async (t) => {
    await fresh();
    const tx = `wdr_order_${name}_1`;
    const processing = await event(tx, 2);
    const completed = await event(tx, 3);
    const other = await event(`wdr_order_${name}_other`, 3);
    await event(`wdr_order_${name}_other`, 2).then((id) => setStatus(id, "delivered"));
    t.deepEqual((await claim()).sort(), [processing, other].sort(), "the earlier change and the unrelated transaction's go; the later one waits");
    await setStatus(other, "delivered");
    clock.advance(31_000);
    t.deepEqual(await claim(), [processing], "in flight past its lease, retrying: still only the earlier one");
    await setStatus(processing, "delivered");
    t.deepEqual(await claim(), [completed], "once the earlier one is delivered, the later one goes");
  });

  test.serial(`${name}: a failed earlier change holds nothing back`, async (t) => {
    await fresh();
    const tx = `wdr_order_${name}_2`;
    const processing = await event(tx, 2);
    const completed = await event(tx, 3);
    t.deepEqual(await claim(), [processing]);
    await setStatus(processing, "failed");
    t.deepEqual(await claim(), [completed]);
  });

  test.serial(`${name}: a change whose predecessor was never taken in waits CALLBACK_ORDER_WAIT for it, then goes`, async (t) => {
    await fresh();
    const tx = `wdr_order_${name}_3`;
    const completed = await event(tx, 3);
    t.deepEqual(await claim(), [], "sequence 2 is still on its way");
    clock.advance(ORDER_WAIT_MS - 1);
    t.deepEqual(await claim(), []);
    clock.advance(1);
    t.deepEqual(await claim(), [completed], "after the wait it goes rather than never");
  });

  test.serial(`${name}: the predecessor arriving late goes first, then the change that waited for it`, async (t) => {
    await fresh();
    const tx = `wdr_order_${name}_4`;
    const completed = await event(tx, 3);
    t.deepEqual(await claim(), []);
    const processing = await event(tx, 2);
    t.deepEqual(await claim(), [processing]);
    await setStatus(processing, "delivered");
    t.deepEqual(await claim(), [completed]);
  });

  // MySQL only: SQLite has one writer, so no claim runs beside another.
  (name === "mysql" ? test.serial : test.skip)(`${name}: an earlier change locked by another sender's claim right now still holds the later one back, even past CALLBACK_ORDER_WAIT`, async (t) => {
    await fresh();
    const tx = `wdr_order_${name}_6`;
    const processing = await event(tx, 2);
    const completed = await event(tx, 3);
    clock.advance(ORDER_WAIT_MS + 1);
    // Another sender's claim transaction holds the earlier change's row (FOR UPDATE), as while it claims it.
    const rival = await db.transaction();
    try {
      await rival("callback_events").where({ id: processing }).forUpdate().first();
      t.deepEqual(await claim(), [], "neither: the earlier one is locked, the later one must wait for it");
    } finally {
      await rival.rollback();
    }
    t.deepEqual(await claim(), [processing]);
    await setStatus(processing, "delivered");
    t.deepEqual(await claim(), [completed]);
  });

  test.serial(`${name}: the first change of a transaction (sequence 2) never waits`, async (t) => {
    await fresh();
    const first = await event(`dep_order_${name}_5`, 2);
    t.deepEqual(await claim(), [first]);
  });
}

suite("mysql", async () => {
  const database: TestDatabase = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url, readCommitted: true });
  return {
    db,
    async close() {
      await db.destroy();
      await database.drop();
    },
  };
});

suite("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "callback-order-"));
  const db = openDatabase({ sqliteFile: join(dir, "callbacks.sqlite") });
  return {
    db,
    async close() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

test("by default a change waits for a missing predecessor longer than the longest a fault can hold one back: the producer's outbox lease plus JetStream's ack wait", (t) => {
  // The chaos run saw a 45 s wait let withdrawal.completed through before its processing: the
  // processing event sat in a relay's lease (60 s) whose commit a database restart had cut.
  const { CALLBACK_ORDER_WAIT } = loadCallbackConfig({});
  t.true(CALLBACK_ORDER_WAIT > OUTBOX_LEASE_MS + CONSUMER_ACK_WAIT_MS, `${CALLBACK_ORDER_WAIT} ms`);
});
