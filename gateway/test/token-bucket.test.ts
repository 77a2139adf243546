import test from "ava";
import { manualClock, seededRandom } from "@payments/testing";
import { TokenBuckets, type BucketLimit } from "../src/token-bucket.js";

/*
 * The token bucket alone, on a manual clock: the exact promise (at most burst + rate·t in
 * any t seconds), the exact waits it announces, and its bounded memory.
 */


test("rate 2, burst 10: 10 pass at once, the 11th is refused for 500 ms, and after 0.5 s one more passes", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  const limit = { perSecond: 2, burst: 10 };
  for (let i = 0; i < 10; i++) t.deepEqual(buckets.take("m", limit), { allowed: true }, `request ${i + 1}`);
  t.deepEqual(buckets.take("m", limit), { allowed: false, retryAfterMs: 500 });
  clock.advance(499);
  t.deepEqual(buckets.take("m", limit), { allowed: false, retryAfterMs: 1 });
  clock.advance(1);
  t.deepEqual(buckets.take("m", limit), { allowed: true });
  t.deepEqual(buckets.take("m", limit), { allowed: false, retryAfterMs: 500 });
});

test("the fixed-window flaw is gone: at 2/s with a burst of 10, 1.1 s lets through 12, not 19", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  const limit = { perSecond: 2, burst: 10 };
  let passed = 0;
  for (let ms = 0; ms <= 1100; ms += 10) {
    for (let i = 0; i < 5; i++) if (buckets.take("m", limit).allowed) passed++;
    clock.advance(10);
  }
  t.is(passed, 10 + 2);
});

test("in any interval of t seconds at most burst + rate·t requests pass, for random limits and random arrival times", (t) => {
  for (let seed = 1; seed <= 60; seed++) {
    const next = seededRandom(seed);
    const clock = manualClock();
    const buckets = new TokenBuckets({ clock });
    const limit: BucketLimit = { perSecond: 1 + Math.floor(next() * 20), burst: 1 + Math.floor(next() * 30) };
    const passedAt: number[] = [];
    const start = clock.now().getTime();
    for (let i = 0; i < 400; i++) {
      // Clusters (no time at all), short gaps and long pauses, so buckets empty and refill.
      const roll = next();
      clock.advance(roll < 0.5 ? 0 : roll < 0.9 ? Math.floor(next() * 200) : Math.floor(next() * 5_000));
      if (buckets.take("k", limit).allowed) passedAt.push(clock.now().getTime() - start);
    }
    for (let i = 0; i < passedAt.length; i++) {
      for (let j = i; j < passedAt.length; j++) {
        const seconds = (passedAt[j]! - passedAt[i]!) / 1000;
        const count = j - i + 1;
        if (count > limit.burst + limit.perSecond * seconds) {
          t.fail(`seed ${seed}, ${JSON.stringify(limit)}: ${count} passed within ${seconds} s`);
          return;
        }
      }
    }
  }
  t.pass();
});

test("a refusal's wait is exact: one millisecond sooner is still refused, at the wait a token is there", (t) => {
  for (let seed = 1; seed <= 30; seed++) {
    const next = seededRandom(seed * 7919);
    const clock = manualClock();
    const buckets = new TokenBuckets({ clock });
    const limit: BucketLimit = { perSecond: 1 + Math.floor(next() * 50), burst: 1 + Math.floor(next() * 10) };
    for (let i = 0; i < 200; i++) {
      clock.advance(Math.floor(next() * 30));
      const taken = buckets.take("k", limit);
      if (taken.allowed) continue;
      t.true(taken.retryAfterMs >= 1);
      t.is(buckets.waitMs("k", limit), taken.retryAfterMs, "a refusal spends nothing");
      clock.advance(taken.retryAfterMs - 1);
      t.true(buckets.waitMs("k", limit) > 0, `seed ${seed}: a token came early`);
      clock.advance(1);
      t.is(buckets.waitMs("k", limit), 0, `seed ${seed}: no token at the announced time`);
    }
  }
});

test("a client sending exactly at the rate is never refused, whatever the burst", (t) => {
  for (const limit of [
    { perSecond: 1, burst: 1 },
    { perSecond: 3, burst: 1 },
    { perSecond: 7, burst: 2 },
    { perSecond: 100, burst: 200 },
    { perSecond: 1000, burst: 1 },
  ]) {
    const clock = manualClock();
    const buckets = new TokenBuckets({ clock });
    // Every 1000/rate ms, rounded up so the client is never ahead of the rate.
    const gap = Math.ceil(1000 / limit.perSecond);
    for (let i = 0; i < 500; i++) {
      t.true(buckets.take("k", limit).allowed, `${JSON.stringify(limit)}: request ${i + 1}`);
      clock.advance(gap);
    }
  }
});

test("waitMs says 0 while a token is there and spends nothing", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  const limit = { perSecond: 1, burst: 2 };
  for (let i = 0; i < 5; i++) t.is(buckets.waitMs("k", limit), 0);
  t.true(buckets.take("k", limit).allowed);
  t.true(buckets.take("k", limit).allowed);
  t.is(buckets.waitMs("k", limit), 1000);
  t.is(buckets.size, 1);
});

test("keys are independent", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  const limit = { perSecond: 1, burst: 3 };
  for (let i = 0; i < 3; i++) t.true(buckets.take("a", limit).allowed);
  t.false(buckets.take("a", limit).allowed);
  for (let i = 0; i < 3; i++) t.true(buckets.take("b", limit).allowed);
  t.false(buckets.take("b", limit).allowed);
});

test("a bucket refills up to its burst and no further, however long it waits", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  const limit = { perSecond: 5, burst: 4 };
  for (let i = 0; i < 4; i++) t.true(buckets.take("k", limit).allowed);
  clock.advance(3_600_000);
  for (let i = 0; i < 4; i++) t.true(buckets.take("k", limit).allowed);
  t.false(buckets.take("k", limit).allowed);
});

test("a clock that steps back refills nothing", (t) => {
  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => new Date(now) };
  const buckets = new TokenBuckets({ clock });
  const limit = { perSecond: 1, burst: 1 };
  t.true(buckets.take("k", limit).allowed);
  now -= 10_000;
  t.false(buckets.take("k", limit).allowed);
  now += 10_000;
  t.false(buckets.take("k", limit).allowed, "the time stepped back and forth again is not elapsed time");
  now += 1_000;
  t.true(buckets.take("k", limit).allowed);
});

test("a burst below one still lets one request through a second; a rate of 0 is refused as a wiring error", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  t.true(buckets.take("k", { perSecond: 1, burst: 0 }).allowed);
  t.false(buckets.take("k", { perSecond: 1, burst: 0 }).allowed);
  t.throws(() => buckets.take("k", { perSecond: 0, burst: 5 }), { instanceOf: RangeError });
});

test("a lower limit applies at once: the bucket holds no more than the new burst", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock });
  t.true(buckets.take("k", { perSecond: 100, burst: 200 }).allowed);
  let passed = 0;
  while (buckets.take("k", { perSecond: 1, burst: 3 }).allowed) passed++;
  t.is(passed, 3);
});

test("memory is bounded: full buckets are dropped as they go idle, and past maxKeys the least recently used key is forgotten", (t) => {
  const clock = manualClock();
  const buckets = new TokenBuckets({ clock, maxKeys: 1_000 });
  const limit = { perSecond: 10, burst: 5 };
  // A full bucket is the same as none: one that has refilled is swept out by later requests.
  t.true(buckets.take("once", { perSecond: 10, burst: 1 }).allowed);
  t.is(buckets.size, 1);
  clock.advance(99);
  t.true(buckets.take("x", limit).allowed);
  t.is(buckets.size, 2, "100 ms to refill: not yet");
  clock.advance(1);
  t.true(buckets.take("y", limit).allowed);
  t.is(buckets.size, 2, "'once' is full again and gone");
  t.true(buckets.take("once", { perSecond: 10, burst: 1 }).allowed, "and starts full");
  clock.advance(500);
  t.true(buckets.take("z", limit).allowed);
  t.true(buckets.take("z2", limit).allowed);
  t.is(buckets.size, 2, "x, y and once refilled and were swept, two per request; z and z2 are in use");

  // A flood of distinct keys, each with one request and no time passing: bounded by maxKeys.
  for (let i = 0; i < 5_000; i++) buckets.take(`flood-${i}`, limit);
  t.is(buckets.size, 1_000);

  // Time passes, new keys arrive: the idle ones go, a couple per request.
  clock.advance(1_000);
  for (let i = 0; i < 600; i++) buckets.take(`later-${i}`, limit);
  t.true(buckets.size <= 600, String(buckets.size));

  // A key in debt is recent, so it is kept while older ones are dropped.
  const busy = new TokenBuckets({ clock, maxKeys: 3 });
  for (let i = 0; i < 5; i++) busy.take("busy", limit);
  t.false(busy.take("busy", limit).allowed);
  busy.take("a", limit);
  busy.take("b", limit);
  busy.take("busy", limit);
  busy.take("c", limit);
  t.is(busy.size, 3);
  t.false(busy.take("busy", limit).allowed, "the most recently used key kept its debt");
});
