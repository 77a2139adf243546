import test from "ava";
import { InProcessBus, JetStreamBus, type BatchMessage, type EventBus } from "../src/bus.js";
import { drainInBatches } from "../src/jetstream-bus.js";
import { currentRequestId } from "../src/logger.js";
import { eventually, natsTestUrl, uniqueName } from "@payments/testing";

// Issue 22: a consumer that takes in many events per transaction gets what arrived while it
// handled the last batch, each message acked only when its batch succeeded; a batch that
// fails goes again one message at a time, so one bad event holds back only itself.

async function jetstream(): Promise<JetStreamBus> {
  const id = uniqueName("b");
  return JetStreamBus.connect({ url: natsTestUrl, stream: id.toUpperCase(), subjectPrefix: id, name: "batch-test" });
}

async function closeBus(bus: EventBus): Promise<void> {
  if (bus instanceof JetStreamBus) await bus.deleteStream();
  await bus.close();
}

test("drainInBatches: a quiet source is handled one by one, a busy one in batches of at most maxBatch, in order, all of it", async (t) => {
  async function* source(): AsyncGenerator<number> {
    for (let i = 0; i < 50; i++) yield i;
  }
  const batches: number[][] = [];
  await drainInBatches(source(), 8, async (batch) => {
    batches.push(batch);
    await new Promise((resolve) => setTimeout(resolve, 5));
  });
  t.deepEqual(batches.flat(), Array.from({ length: 50 }, (_, i) => i), "every item, in order, once");
  t.true(
    batches.every((b) => b.length <= 8),
    `no batch over 8: ${batches.map((b) => b.length).join(",")}`,
  );
  t.true(
    batches.some((b) => b.length > 1),
    "items that came while a batch was handled went together",
  );
  t.is(batches[0]!.length, 1, "the first item did not wait for more");
});

test("drainInBatches: a handler that throws ends the reading with its error, after what was under way", async (t) => {
  async function* source(): AsyncGenerator<number> {
    for (let i = 0; ; i++) yield i;
  }
  const err = await t.throwsAsync(
    drainInBatches(source(), 4, async (batch) => {
      if (batch.includes(5)) throw new Error("boom");
    }),
  );
  t.is(err.message, "boom");
});

test("jetstream: events published at once arrive in batches, each once, with their own request id; none comes back", async (t) => {
  const bus = await jetstream();
  try {
    const seen: BatchMessage[] = [];
    const sizes: number[] = [];
    let handlerRequestId = "unset" as string | undefined;
    const subscription = await bus.consumeBatches(
      "batches",
      ["x.v1.made"],
      async (messages) => {
        sizes.push(messages.length);
        handlerRequestId = currentRequestId();
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen.push(...messages);
      },
      { maxBatch: 50 },
    );
    await Promise.all(Array.from({ length: 200 }, (_, i) => bus.publish("x.v1.made", new Uint8Array([i % 256]), `m-${i}`, { "x-request-id": `req-${i}` })));
    await eventually(() => seen.length >= 200, "every event handled");
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.is(seen.length, 200, "none handled twice (all acked)");
    t.is(new Set(seen.map((m) => m.msgId)).size, 200);
    t.true(
      sizes.some((n) => n > 1),
      `batches: ${sizes.join(",")}`,
    );
    t.true(sizes.every((n) => n <= 50));
    t.true(seen.every((m) => m.requestId === `req-${m.msgId.slice(2)}`, "each message keeps the request id it came with"));
    t.is(handlerRequestId, undefined, "the batch runs under no single request id");
    await subscription.stop();
  } finally {
    await closeBus(bus);
  }
});

test("jetstream: a failing batch goes again one by one; only the bad event comes back, the others are handled once", async (t) => {
  const bus = await jetstream();
  try {
    const handled: string[] = [];
    let badTries = 0;
    const subscription = await bus.consumeBatches("poison", ["x.v1.p"], async (messages) => {
      if (messages.some((m) => m.msgId === "bad")) {
        badTries++;
        if (badTries < 4) throw new Error("cannot take the bad one in yet");
      }
      handled.push(...messages.map((m) => m.msgId));
    });
    await Promise.all(["a", "b", "bad", "c", "d"].map((id) => bus.publish("x.v1.p", new Uint8Array([1]), id)));
    await eventually(() => handled.includes("bad"), "the bad event handled once it could be", 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const id of ["a", "b", "c", "d"]) t.is(handled.filter((h) => h === id).length, 1, `${id} handled once`);
    t.is(handled.filter((h) => h === "bad").length, 1);
    t.true(badTries >= 4, "the bad event came back after failing");
    await subscription.stop();
  } finally {
    await closeBus(bus);
  }
});

test("in-process: a batch handler gets each published message alone, and a failure reaches the publisher", async (t) => {
  const bus = new InProcessBus();
  const sizes: number[] = [];
  await bus.consumeBatches("g", ["x.v1.>"], async (messages) => {
    sizes.push(messages.length);
    if (messages[0]!.msgId === "no") throw new Error("refused");
  });
  await bus.publish("x.v1.a", new Uint8Array([1]), "yes", { "x-request-id": "r1" });
  await t.throwsAsync(bus.publish("x.v1.a", new Uint8Array([1]), "no"), { message: "refused" });
  t.deepEqual(sizes, [1, 1]);
  await closeBus(bus);
});
