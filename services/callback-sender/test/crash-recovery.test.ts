import test from "ava";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DeliveryStatus } from "@payments/contracts/callback";
import { CallbackReceiver, eventuallyValue } from "@payments/testing";
import { Stack } from "./fixtures.js";

// Replicas and restarts: each test has its own stack (own databases and stream), since they
// stop and start callback-senders.

const mainFile = fileURLToPath(new URL("../src/main.ts", import.meta.url));

test("a callback-sender killed between its POST and its record leads to a redelivery of the same event, not a loss", async (t) => {
  const stack = await new Stack().start();
  let child: ReturnType<typeof spawn> | undefined;
  const receiver = await new CallbackReceiver((_, arrival) => {
    if (arrival === 1) {
      // The POST arrived: kill the sender before it can record anything.
      child?.kill("SIGKILL");
      return "hang";
    }
    return { status: 200 };
  }).start();
  try {
    const leases = { CALLBACK_TIMEOUT: "1s", CALLBACK_CLAIM_TIMEOUT: "2s" };
    child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", mainFile], { env: { ...process.env, ...stack.senderEnv({ ...leases, LOG_LEVEL: "info" }) }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child!.on("exit", (_, signal) => resolve(signal)));
    await eventuallyValue(() => output.includes("callback-sender service ready"), "the child sender to start", 30_000);

    const m = await stack.merchant(receiver.url());
    const deposit = await stack.deposit(m.id, "killed");
    await stack.deposits().confirmDeposit({ depositId: deposit.id });
    t.is(await exited, "SIGKILL", "the sender died with the POST in flight");
    const first = receiver.received[0]!;

    // A new replica (the restarted service) takes the event once the dead one's lease ends.
    const replacement = await stack.startSender(leases);
    const event = await eventuallyValue(async () => {
      const { event } = await stack.callbacks(replacement).getEvent({ allMerchants: true, eventId: first.eventId });
      return event?.deliveryStatus === DeliveryStatus.DELIVERED ? event : undefined;
    }, "the event delivered by the replacement", 20_000);
    const arrivals = receiver.of(first.eventId);
    t.is(arrivals.length, 2);
    t.is(arrivals[1]!.headers["x-event-id"], first.eventId, "the same X-Event-Id, so the merchant can tell it is a repeat");
    t.true(arrivals[1]!.body.equals(first.body), "the same body");
    t.deepEqual(
      event.attempts.map((a) => [a.number, a.outcome]),
      [
        [1, "lost"],
        [2, "delivered"],
      ],
    );
    t.regex(event.attempts[0]!.error, /stopped before it recorded an answer/);
  } finally {
    child?.kill("SIGKILL");
    await receiver.stop();
    await stack.stop();
  }
});

test("status changes made while no callback-sender runs are delivered once one starts", async (t) => {
  const stack = await new Stack().start();
  const receiver = await new CallbackReceiver().start();
  try {
    const sender = await stack.startSender();
    const m = await stack.merchant(receiver.url());
    await stack.stopSender(sender);
    const deposits = await Promise.all(Array.from({ length: 5 }, (_, i) => stack.deposit(m.id, `offline-${i}`)));
    await Promise.all(deposits.map((d) => stack.deposits().cancelDeposit({ merchantId: m.id, depositId: d.id })));
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.is(receiver.received.length, 0);
    await stack.startSender();
    await eventuallyValue(() => receiver.received.length >= 5, "five callbacks after the restart", 20_000);
    t.deepEqual(receiver.received.map((c) => String((JSON.parse(c.body.toString()) as { data: { transactionId: unknown } }).data.transactionId)).sort(), deposits.map((d) => d.id).sort());
  } finally {
    await receiver.stop();
    await stack.stop();
  }
});

test("with two callback-sender replicas every event is delivered exactly once when the receiver answers 200", async (t) => {
  const stack = await new Stack().start();
  const receiver = await new CallbackReceiver().start();
  try {
    // A lease far longer than any attempt, so only a double claim could send an event twice.
    const leases = { CALLBACK_TIMEOUT: "10s", CALLBACK_CLAIM_TIMEOUT: "60s" };
    const [one, two] = [await stack.startSender(leases), await stack.startSender(leases)];
    const m = await stack.merchant(receiver.url());
    const count = 60;
    // Ten at a time: the point is the senders' race, not the deposit service's.
    for (let batch = 0; batch < count / 10; batch++) {
      const deposits = await Promise.all(Array.from({ length: 10 }, (_, i) => stack.deposit(m.id, `replica-${batch}-${i}`)));
      await Promise.all(deposits.map((d) => stack.deposits().cancelDeposit({ merchantId: m.id, depositId: d.id })));
    }
    await eventuallyValue(() => receiver.received.length >= count, `${count} callbacks`, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // a duplicate would arrive by now
    const perEvent = new Map<string, number>();
    for (const c of receiver.received) perEvent.set(c.eventId, (perEvent.get(c.eventId) ?? 0) + 1);
    t.is(perEvent.size, count);
    t.deepEqual([...new Set(perEvent.values())], [1], "no event arrived twice");
    const attempts = await stack.senderDb(one)("callback_attempts").count({ n: "*" }).first();
    t.is(Number(attempts?.n), count, "one recorded attempt per event");
    const pending = await stack.senderDb(two)("callback_events").whereNot({ status: "delivered" }).count({ n: "*" }).first();
    t.is(Number(pending?.n), 0);
  } finally {
    await receiver.stop();
    await stack.stop();
  }
});

test("a callback-sender that refuses private addresses never calls a loopback callback URL", async (t) => {
  const stack = await new Stack().start();
  const receiver = await new CallbackReceiver().start();
  try {
    await stack.startSender({ CALLBACK_ALLOW_PRIVATE: "0" });
    const m = await stack.merchant(receiver.url().replace("127.0.0.1", "localhost"));
    const deposit = await stack.deposit(m.id, "private");
    await stack.deposits().confirmDeposit({ depositId: deposit.id });
    const event = await eventuallyValue(async () => {
      const [event] = (await stack.callbacks().listEvents({ merchantId: m.id })).events;
      return event?.deliveryStatus === DeliveryStatus.FAILED ? event : undefined;
    }, "the event failed", 20_000);
    t.is(receiver.received.length, 0, "the receiver was never called");
    t.is(event.attempts.length, 4);
    for (const attempt of event.attempts) {
      t.is(attempt.statusCode, 0);
      t.regex(attempt.error, /refused to call localhost \(.+\): a loopback address/);
    }
  } finally {
    await receiver.stop();
    await stack.stop();
  }
});
