import test from "ava";
import { DeliveryStatus } from "@payments/contracts/callback";
import { CallbackReceiver, eventuallyValue, startMariadbServer, startNatsServer } from "@payments/testing";
import { Stack } from "./fixtures.js";

// Outages of the parts callbacks travel through. Each test runs a server of its own (the
// same binaries as the local ones) so stopping it disturbs no other suite.

test("status changes made while NATS is down reach the merchant once it is back, each once", async (t) => {
  const nats = await startNatsServer();
  const stack = new Stack({ natsUrl: nats.url });
  const receiver = await new CallbackReceiver().start();
  try {
    await stack.start();
    // A lease far longer than any attempt: a repeat could only come from the outage.
    await stack.startSender({ CALLBACK_TIMEOUT: "10s", CALLBACK_CLAIM_TIMEOUT: "60s" });
    const m = await stack.merchant(receiver.url());
    const before = await stack.deposit(m.id, "before-outage");
    await stack.deposits().confirmDeposit({ depositId: before.id });
    await eventuallyValue(() => receiver.received.length === 1, "the callback before the outage", 20_000);

    await nats.stop();
    // The changes commit; their events wait in the deposit service's outbox.
    const during = await Promise.all(["outage-1", "outage-2", "outage-3"].map((p) => stack.deposit(m.id, p)));
    await Promise.all(during.map((d) => stack.deposits().cancelDeposit({ merchantId: m.id, depositId: d.id })));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    t.is(receiver.received.length, 1, "nothing can travel while NATS is down");

    await nats.start();
    await eventuallyValue(() => receiver.received.length >= 4, "the three callbacks after NATS is back", 60_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const perDeposit = receiver.received.map((c) => String((JSON.parse(c.body.toString()) as { data: { transactionId: unknown } }).data.transactionId)).sort();
    t.deepEqual(perDeposit, [before.id, ...during.map((d) => d.id)].sort(), "each change once");
    const listed = await stack.callbacks().listEvents({ merchantId: m.id });
    t.true(listed.events.every((e) => e.deliveryStatus === DeliveryStatus.DELIVERED));
  } finally {
    await receiver.stop();
    await stack.stop();
    await nats.destroy();
  }
});

test("status changes arriving while the callback-sender's database is down reach the merchant once it is back", async (t) => {
  const mariadb = await startMariadbServer();
  const stack = new Stack();
  const receiver = await new CallbackReceiver().start();
  try {
    await stack.start();
    // LOG_LEVEL fatal: every poll during the outage logs its failed claim, as it should.
    await stack.startSender({ DATABASE_URL: mariadb.url("callbacks"), LOG_LEVEL: "fatal" });
    const m = await stack.merchant(receiver.url());
    const before = await stack.deposit(m.id, "before-db-outage");
    await stack.deposits().confirmDeposit({ depositId: before.id });
    await eventuallyValue(() => receiver.received.length === 1, "the callback before the outage", 20_000);

    await mariadb.stop();
    // The events reach the callback-sender, which cannot store them: it does not acknowledge
    // them, so JetStream delivers them again later.
    const during = await Promise.all(["db-outage-1", "db-outage-2", "db-outage-3"].map((p) => stack.deposit(m.id, p)));
    await Promise.all(during.map((d) => stack.deposits().cancelDeposit({ merchantId: m.id, depositId: d.id })));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.is(receiver.received.length, 1, "nothing is sent without the database");

    await mariadb.start();
    await eventuallyValue(() => receiver.received.length >= 4, "the three callbacks after the database is back", 90_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (receiver.received.length > 4) {
      for (const e of (await stack.callbacks().listEvents({ merchantId: m.id })).events) t.log(e.id, e.attempts.map((a) => [a.number, a.outcome, a.statusCode, a.error]));
    }
    // At least once: an answer that could not be recorded while connections recovered is sent
    // again, as the same event. Every change arrives, under one event id each.
    const idsByDeposit = new Map<string, Set<string>>();
    for (const c of receiver.received) {
      const depositId = String((JSON.parse(c.body.toString()) as { data: { transactionId: unknown } }).data.transactionId);
      idsByDeposit.set(depositId, (idsByDeposit.get(depositId) ?? new Set()).add(c.eventId));
    }
    t.deepEqual([...idsByDeposit.keys()].sort(), [before.id, ...during.map((d) => d.id)].sort(), "every change arrived");
    t.true([...idsByDeposit.values()].every((ids) => ids.size === 1), "a repeat is the same event");
    const events = (await stack.callbacks().listEvents({ merchantId: m.id })).events;
    t.true(events.length === 4 && events.every((e) => e.deliveryStatus === DeliveryStatus.DELIVERED));
  } finally {
    await receiver.stop();
    await stack.stop();
    await mariadb.destroy();
  }
});
