import test from "ava";
import { EventCache, InProcessBus } from "../src/index.js";
import { manualClock } from "@payments/testing";

/** A load the test finishes by hand, counting how often it was started. */
function deferredLoads<V>() {
  const pending: Array<{ resolve(value: V): void; reject(err: unknown): void }> = [];
  return {
    pending,
    load: () =>
      new Promise<V>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("a kept value is served without loading again", async (t) => {
  const cache = new EventCache<number>({ clock: manualClock(), ttlMs: 1000 });
  let loads = 0;
  const load = async () => ++loads;
  t.is(await cache.get("k", load), 1);
  t.is(await cache.get("k", load), 1);
  t.is(loads, 1);
  t.like(cache.stats(), { hits: 1, misses: 1, loads: 1 });
});

test("a value expires ttlMs after its load started, by the injected clock", async (t) => {
  const clock = manualClock();
  const cache = new EventCache<number>({ clock, ttlMs: 1000 });
  let loads = 0;
  const slow = deferredLoads<number>();
  const first = cache.get("k", slow.load);
  // The load takes 400 ms: the value was read at its start, so it is kept 600 ms more, not 1000.
  clock.advance(400);
  slow.pending[0]!.resolve(++loads);
  t.is(await first, 1);
  clock.advance(599);
  t.is(await cache.get("k", async () => ++loads), 1, "still within the TTL");
  clock.advance(1);
  t.is(await cache.get("k", async () => ++loads), 2, "expired exactly at start + ttlMs");
});

test("an event on the watched topic drops everything at once", async (t) => {
  const bus = new InProcessBus();
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const subscription = await cache.watch(bus, ["catalog.v1.changed"]);
  let version = "v1";
  await cache.get("a", async () => version);
  await cache.get("b", async () => version);
  await bus.publish("other.v1.thing", new Uint8Array(), "e0");
  t.is(cache.size, 2, "another topic changes nothing");
  version = "v2";
  await bus.publish("catalog.v1.changed", new Uint8Array(), "e1");
  t.is(cache.size, 0);
  t.is(await cache.get("a", async () => version), "v2");
  await subscription.stop();
  await bus.publish("catalog.v1.changed", new Uint8Array(), "e2");
  t.is(cache.size, 1, "a stopped watch drops nothing");
});

test("invalidate(key) drops that key only", async (t) => {
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  await cache.get("a", async () => "a1");
  await cache.get("b", async () => "b1");
  cache.invalidate("a");
  t.is(await cache.get("a", async () => "a2"), "a2");
  t.is(await cache.get("b", async () => "b2"), "b1");
});

test("with keysOf an event drops only the keys it names; an unreadable one drops everything", async (t) => {
  const bus = new InProcessBus();
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  await cache.watch(bus, ["merchant.v1.changed"], {
    keysOf: (message) => {
      const text = new TextDecoder().decode(message.data);
      if (text === "") throw new Error("unreadable");
      return [text];
    },
  });
  await cache.get("m1", async () => "m1");
  await cache.get("m2", async () => "m2");
  await bus.publish("merchant.v1.changed", new TextEncoder().encode("m1"), "e1");
  t.is(cache.size, 1);
  t.is(await cache.get("m2", async () => "never"), "m2");
  await bus.publish("merchant.v1.changed", new Uint8Array(), "e2");
  t.is(cache.size, 0);
});

test("invalidate(key) during that key's load keeps the load's answer out, and leaves other keys' loads alone", async (t) => {
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const loads = deferredLoads<string>();
  const k = cache.get("k", loads.load);
  const other = cache.get("other", loads.load);
  cache.invalidate("k");
  loads.pending[0]!.resolve("stale");
  loads.pending[1]!.resolve("kept");
  t.is(await k, "stale");
  await other;
  t.is(await cache.get("k", async () => "fresh"), "fresh");
  t.is(await cache.get("other", async () => "never"), "kept");
});

test("a load under way when the event arrives answers its callers but is not kept; the next get loads afresh", async (t) => {
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const loads = deferredLoads<string>();
  const before = cache.get("k", loads.load);
  await tick();
  cache.clear();
  // Asked after the event: must not join the stale load.
  const after = cache.get("k", loads.load);
  t.is(loads.pending.length, 2, "a second load started after the invalidation");
  // The stale one finishes last-but-one and must not overwrite or be kept.
  loads.pending[0]!.resolve("stale");
  t.is(await before, "stale");
  loads.pending[1]!.resolve("fresh");
  t.is(await after, "fresh");
  t.is(await cache.get("k", async () => "never"), "fresh");

  // The other order: the stale load finishes after the fresh one was kept.
  const again = deferredLoads<string>();
  cache.clear();
  const stale = cache.get("j", again.load);
  cache.clear();
  const fresh = cache.get("j", again.load);
  again.pending[1]!.resolve("fresh");
  await fresh;
  again.pending[0]!.resolve("stale");
  await stale;
  t.is(await cache.get("j", async () => "never"), "fresh");
});

test("concurrent misses of one key share one load (single flight); other keys load on their own", async (t) => {
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const loads = deferredLoads<string>();
  const waiting = Array.from({ length: 10 }, () => cache.get("k", loads.load));
  const other = cache.get("other", loads.load);
  t.is(loads.pending.length, 2);
  loads.pending[0]!.resolve("shared");
  loads.pending[1]!.resolve("own");
  t.deepEqual(await Promise.all(waiting), Array(10).fill("shared"));
  t.is(await other, "own");
  t.like(cache.stats(), { loads: 2, misses: 11 });
});

test("a failed load rejects everyone waiting on it and is not kept", async (t) => {
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const loads = deferredLoads<string>();
  const a = cache.get("k", loads.load);
  const b = cache.get("k", loads.load);
  loads.pending[0]!.reject(new Error("service down"));
  await t.throwsAsync(a, { message: "service down" });
  await t.throwsAsync(b, { message: "service down" });
  t.is(await cache.get("k", async () => "ok"), "ok");
});

test("past maxEntries the least recently used key is dropped", async (t) => {
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000, maxEntries: 2 });
  await cache.get("a", async () => "a");
  await cache.get("b", async () => "b");
  await cache.get("a", async () => "unused"); // a is now the most recent
  await cache.get("c", async () => "c");
  t.is(cache.size, 2);
  let loaded = false;
  t.is(await cache.get("a", async () => ((loaded = true), "a2")), "a");
  t.false(loaded, "a was kept");
  t.is(await cache.get("b", async () => "b2"), "b2", "b, the least recently used, was dropped");
});

test("ttlMs 0 keeps nothing: every get loads", async (t) => {
  const cache = new EventCache<number>({ clock: manualClock(), ttlMs: 0 });
  let loads = 0;
  await cache.get("k", async () => ++loads);
  await cache.get("k", async () => ++loads);
  t.is(loads, 2);
  t.is(cache.size, 0);
  t.false(cache.enabled);
});

test("with settleMs, an event drops the cache again that long after it (a slower replica of the source)", async (t) => {
  const bus = new InProcessBus();
  const cache = new EventCache<string>({ clock: manualClock(), ttlMs: 60_000 });
  const subscription = await cache.watch(bus, ["catalog.v1.changed"], { settleMs: 50 });
  await bus.publish("catalog.v1.changed", new Uint8Array(), "e1");
  // Reloaded at once from a replica that has not heard the event yet: stale.
  await cache.get("k", async () => "stale");
  t.is(await cache.get("k", async () => "never"), "stale");
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.is(await cache.get("k", async () => "fresh"), "fresh", "dropped again after settleMs");
  await subscription.stop();
});

test("peek answers a kept value without loading, and nothing on a miss, an expiry or with the cache off", async (t) => {
  const clock = manualClock();
  const cache = new EventCache<number>({ clock, ttlMs: 1000 });
  t.is(cache.peek("k"), undefined, "nothing kept yet, and peek never loads");
  t.is(await cache.get("k", async () => 7), 7);
  t.is(cache.peek("k"), 7);
  clock.advance(1000);
  t.is(cache.peek("k"), undefined, "expired");
  const off = new EventCache<number>({ clock, ttlMs: 0 });
  await off.get("k", async () => 1);
  t.is(off.peek("k"), undefined);
});
