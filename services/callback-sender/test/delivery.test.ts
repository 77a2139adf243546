import test from "ava";
import { DeliveryStatus } from "@payments/contracts/callback";
import { verifyCallback } from "@payments/signing";
import { EVENT_TYPES } from "../src/index.js";
import { CallbackReceivers, eventuallyValue, type ReceivedCallback } from "@payments/testing";
import { Stack } from "./fixtures.js";
import { startPayoutWorker, type PayoutContext } from "@payments/testing/services";

// One callback-sender on MySQL, fed over JetStream by the real deposit and payout services,
// calling real HTTP receivers on localhost. Schedule: 100ms, 200ms, 300ms.
const stack = new Stack();
const receivers = new CallbackReceivers();

test.before(async () => {
  // Withdrawals stay pending until a test runs the payout worker itself (to cancel one first).
  // A short deposit lifetime gives a deposit.expired event; long enough that the other tests
  // cancel their deposits well before it even on a busy machine.
  await stack.start({ PAYOUT_WORKER: "0", DEPOSIT_TTL: "8s" });
  await stack.startSender();
});

test.after.always(async () => {
  await receivers.stop();
  await stack.stop();
});

interface Body {
  id: string;
  type: string;
  createdAt: string;
  data: { transactionId: string; status: string; sequence: number; type: string };
}

const bodyOf = (c: ReceivedCallback) => JSON.parse(c.body.toString("utf8")) as Body;

/** The merchant's side: the helper merchants install, on the raw request as it arrived. */
function signedWith(secret: string, c: ReceivedCallback): boolean {
  const verdict = verifyCallback({ secrets: secret, headers: c.headers, body: c.body, path: c.path });
  return verdict.ok;
}

async function eventOf(eventId: string) {
  return (await stack.callbacks().getEvent({ allMerchants: true, eventId })).event!;
}

async function delivered(eventId: string) {
  return eventuallyValue(async () => {
    const event = await eventOf(eventId);
    return event.deliveryStatus === DeliveryStatus.DELIVERED ? event : undefined;
  }, `event ${eventId} delivered`, 20_000);
}

test("every deposit and withdrawal status change reaches the merchant once, signed, with the transaction's sequence", async (t) => {
  const r = await receivers.start();
  const m = await stack.merchant(r.url("/hooks/payments?shop=7"));
  const deposits = stack.deposits();
  const [completed, failed, cancelled, expired] = await Promise.all(["d-ok", "d-bad", "d-cancel", "d-expire"].map((p) => stack.deposit(m.id, p)));
  await deposits.confirmDeposit({ depositId: completed!.id, amount: 9_500n });
  await deposits.rejectDeposit({ depositId: failed!.id, reason: "SENDER_MISMATCH" });
  await deposits.cancelDeposit({ merchantId: m.id, depositId: cancelled!.id });

  const payouts = stack.payouts();
  await payouts.adjustBalance({ merchantId: m.id, amount: 1_000_000n, reason: "test funds" });
  const withdraw = (processId: string, iban: string) =>
    payouts.createWithdrawal({ merchantId: m.id, processId, amount: 10_000n, accountName: "Ali Veli", iban, userId: "u1", userName: "ali", name: "Ali Veli" });
  const paid = (await withdraw("w-ok", "TR330006100519786457841326")).withdrawal!;
  const refused = (await withdraw("w-fail", "TR400006200000000000000001")).withdrawal!;
  const withdrawn = (await withdraw("w-cancel", "TR330006100519786457841326")).withdrawal!;
  await payouts.cancelWithdrawal({ merchantId: m.id, withdrawalId: withdrawn.id });
  const worker = startPayoutWorker(stack.producers.contexts.get("payout") as PayoutContext);
  try {
    await eventuallyValue(() => r.received.length >= 9 && r.received, "nine callbacks", 40_000).catch((err: unknown) => {
      t.log(r.received.map((c) => bodyOf(c).type));
      throw err;
    });
  } finally {
    await worker.stop();
  }
  await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more arrives
  t.is(r.received.length, 9, "one callback per status change, none twice");

  const byType = new Map(r.received.map((c) => [`${bodyOf(c).type}:${bodyOf(c).data.transactionId}`, c]));
  const expected: Array<[string, string, number]> = [
    ["deposit.completed", completed!.id, 2],
    ["deposit.failed", failed!.id, 2],
    ["deposit.cancelled", cancelled!.id, 2],
    ["deposit.expired", expired!.id, 2],
    ["withdrawal.processing", paid.id, 2],
    ["withdrawal.completed", paid.id, 3],
    ["withdrawal.processing", refused.id, 2],
    ["withdrawal.failed", refused.id, 3],
    ["withdrawal.cancelled", withdrawn.id, 2],
  ];
  t.deepEqual([...new Set(r.received.map((c) => bodyOf(c).type))].sort(), [...EVENT_TYPES].sort(), "all eight event types");
  for (const [type, transactionId, sequence] of expected) {
    const callback = byType.get(`${type}:${transactionId}`);
    if (!callback) {
      t.fail(`no ${type} for ${transactionId}`);
      continue;
    }
    const body = bodyOf(callback);
    t.true(signedWith(m.secret, callback), `${type} is signed with the merchant's secret over its path and query`);
    t.is(callback.path, "/hooks/payments?shop=7");
    t.is(callback.headers["content-type"], "application/json");
    t.is(callback.headers["x-event-id"], body.id);
    t.is(callback.headers["x-event-type"], type);
    t.regex(body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    t.is(body.data.status, type.split(".")[1] ?? "");
    t.is(body.data.sequence, sequence, `${type} carries sequence ${sequence}`);
    t.regex(String(callback.headers["x-timestamp"]), /^\d+$/);
    t.true(Math.abs(Number(callback.headers["x-timestamp"]) - Date.now() / 1000) < 60);
  }
  const completedBody = bodyOf(byType.get(`deposit.completed:${completed!.id}`)!) as Body & { data: { amount: number; requestedAmount: number } };
  t.like(completedBody.data, { amount: 9_500, requestedAmount: 10_000, type: "deposit" });
  t.is((bodyOf(byType.get(`withdrawal.failed:${refused.id}`)!).data as unknown as { failureReason: string }).failureReason, "ACCOUNT_NOT_FOUND");

  const listed = await stack.callbacks().listEvents({ merchantId: m.id, limit: 100 });
  t.is(listed.events.length, 9);
  t.true(listed.events.every((e) => e.deliveryStatus === DeliveryStatus.DELIVERED && e.attempts.length === 1 && e.attempts[0]!.statusCode === 200));
});

test("a receiver answering 500, 500, then 200 gets three attempts on the schedule and the event ends delivered", async (t) => {
  const r = await receivers.start((_, arrival) => (arrival <= 2 ? { status: 500, body: "database is down" } : { status: 204 }));
  const m = await stack.merchant(r.url());
  const deposit = await stack.deposit(m.id, "retry-then-ok");
  await stack.deposits().confirmDeposit({ depositId: deposit.id });
  const first = await eventuallyValue(() => r.received[0], "first attempt", 20_000);
  const event = await delivered(first.eventId);
  const arrivals = r.of(first.eventId);
  t.is(arrivals.length, 3);
  t.true(arrivals.every((c) => c.body.equals(first.body)), "every attempt sends the same bytes");
  t.true(arrivals[1]!.at - arrivals[0]!.at >= 95, `first retry after ${arrivals[1]!.at - arrivals[0]!.at} ms (schedule 100ms)`);
  t.true(arrivals[2]!.at - arrivals[1]!.at >= 195, `second retry after ${arrivals[2]!.at - arrivals[1]!.at} ms (schedule 200ms)`);
  t.deepEqual(
    event.attempts.map((a) => [a.number, a.statusCode, a.outcome, a.error]),
    [
      [1, 500, "retry", "HTTP 500: database is down"],
      [2, 500, "retry", "HTTP 500: database is down"],
      [3, 204, "delivered", ""],
    ],
  );
  t.true(event.attempts.every((a) => a.url === r.url() && a.latencyMs >= 0 && a.attemptedAt !== undefined));
  t.truthy(event.deliveredAt);
  t.is(event.nextAttemptAt, undefined);
});

test("a receiver that never answers 2xx ends failed after the schedule; a redelivery then succeeds with the same event", async (t) => {
  let healthy = false;
  const r = await receivers.start(() => (healthy ? { status: 200 } : { status: 502 }));
  const m = await stack.merchant(r.url());
  const deposit = await stack.deposit(m.id, "never-ok");
  await stack.deposits().cancelDeposit({ merchantId: m.id, depositId: deposit.id });
  const first = await eventuallyValue(() => r.received[0], "first attempt", 20_000);
  const failed = await eventuallyValue(async () => {
    const event = await eventOf(first.eventId);
    return event.deliveryStatus === DeliveryStatus.FAILED ? event : undefined;
  }, "failed", 20_000);
  t.is(failed.attempts.length, 4, "the first attempt and one per step of a three-step schedule");
  t.is(failed.attempts.at(-1)!.outcome, "failed");
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(r.of(first.eventId).length, 4, "nothing is sent after the event failed");

  healthy = true;
  const redelivered = await stack.callbacks().redeliverEvent({ merchantId: m.id, eventId: first.eventId });
  t.not(redelivered.event!.deliveryStatus, DeliveryStatus.FAILED);
  const event = await delivered(first.eventId);
  const arrivals = r.of(first.eventId);
  t.is(arrivals.length, 5);
  t.true(arrivals[4]!.body.equals(first.body));
  t.is(arrivals[4]!.headers["x-event-id"], first.eventId);
  t.deepEqual(
    event.attempts.map((a) => a.outcome),
    ["retry", "retry", "retry", "failed", "delivered"],
  );
});

test("Retry-After longer than the schedule's step is honoured", async (t) => {
  const r = await receivers.start((_, arrival) => (arrival === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 }));
  const m = await stack.merchant(r.url());
  const deposit = await stack.deposit(m.id, "retry-after");
  await stack.deposits().confirmDeposit({ depositId: deposit.id });
  const first = await eventuallyValue(() => r.received[0], "first attempt", 20_000);
  await delivered(first.eventId);
  const [a, b] = r.of(first.eventId);
  t.true(b!.at - a!.at >= 990, `second attempt ${b!.at - a!.at} ms after the first (asked: 1 s; schedule: 100 ms)`);
});

test("callbacks go to the merchant's current URL, signed with its current secret", async (t) => {
  const before = await receivers.start(() => ({ status: 500 }));
  const after = await receivers.start();
  const m = await stack.merchant(before.url());
  const deposit = await stack.deposit(m.id, "moved");
  await stack.deposits().confirmDeposit({ depositId: deposit.id });
  const first = await eventuallyValue(() => before.received[0], "attempt at the old URL", 20_000);
  t.true(signedWith(m.secret, first));
  const rotated = await stack.merchants().rotateSecret({ merchantId: m.id, gracePeriodSeconds: 3600 });
  await stack.merchants().setCallbackUrl({ merchantId: m.id, callbackUrl: after.url("/new") });
  await delivered(first.eventId);
  const last = after.of(first.eventId).at(-1)!;
  t.is(last.path, "/new");
  t.true(signedWith(rotated.apiSecret, last), "signed with the rotated-in secret");
  t.false(signedWith(m.secret, last), "not with the one in its grace period");
});

test("a merchant without a callback URL sees failed attempts saying so, and gets the events once it sets one and redelivers", async (t) => {
  const m = await stack.merchant("", "No URL Shop");
  const startedAt = new Date(Date.now() - 1000);
  const deposit = await stack.deposit(m.id, "no-url");
  await stack.deposits().confirmDeposit({ depositId: deposit.id });
  const failed = await eventuallyValue(async () => {
    const [event] = (await stack.callbacks().listEvents({ merchantId: m.id, deliveryStatus: DeliveryStatus.FAILED })).events;
    return event;
  }, "failed event", 20_000);
  t.true(failed.attempts.every((a) => a.error === "the merchant has no callback URL set" && a.url === "" && a.statusCode === 0));

  const r = await receivers.start();
  await stack.merchants().setCallbackUrl({ merchantId: m.id, callbackUrl: r.url() });
  const redelivery = await stack.callbacks().redeliverFailedEvents({ merchantId: m.id, since: { seconds: BigInt(Math.floor(startedAt.getTime() / 1000)), nanos: 0 } });
  t.is(redelivery.count, 1);
  t.deepEqual(redelivery.eventIds, [failed.id]);
  await delivered(failed.id);
  t.is(r.of(failed.id).length, 1);
});

test("a slow merchant endpoint holds only its own slots: another merchant's callbacks go through meanwhile", async (t) => {
  const slow = await receivers.start(() => "hang");
  const fast = await receivers.start();
  const a = await stack.merchant(slow.url(), "Slow Shop");
  const b = await stack.merchant(fast.url(), "Fast Shop");
  const slowDeposits = await Promise.all(Array.from({ length: 8 }, (_, i) => stack.deposit(a.id, `slow-${i}`)));
  await Promise.all(slowDeposits.map((d) => stack.deposits().cancelDeposit({ merchantId: a.id, depositId: d.id })));
  await eventuallyValue(() => slow.open >= 4, "the slow endpoint holding four attempts", 20_000);
  const fastDeposits = await Promise.all(Array.from({ length: 6 }, (_, i) => stack.deposit(b.id, `fast-${i}`)));
  await Promise.all(fastDeposits.map((d) => stack.deposits().cancelDeposit({ merchantId: b.id, depositId: d.id })));
  await eventuallyValue(() => fast.received.length >= 6, "the fast merchant's six callbacks", 10_000);
  // The slow endpoint answers nothing until released, so none of its events can be delivered yet
  // (how many of its attempts are open at this instant depends on CALLBACK_TIMEOUT and the machine's load).
  const slowEvents = (await stack.callbacks().listEvents({ merchantId: a.id, limit: 100 })).events;
  t.false(slowEvents.some((e) => e.deliveryStatus === DeliveryStatus.DELIVERED), "while the slow merchant's callbacks are still undelivered");
  t.true(slow.maxOpen <= 4, `at most CALLBACK_MERCHANT_CONCURRENCY (4) attempts at the slow endpoint at once, saw ${slow.maxOpen}`);
  slow.policy = () => ({ status: 200 });
  slow.release();
});
