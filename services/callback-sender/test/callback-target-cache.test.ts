import test from "ava";
import { CallbackReceivers, eventuallyValue, manualClock, type ReceivedCallback } from "@payments/testing";
import { verifyCallback } from "@payments/signing";
import { createCallbackTargetCache, callbackTargetOf } from "../src/callback-target.js";
import type { CallbackContext } from "../src/index.js";
import { Stack } from "./fixtures.js";

// The callback-sender's cache of GetCallbackTarget answers (URL and signing secret), against
// the real merchant service (producers on MySQL, events over JetStream): what the sender asks
// is counted by the merchant service's own RPC metric.
const stack = new Stack();
const receivers = new CallbackReceivers();

test.before(async () => {
  await stack.start({ PAYOUT_WORKER: "0" });
  await stack.startSender();
});

test.after.always(async () => {
  await receivers.stop();
  await stack.stop();
});

const sender = () => stack.senders[0]!.contexts.get("callback-sender") as CallbackContext;

/** GetCallbackTarget calls the merchant service has answered so far. */
async function targetCalls(): Promise<number> {
  const { values } = await stack.producers.metrics.rpcDuration.get();
  return values.filter((v) => v.metricName?.endsWith("_count") && v.labels.rpc_method === "GetCallbackTarget").reduce((sum, v) => sum + v.value, 0);
}

/** A status change of the merchant: a deposit, cancelled. */
async function statusChange(merchantId: string, processId: string): Promise<void> {
  const deposit = await stack.deposit(merchantId, processId);
  await stack.deposits().cancelDeposit({ merchantId, depositId: deposit.id });
}

const signedWith = (secret: string, c: ReceivedCallback) => verifyCallback({ secrets: secret, headers: c.headers, body: c.body, path: c.path }).ok;

/** How long `condition` took to hold, failing after 1 s. */
async function withinASecond(condition: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  await eventuallyValue(async () => (await condition()) || undefined, what, 1000);
  return Date.now() - started;
}

test.serial("a merchant's callback target is asked once: further attempts make no GetCallbackTarget call", async (t) => {
  const r = await receivers.start();
  const m = await stack.merchant(r.url(), "Cached Shop");
  const before = await targetCalls();
  await statusChange(m.id, "first");
  await eventuallyValue(() => r.received.length === 1, "the first callback", 20_000);
  t.is(await targetCalls(), before + 1);
  await Promise.all(["second", "third", "fourth"].map((p) => statusChange(m.id, p)));
  await eventuallyValue(() => r.received.length === 4, "three more callbacks", 20_000);
  t.is(await targetCalls(), before + 1, "answered from the cache");
  t.true(r.received.every((c) => signedWith(m.secret, c)));
});

test.serial("a rotated secret and a new callback URL reach the cached target within a second, and the next callback uses them", async (t) => {
  const before = await receivers.start();
  const after = await receivers.start();
  const m = await stack.merchant(before.url("/old"), "Moving Shop");
  await statusChange(m.id, "before-change");
  await eventuallyValue(() => before.received.length === 1, "the callback before the change", 20_000);

  const { apiSecret } = await stack.merchants().rotateSecret({ merchantId: m.id, gracePeriodSeconds: 3600 });
  const rotated = await withinASecond(async () => (await callbackTargetOf(sender(), m.id)).signingSecret === apiSecret, "the rotated secret in the target");
  await stack.merchants().setCallbackUrl({ merchantId: m.id, callbackUrl: after.url("/new") });
  const moved = await withinASecond(async () => (await callbackTargetOf(sender(), m.id)).callbackUrl === after.url("/new"), "the new URL in the target");
  t.log(`rotation seen after ${rotated} ms, new URL after ${moved} ms`);

  await statusChange(m.id, "after-change");
  await eventuallyValue(() => after.received.length === 1, "the callback after the change", 20_000);
  const [callback] = after.received;
  t.is(callback!.path, "/new");
  t.true(signedWith(apiSecret, callback!), "signed with the rotated-in secret");
  t.false(signedWith(m.secret, callback!), "not with the one in its grace period");
  t.is(before.received.length, 1, "nothing more at the old URL");
});

test.serial("an attempt that is not delivered drops the target: the retry asks the merchant service again", async (t) => {
  const r = await receivers.start((_, arrival) => (arrival === 1 ? { status: 503 } : { status: 200 }));
  const m = await stack.merchant(r.url(), "Flaky Shop");
  await callbackTargetOf(sender(), m.id);
  const calls = await targetCalls();
  await statusChange(m.id, "flaky");
  await eventuallyValue(() => r.received.length === 2, "the attempt and its retry", 20_000);
  t.is(await targetCalls(), calls + 1, "the first attempt used the cache, the retry asked afresh");
});

test.serial("with no event, a cached target is kept no longer than MERCHANT_CACHE_TTL", async (t) => {
  // A cache of its own that watches nothing, on a clock the test moves: as if every event were lost.
  const clock = manualClock();
  const ctx: CallbackContext = { ...sender(), callbackTargets: createCallbackTargetCache({ clock, logger: sender().logger }, 30_000) };
  const m = await stack.merchant("https://shop.example/cb", "Lost Events Shop");
  t.is((await callbackTargetOf(ctx, m.id)).signingSecret, m.secret);
  const { apiSecret } = await stack.merchants().rotateSecret({ merchantId: m.id, gracePeriodSeconds: 3600 });
  clock.advance(29_999);
  const calls = await targetCalls();
  t.is((await callbackTargetOf(ctx, m.id)).signingSecret, m.secret, "stale, but within the TTL (the old secret is in its grace period)");
  t.is(await targetCalls(), calls);
  clock.advance(1);
  t.is((await callbackTargetOf(ctx, m.id)).signingSecret, apiSecret, "asked again once the TTL has passed");
  t.is(await targetCalls(), calls + 1);
});

test.serial("MERCHANT_CACHE_TTL=0 asks the merchant service before every attempt", async (t) => {
  const ctx: CallbackContext = { ...sender(), callbackTargets: createCallbackTargetCache(sender(), 0) };
  const m = await stack.merchant("https://shop.example/cb", "Uncached Shop");
  const calls = await targetCalls();
  await callbackTargetOf(ctx, m.id);
  await callbackTargetOf(ctx, m.id);
  t.is(await targetCalls(), calls + 2);
});
