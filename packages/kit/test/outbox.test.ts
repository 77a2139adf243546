import test from "ava";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import {
  createLogger,
  ensureDatabase,
  InProcessBus,
  JetStreamBus,
  migrate,
  openDatabase,
  outboxMigrations,
  recordEvent,
  startOutboxRelay,
  systemClock,
  topicMatches,
  type BusMessage,
  type EventBus,
} from "../src/index.js";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv } from "@payments/testing";

const logger = createLogger({ service: "test", level: "silent" });

test("topic filters follow NATS wildcards", (t) => {
  t.true(topicMatches("merchant.v1.>", "merchant.v1.merchant_changed"));
  t.true(topicMatches("*.v1.merchant_changed", "merchant.v1.merchant_changed"));
  t.false(topicMatches("merchant.v1.*", "merchant.v2.x"));
  t.false(topicMatches("merchant.>", "merchant"));
  t.false(topicMatches("a.b", "a.b.c"));
});

async function recordThree(db: ReturnType<typeof openDatabase>) {
  const ids: string[] = [];
  await db.transaction(async (trx) => {
    for (const change of ["created", "status", "sandbox"]) {
      ids.push(await recordEvent(trx, systemClock, "merchant.v1.merchant_changed", MerchantChangedSchema, { merchantId: "mer_1", change }));
    }
  });
  return ids;
}

async function collect(bus: EventBus, durable: string, count: number): Promise<BusMessage[]> {
  const got: BusMessage[] = [];
  return new Promise((resolve) => {
    void bus.consume(durable, ["merchant.v1.>"], async (m) => {
      got.push(m);
      if (got.length === count) resolve(got);
    });
  });
}

test("events recorded in a transaction reach JetStream once each, in order, from MySQL", async (t) => {
  const database = await createTestDatabase();
  const env = jetStreamTestEnv();
  t.teardown(async () => {
    await database.drop();
    await deleteTestStream(env);
  });
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  await migrate(db, outboxMigrations);
  const bus = await JetStreamBus.connect({ url: env.NATS_URL, stream: env.NATS_STREAM, subjectPrefix: env.NATS_SUBJECT_PREFIX });
  const received = collect(bus, "test-consumer", 3);
  // Two relays, as with two replicas: each leases its own rows (SKIP LOCKED), the bus deduplicates.
  const relays = [0, 1].map(() => startOutboxRelay({ db, bus, clock: systemClock, logger, pollMs: 20 }));
  const ids = await recordThree(db);
  relays.forEach((r) => r.nudge());
  const messages = await received;
  t.deepEqual(
    messages.map((m) => m.msgId),
    ids,
  );
  t.deepEqual(
    messages.map((m) => fromBinary(MerchantChangedSchema, m.data).change),
    ["created", "status", "sandbox"],
  );
  for (const r of relays) await r.stop();
  const pending = await db("outbox").whereNull("published_at").count({ n: "*" });
  t.is(Number(pending[0]?.n), 0);
  await bus.close();
  await db.destroy();
});

test("in-process bus keeps an outbox row until the consumer succeeds (SQLite)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "outbox-"));
  const db = openDatabase({ sqliteFile: join(dir, "svc.sqlite") });
  t.teardown(() => db.destroy());
  await migrate(db, outboxMigrations);
  const bus = new InProcessBus(logger);
  let failures = 1;
  const seen: string[] = [];
  await bus.consume("c", ["merchant.v1.>"], async (m) => {
    if (failures-- > 0) throw new Error("consumer down");
    seen.push(m.msgId);
  });
  const relay = startOutboxRelay({ db, bus, clock: systemClock, logger, pollMs: 10_000 });
  const ids = await recordThree(db);
  await relay.flush();
  t.deepEqual(seen, [], "the first failure stops the batch, keeping order");
  t.is((await db("outbox").whereNull("published_at")).length, 3);
  await relay.flush();
  t.deepEqual(seen, ids);
  t.is((await db("outbox").whereNull("published_at")).length, 0);
  await relay.stop();
});
