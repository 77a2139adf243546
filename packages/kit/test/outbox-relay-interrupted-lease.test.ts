import test from "ava";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import type { Knex } from "knex";
import { createLogger, ensureDatabase, InProcessBus, migrate, openDatabase, OUTBOX_LEASE_MS, outboxMigrations, recordEvent, startOutboxRelay, systemClock } from "../src/index.js";
import { eventuallyAt, startMariadbServer } from "@payments/testing";

// Issue 21 (the chaos run found it): a relay that cannot write the end of its lease (the
// database restarting under its claim's COMMIT, or under the mark that follows the publish)
// left the rows leased to a token nobody works on, for the whole lease, and with them
// every later change of their transactions waited at the consumers. Now the relay hands such
// leases back as soon as the database answers again. A MariaDB of this test's own (stopped
// and started); the in-process bus, whose consumer holds the publish until the test has
// stopped the database.

const silent = createLogger({ service: "test", level: "silent" });
const TOPIC = "merchant.v1.merchant_changed";

function record(db: Knex, change: string): Promise<string> {
  return db.transaction((trx) => recordEvent(trx, systemClock, TOPIC, MerchantChangedSchema, { merchantId: "mer_1", change }));
}

test("rows whose lease could not be ended while the database restarted are published within seconds of its return, not after the lease", async (t) => {
  const mariadb = await startMariadbServer();
  const url = mariadb.url("outbox");
  await ensureDatabase(url);
  const db = openDatabase({ url });
  await migrate(db, outboxMigrations);
  const bus = new InProcessBus(silent);
  let releaseFirst: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (releaseFirst = resolve));
  let reachedConsumer: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (reachedConsumer = resolve));
  const seen: string[] = [];
  await bus.consume("test", [TOPIC], async (message) => {
    if (seen.length === 0) {
      reachedConsumer();
      await held;
    }
    seen.push(message.msgId);
  });
  const relay = startOutboxRelay({ db, bus, clock: systemClock, logger: silent, pollMs: 50 });
  t.teardown(async () => {
    await relay.stop().catch(() => undefined);
    await db.destroy();
    await mariadb.destroy();
  });
  const events = [await record(db, "first"), await record(db, "second")];
  relay.nudge();

  // The relay holds its lease and is publishing the first row; the database goes away under it.
  await reached;
  await mariadb.stop();
  releaseFirst();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await mariadb.start();
  const back = Date.now();

  const doneAt = await eventuallyAt(
    async () => (await db("outbox").whereIn("event_id", events).whereNull("published_at").first("seq").catch(() => ({ seq: 0 }))) === undefined,
    "every row published after the database came back",
    OUTBOX_LEASE_MS + 10_000,
    50,
  );
  t.log(`published ${doneAt - back} ms after the database came back (the lease: ${OUTBOX_LEASE_MS} ms)`);
  t.true(doneAt - back < Math.min(5_000, OUTBOX_LEASE_MS / 2), "handed back when the database answered, not when the lease ran out");
  t.deepEqual([...new Set(seen)].sort(), [...events].sort(), "each event reached the consumer (a row published but not marked goes again: consumers are idempotent on the id)");
});
