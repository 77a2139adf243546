import test from "ava";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import { errorInfo, InProcessBus, MerchantCache, merchantNotFoundAsValidation } from "../src/index.js";
import { manualClock } from "@payments/testing";

let events = 0;
/** A MerchantChanged event as the merchant service publishes it. */
function merchantChanged(bus: InProcessBus, merchantId: string, change = "callback_url"): Promise<void> {
  const data = toBinary(MerchantChangedSchema, create(MerchantChangedSchema, { eventId: `e${++events}`, merchantId, change }));
  return bus.publish(MERCHANT_CHANGED_TOPIC, data, `e${events}`);
}

/** Loads the test finishes by hand. */
function deferred<V>() {
  let resolve!: (value: V) => void;
  const promise = new Promise<V>((r) => (resolve = r));
  return { promise, resolve };
}

async function watched(ttlMs = 60_000) {
  const bus = new InProcessBus();
  const clock = manualClock();
  const cache = new MerchantCache<string>({ clock }, ttlMs, "test-merchants");
  const subscription = await cache.watchMerchantChanges(bus);
  return { bus, clock, cache, subscription };
}

test("a merchant's answer is kept, by merchant id, until the TTL passes", async (t) => {
  const { clock, cache, subscription } = await watched(30_000);
  let calls = 0;
  const load = async () => `v${++calls}`;
  t.is(await cache.get("m1", load), "v1");
  t.is(await cache.get("m1", load), "v1");
  t.is(await cache.get("m2", load), "v2", "another merchant is another key");
  clock.advance(29_999);
  t.is(await cache.get("m1", load), "v1");
  clock.advance(1);
  t.is(await cache.get("m1", load), "v3", "kept no longer than the TTL");
  await subscription.stop();
});

test("MerchantChanged drops that merchant only; a creation drops nothing", async (t) => {
  const { bus, cache, subscription } = await watched();
  await cache.get("m1", async () => "m1 old");
  await cache.get("m2", async () => "m2 old");
  await merchantChanged(bus, "m3", "created");
  t.is(cache.size, 2, "nothing is kept about a merchant that did not exist");
  await merchantChanged(bus, "m1");
  t.is(await cache.get("m1", async () => "m1 new"), "m1 new");
  t.is(await cache.get("m2", async () => "m2 new"), "m2 old");
  await subscription.stop();
  await merchantChanged(bus, "m2");
  t.is(await cache.get("m2", async () => "m2 newer"), "m2 old", "a stopped watch drops nothing");
});

test("an event that cannot be read drops every merchant", async (t) => {
  const { bus, cache, subscription } = await watched();
  await cache.get("m1", async () => "a");
  await cache.get("m2", async () => "b");
  await bus.publish(MERCHANT_CHANGED_TOPIC, new Uint8Array([0xff, 0xff, 0xff]), "garbage");
  t.is(cache.size, 0);
  await cache.get("m1", async () => "a");
  // Readable, but about no merchant.
  await merchantChanged(bus, "");
  t.is(cache.size, 0);
  await subscription.stop();
});

test("concurrent lookups of one merchant share one call", async (t) => {
  const { cache, subscription } = await watched();
  let calls = 0;
  const answer = deferred<string>();
  const load = () => {
    calls++;
    return answer.promise;
  };
  const both = Promise.all([cache.get("m1", load), cache.get("m1", load)]);
  answer.resolve("once");
  t.deepEqual(await both, ["once", "once"]);
  t.is(calls, 1);
  await subscription.stop();
});

test("an answer in flight when its merchant changed reaches its callers but is not kept", async (t) => {
  const { bus, cache, subscription } = await watched();
  const answer = deferred<string>();
  const first = cache.get("m1", () => answer.promise);
  await merchantChanged(bus, "m1");
  answer.resolve("read before the change");
  t.is(await first, "read before the change");
  t.is(await cache.get("m1", async () => "after"), "after");
  await subscription.stop();
});

test("failures are not kept; with TTL 0 every lookup asks", async (t) => {
  const { cache, subscription } = await watched();
  await t.throwsAsync(cache.get("m1", async () => Promise.reject(new Error("merchant service down"))));
  t.is(await cache.get("m1", async () => "up again"), "up again");
  await subscription.stop();

  const off = new MerchantCache<number>({ clock: manualClock() }, 0, "off");
  let calls = 0;
  await off.get("m1", async () => ++calls);
  await off.get("m1", async () => ++calls);
  t.is(calls, 2);
  t.is(off.size, 0);
});

test("merchantNotFoundAsValidation: NOT_FOUND is VALIDATION_ERROR on merchant_id, anything else as it came", (t) => {
  const notFound = merchantNotFoundAsValidation(new ConnectError("no such merchant", Code.NotFound), "m 1");
  t.like(errorInfo(notFound), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.is((notFound as ConnectError).rawMessage, 'merchant_id: merchant "m 1" does not exist');
  const down = new ConnectError("down", Code.Unavailable);
  t.is(merchantNotFoundAsValidation(down, "m1"), down);
});
