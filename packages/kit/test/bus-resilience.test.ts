import test from "ava";
import { JetStreamBus, type BusMessage } from "../src/bus.js";
import { createLogger } from "../src/logger.js";
import { eventually, startNatsServer, uniqueName } from "@payments/testing";

// Issue 12: the JetStream bus outlives NATS being away, and a consumer that ends is re-created.
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ service: "bus-test", level: "debug", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { lines, logger, logged: (text: string) => lines.some((l) => String(l.msg).includes(text)) };
}

test("opened while NATS is down: publish fails fast naming NATS, a consumer starts once NATS comes", async (t) => {
  const nats = await startNatsServer();
  await nats.stop();
  const { logger, logged } = capture();
  const id = uniqueName("b");
  const bus = JetStreamBus.open({ url: nats.url, stream: id.toUpperCase(), subjectPrefix: id, name: "bus-test", logger });
  try {
    t.false(await bus.whenReady(300));
    t.false(bus.isReady());
    t.true(logged(`waiting for NATS (nats://127.0.0.1:${nats.port})`));
    const error = await t.throwsAsync(bus.publish("x.v1.e", new Uint8Array([1]), "m0"));
    t.is(error.message, `NATS is not connected (nats://127.0.0.1:${nats.port})`);
    const seen: BusMessage[] = [];
    const subscription = await bus.consume("early", ["x.v1.>"], async (m) => void seen.push(m));
    t.false(bus.isReady(), "not ready: not connected, consumer not running");

    await nats.start();
    t.true(await bus.whenReady(10_000));
    await eventually(() => bus.isReady(), "consumer running", 5_000);
    await bus.publish("x.v1.e", new Uint8Array([1]), "m1");
    await eventually(() => seen.length === 1, "the event consumed");
    t.is(seen[0]!.msgId, "m1");
    await subscription.stop();
  } finally {
    await bus.close();
    await nats.destroy();
  }
});

test("a consumer deleted on the server is re-created and goes on processing events", async (t) => {
  const nats = await startNatsServer();
  const { logger, logged } = capture();
  const id = uniqueName("b");
  const bus = await JetStreamBus.connect({ url: nats.url, stream: id.toUpperCase(), subjectPrefix: id, name: "bus-test", logger });
  try {
    const seen: string[] = [];
    const subscription = await bus.consume("workers", ["x.v1.>"], async (m) => void seen.push(m.msgId));
    await eventually(() => bus.isReady(), "consumer running", 5_000);
    await bus.publish("x.v1.e", new Uint8Array([1]), "before");
    await eventually(() => seen.includes("before"), "the event before");

    const jsm = await bus.manager();
    await jsm.consumers.delete(bus.stream, "workers");
    await eventually(() => logged("JetStream consumer ended unexpectedly") || logged("JetStream consumer failed"), "the end logged", 15_000);
    await eventually(() => logged("JetStream consumer re-created"), "the re-creation logged", 15_000);
    const info = await jsm.consumers.info(bus.stream, "workers");
    t.is(info.name, "workers", "the durable exists again");
    t.true(bus.isReady());

    await bus.publish("x.v1.e", new Uint8Array([2]), "after");
    await eventually(() => seen.includes("after"), "the event after the re-creation", 15_000);
    await subscription.stop();
  } finally {
    await bus.close();
    await nats.destroy();
  }
});

test("JetStreamBus.connect still fails when NATS never answers, naming its address", async (t) => {
  const nats = await startNatsServer();
  await nats.destroy();
  const error = await t.throwsAsync(JetStreamBus.connect({ url: nats.url, timeoutMs: 500 }));
  t.is(error.message, `NATS is not reachable at nats://127.0.0.1:${nats.port}`);
});
