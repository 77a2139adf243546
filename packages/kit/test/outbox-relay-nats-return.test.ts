import test from "ava";
import { createServer, connect, type AddressInfo, type Socket } from "node:net";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import type { Knex } from "knex";
import { createLogger, JetStreamBus, outboxMigrations, recordEvent, startOutboxRelay, systemClock, type BusMessage } from "../src/index.js";
import { eventuallyAt, eventuallyValue, migratedTestDatabase, startNatsServer, type OwnNatsServer } from "@payments/testing";

// Issue 21: with NATS down the relay backs off, and a publish in flight may wait for the
// JetStream ack; once NATS is back, events must flow within 1 s of the server accepting
// connections again, however long the outage made the back-off. A NATS server of this
// suite's own (it is stopped and started), the relay with its defaults, as a service runs it.

const silent = createLogger({ service: "test", level: "silent" });
const TOPIC = "merchant.v1.merchant_changed";
let nats: OwnNatsServer | undefined;

test.before(async () => {
  nats = await startNatsServer();
});

test.after.always(async () => {
  await nats?.destroy();
});

/** A database of the test's own with the outbox table, as every service's. */
const outboxDatabase = (t: { teardown(fn: () => Promise<void>): void }): Promise<Knex> => migratedTestDatabase(t, outboxMigrations, { readCommitted: false });

function record(db: Knex, change: string): Promise<string> {
  return db.transaction((trx) => recordEvent(trx, systemClock, TOPIC, MerchantChangedSchema, { merchantId: "mer_1", change }));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.serial("events written while NATS is down are on the stream within 1 s of NATS accepting connections again", async (t) => {
  const server = nats!;
  const db = await outboxDatabase(t);
  const stream = `RETURN_${Date.now()}`;
  const subjectPrefix = `ret${Date.now()}`;
  const bus = await JetStreamBus.connect({ url: server.url, stream, subjectPrefix, logger: silent });
  const relay = startOutboxRelay({ db, bus, clock: systemClock, logger: silent });
  t.teardown(async () => {
    await relay.stop();
    await bus.close();
  });

  // Running: one event goes through.
  const before = await record(db, "before");
  relay.nudge();
  await eventuallyValue(
    async () => (await db("outbox").where({ event_id: before }).first<{ published_at: number | null } | undefined>())?.published_at ?? null,
    (at) => at !== null,
    "the first event published",
    10_000,
    20,
  );

  await server.stop();
  // Rows recorded and nudged while NATS is away, over an outage long enough for the relay's
  // back-off to reach its ceiling (with the old 5 s ceiling the pauses end 0.25, 0.75, 1.75,
  // 3.75, 7.75 and 12.75 s into it: NATS returning after 9 s found the relay asleep).
  const during: string[] = [];
  for (let i = 0; i < 9; i++) {
    during.push(await record(db, `during-${i}`));
    relay.nudge();
    await sleep(1000);
  }
  const pending = await db("outbox").whereNull("published_at").count<Array<{ n: number | string }>>({ n: "*" });
  t.is(Number(pending[0]!.n), during.length, "the events wait in the outbox while NATS is down");

  // start() resolves once the port accepts connections (it polls every 50 ms).
  await server.start();
  const back = Date.now();
  // A row is marked published only after JetStream acknowledged it: it is on the stream.
  const publishedAt = await eventuallyAt(
    async () => (await db("outbox").whereIn("event_id", during).whereNull("published_at").first("seq")) === undefined,
    "the outbox drained after NATS came back",
    20_000,
    10,
  );
  const elapsed = publishedAt - back;
  t.log(`events on the stream ${elapsed} ms after NATS accepted connections again`);
  t.true(elapsed < 1000, `published within 1 s of NATS returning (took ${elapsed} ms)`);

  // The stream itself holds each of them, once, under its outbox event id.
  const observer = await JetStreamBus.connect({ url: server.url, stream, subjectPrefix });
  const seen: BusMessage[] = [];
  const subscription = await observer.consume("nats-return-observer", [TOPIC], async (m) => void seen.push(m));
  try {
    await eventuallyValue(() => seen.length, (n) => n >= during.length + 1, "every event on the stream", 10_000, 20);
    await sleep(200);
    t.deepEqual(seen.map((m) => m.msgId).sort(), [before, ...during].sort());
  } finally {
    await subscription.stop();
    await observer.deleteStream();
    await observer.close();
  }
});

test.serial("a relay deep in a long back-off publishes as soon as the bus says NATS is back", async (t) => {
  const server = nats!;
  const db = await outboxDatabase(t);
  const stream = `NUDGE_${Date.now()}`;
  const subjectPrefix = `nudge${Date.now()}`;
  const bus = await JetStreamBus.connect({ url: server.url, stream, subjectPrefix, logger: silent });
  // A ceiling far beyond the outage: only the reconnect signal can end the pause in time.
  const relay = startOutboxRelay({ db, bus, clock: systemClock, logger: silent, maxBackoffMs: 60_000 });
  t.teardown(async () => {
    await relay.stop();
    await bus.deleteStream();
    await bus.close();
  });

  await server.stop();
  const during: string[] = [];
  // Pauses end 0.25, 0.75, 1.75, 3.75 and 7.75 s into the outage; NATS returns after 4.5 s.
  for (let i = 0; i < 3; i++) {
    during.push(await record(db, `nudge-${i}`));
    relay.nudge();
    await sleep(1500);
  }
  await server.start();
  const back = Date.now();
  const publishedAt = await eventuallyAt(
    async () => (await db("outbox").whereIn("event_id", during).whereNull("published_at").first("seq")) === undefined,
    "the outbox drained after NATS came back",
    20_000,
    10,
  );
  t.log(`published ${publishedAt - back} ms after NATS accepted connections again`);
  t.true(publishedAt - back < 1000, `published within 1 s of NATS returning (took ${publishedAt - back} ms)`);
});

/** A TCP pass-through to NATS that can stop forwarding what the client sends (`hold`) and drop every connection (`cut`). */
async function natsProxy(t: { teardown(fn: () => unknown): void }, port: number): Promise<{ url: string; hold(): void; cut(): void }> {
  const clients = new Set<{ socket: Socket; upstream: Socket }>();
  let holding = false;
  const proxy = createServer((socket) => {
    const upstream = connect(port, "127.0.0.1");
    const pair = { socket, upstream };
    clients.add(pair);
    for (const s of [socket, upstream]) {
      s.on("error", () => undefined);
      s.on("close", () => {
        clients.delete(pair);
        socket.destroy();
        upstream.destroy();
      });
    }
    socket.on("data", (chunk) => void (holding || upstream.write(chunk)));
    upstream.pipe(socket);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const { socket } of clients) socket.destroy();
    return new Promise<void>((resolve) => proxy.close(() => resolve()));
  });
  return {
    url: `nats://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    hold() {
      holding = true;
    },
    cut() {
      holding = false;
      for (const { socket } of clients) socket.destroy();
    },
  };
}

test.serial("a publish waiting for its ack fails as soon as the connection drops, not at its timeout", async (t) => {
  const proxy = await natsProxy(t, nats!.port);
  const stream = `DROP_${Date.now()}`;
  const bus = await JetStreamBus.connect({ url: proxy.url, stream, subjectPrefix: `drop${Date.now()}`, logger: silent, publishTimeoutMs: 30_000 });
  t.teardown(async () => {
    await bus.deleteStream();
    await bus.close();
  });
  await bus.publish("merchant.v1.merchant_changed", new Uint8Array([1]), "drop-1");

  // The next publish never reaches NATS, so its ack never comes; then the connection drops.
  proxy.hold();
  const started = Date.now();
  const publishing = bus.publish("merchant.v1.merchant_changed", new Uint8Array([2]), "drop-2");
  const settled = publishing.then(
    () => "published",
    () => "failed",
  );
  await sleep(300);
  proxy.cut();
  const outcome = await settled;
  const took = Date.now() - started;
  t.log(`the publish ${outcome} after ${took} ms`);
  t.is(outcome, "failed");
  t.true(took < 1500, `failed when the connection dropped, not after a timeout (took ${took} ms)`);
  // And the bus is back by itself: a publish goes through again.
  await eventuallyValue(
    () =>
      bus.publish("merchant.v1.merchant_changed", new Uint8Array([3]), "drop-3").then(
        () => true,
        () => false,
      ),
    (ok) => ok,
    "a publish after the reconnect",
    10_000,
    100,
  );
  t.pass();
});
