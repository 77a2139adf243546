import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import test, { type ExecutionContext } from "ava";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { createMetrics, type Metrics } from "@payments/kit";
import { deleteTestStream, eventually, jetStreamTestEnv, manualClock, natsTestUrl, startNatsServer, uniqueName, seededRandom, TEST_OPERATOR_ENV } from "@payments/testing";
import { kvKey, NatsRateLimits, type NatsRateLimitsOptions } from "../src/nats-rate-limits.js";
import { MemoryRateLimits, type RateLimitStore } from "../src/rate-limit-store.js";
import { startGateway } from "../src/server.js";
import { startFakeApp, type FakeApp, type FakeMerchant } from "./fake-app.js";
import { call, signedCall, type Reply } from "./http-client.js";

/*
 * Rate limits that hold across gateway replicas: two apps (two "replicas"), each with its own
 * connection to a NATS key-value bucket of the test's own, on one manual clock, together
 * admit what one would; two in-memory ones admit twice that. Real NATS (127.0.0.1:4222, or
 * a server of the test's own for the outage).
 */

const BANKS = "/v1/available-banks";
const shop: FakeMerchant = { merchantId: "m_shop", apiKey: "pk_shop", apiSecret: "sk_shop" };

/**
 * A shared store on a bucket of the test's own, deleted when the test ends. Its bound is
 * generous unless a test sets it: on this loaded test machine a round trip can take 10 ms
 * and more, and past the bound a replica counts on its own (the outage test checks that).
 */
async function sharedStore(t: ExecutionContext, overrides: Partial<NatsRateLimitsOptions> & { clock: NatsRateLimitsOptions["clock"] }): Promise<NatsRateLimits> {
  const options: NatsRateLimitsOptions = { url: natsTestUrl, bucket: overrides.bucket ?? uniqueName("RL_"), ttlMs: 60_000, timeoutMs: 3_000, leaseMs: 100, ...overrides };
  const store = NatsRateLimits.open(options);
  t.teardown(async () => {
    await store.close();
    if (options.url === natsTestUrl) await deleteBucket(options.bucket);
  });
  t.true(await store.whenReady(10_000), "the shared bucket is set up");
  return store;
}

async function deleteBucket(bucket: string): Promise<void> {
  const nc = await connect({ servers: natsTestUrl });
  await (await jetstreamManager(nc)).streams.delete(`KV_${bucket}`).catch(() => undefined);
  await nc.close();
}

/** Two replicas of the gateway: each its own app over its own store, one clock. */
async function twoGateways(t: ExecutionContext, stores: (clock: ReturnType<typeof manualClock>) => Promise<[RateLimitStore, RateLimitStore]>, env: Record<string, string>): Promise<[FakeApp, FakeApp]> {
  const clock = manualClock();
  const [a, b] = await stores(clock);
  const apps = await Promise.all(
    [a, b].map((rateLimits) => startFakeApp({ merchants: [shop], clock, rateLimits, env: { TRUSTED_PROXIES: "127.0.0.1", ...env } })),
  );
  for (const app of apps) t.teardown(app.close);
  return [apps[0]!, apps[1]!];
}

/** Two stores on one bucket, as two replicas have. */
function shared(t: ExecutionContext, leaseMs = 100): (clock: ReturnType<typeof manualClock>) => Promise<[RateLimitStore, RateLimitStore]> {
  const bucket = uniqueName("RL_");
  return async (clock) => [await sharedStore(t, { clock, bucket, leaseMs }), await sharedStore(t, { clock, bucket, leaseMs })];
}

function inMemory(clock: ReturnType<typeof manualClock>): Promise<[RateLimitStore, RateLimitStore]> {
  return Promise.resolve([new MemoryRateLimits({ clock }), new MemoryRateLimits({ clock })]);
}

/** Requests sent to the two gateways in turn (a round-robin load balancer), `concurrent` at a time. */
async function roundRobin(apps: [FakeApp, FakeApp], count: number, send: (app: FakeApp) => Promise<Reply>, concurrent = 1): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < count; i += concurrent) {
    const wave = Array.from({ length: Math.min(concurrent, count - i) }, (_, j) => send(apps[(i + j) % 2]!));
    replies.push(...(await Promise.all(wave)));
  }
  return replies;
}

function statuses(replies: Reply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

function randomKeyCall(app: FakeApp, ip: string): Promise<Reply> {
  return call(app.url, { path: BANKS, headers: { "X-Forwarded-For": ip, "X-API-Key": `pk_${randomBytes(8).toString("hex")}`, "X-Timestamp": "1", "X-Signature": "00" } });
}

// ---------------------------------------------------------------- per merchant

test("per merchant: two gateways sharing the bucket admit burst + rate·t together (10, then 1 per 500 ms); two in-memory ones admit twice that", async (t) => {
  const env = { RATE_LIMIT_RPS: "2", RATE_LIMIT_BURST: "10" };
  const together = await twoGateways(t, shared(t), env);
  const clock = together[0].clock;
  // Sequential and then concurrent requests, alternating between the replicas.
  const first = await roundRobin(together, 16, (app) => signedCall(app.url, shop, clock, { path: BANKS }));
  const second = await roundRobin(together, 24, (app) => signedCall(app.url, shop, clock, { path: BANKS }), 8);
  t.deepEqual(statuses([...first, ...second]), { 200: 10, 429: 30 });
  t.is(second.find((r) => r.status === 429)?.headers["retry-after"], "1");
  clock.advance(500);
  t.deepEqual(statuses(await roundRobin(together, 6, (app) => signedCall(app.url, shop, clock, { path: BANKS }), 3)), { 200: 1, 429: 5 });

  const alone = await twoGateways(t, inMemory, env);
  t.deepEqual(statuses(await roundRobin(alone, 40, (app) => signedCall(app.url, shop, alone[0].clock, { path: BANKS }))), { 200: 20, 429: 20 }, "per replica: twice the burst");
});

test("per merchant, many requests at once on both gateways: never more than the burst between them", async (t) => {
  const [a, b] = await twoGateways(t, shared(t), { RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "25" });
  const replies = await Promise.all(Array.from({ length: 80 }, (_, i) => signedCall((i % 2 ? a : b).url, shop, a.clock, { path: BANKS })));
  t.deepEqual(statuses(replies), { 200: 25, 429: 55 });
});

// ---------------------------------------------------------------- per IP

test("failed authentications per IP, no leases (RATE_LIMIT_NATS_LEASE=0): two gateways sharing the bucket let exactly the burst reach the key lookup, in memory twice the burst", async (t) => {
  const env = { AUTH_FAILURE_LIMIT_RPS: "1", AUTH_FAILURE_LIMIT_BURST: "6" };
  const together = await twoGateways(t, shared(t, 0), env);
  const replies = await roundRobin(together, 20, (app) => randomKeyCall(app, "203.0.113.7"));
  t.is(together[0].lookups.length + together[1].lookups.length, 6, "six lookups between the two gateways");
  t.deepEqual(
    replies.map((r) => r.json.error?.code),
    [...Array<string>(6).fill("INVALID_API_KEY"), ...Array<string>(14).fill("RATE_LIMITED")],
  );
  // Another IP has its own budget, on either gateway.
  t.is((await randomKeyCall(together[1], "203.0.113.8")).json.error?.code, "INVALID_API_KEY");

  const alone = await twoGateways(t, inMemory, env);
  await roundRobin(alone, 20, (app) => randomKeyCall(app, "203.0.113.7"));
  t.is(alone[0].lookups.length + alone[1].lookups.length, 12, "per replica: twice the burst");
});

test("failed authentications per IP, with leases: the burst plus at most one lookup per gateway (the one that finds its spend refused)", async (t) => {
  const together = await twoGateways(t, shared(t), { AUTH_FAILURE_LIMIT_RPS: "1", AUTH_FAILURE_LIMIT_BURST: "6" });
  const replies = await roundRobin(together, 20, (app) => randomKeyCall(app, "203.0.113.7"));
  const lookups = together[0].lookups.length + together[1].lookups.length;
  t.true(lookups >= 6 && lookups <= 6 + 2, `${lookups} lookups`);
  t.is(replies.filter((r) => r.json.error?.code === "RATE_LIMITED").length, 20 - lookups);
  // Once each gateway knows the IP's bucket is empty, it refuses without asking, until a token is due.
  t.true(replies.slice(-10).every((r) => r.json.error?.code === "RATE_LIMITED"));
  together[0].clock.advance(1_000);
  t.is((await randomKeyCall(together[1], "203.0.113.7")).json.error?.code, "INVALID_API_KEY", "a token a second comes back");
});

test("the checkout per IP: two gateways sharing the bucket admit burst + rate·t together; in memory twice the burst", async (t) => {
  const env = { CHECKOUT_RATE_LIMIT_RPS: "2", CHECKOUT_RATE_LIMIT_BURST: "5" };
  const page = (app: FakeApp) => call(app.url, { path: "/checkout", headers: { "X-Forwarded-For": "198.51.100.23" } });
  const together = await twoGateways(t, shared(t), env);
  // No token: 404 past the limiter, 429 once the IP's budget is spent.
  t.deepEqual(statuses(await roundRobin(together, 12, page, 4)), { 404: 5, 429: 7 });
  together[0].clock.advance(1_000);
  t.deepEqual(statuses(await roundRobin(together, 4, page)), { 404: 2, 429: 2 });

  const alone = await twoGateways(t, inMemory, env);
  t.deepEqual(statuses(await roundRobin(alone, 12, page)), { 404: 10, 429: 2 });
});

// ---------------------------------------------------------------- leases


test("with leases, random arrivals on two gateways never pass more than burst + rate·(t + lease) in any window of t seconds", async (t) => {
  const clock = manualClock();
  const bucket = uniqueName("RL_");
  const leaseMs = 100;
  const stores = [await sharedStore(t, { clock, bucket, leaseMs }), await sharedStore(t, { clock, bucket, leaseMs })];
  const limiters = stores.map((s) => s.limiter("merchant"));
  const limit = { perSecond: 20, burst: 10 };
  const next = seededRandom(21);
  const start = clock.now().getTime();
  const passedAt: number[] = [];
  for (let i = 0; i < 300; i++) {
    const roll = next();
    clock.advance(roll < 0.6 ? 0 : roll < 0.9 ? Math.floor(next() * 60) : Math.floor(next() * 1_500));
    // Now and then several at once, on both gateways.
    const wave = next() < 0.3 ? 8 : 1;
    const taken = await Promise.all(Array.from({ length: wave }, () => limiters[Math.floor(next() * 2)]!.take("m", limit)));
    for (const take of taken) if (take.allowed) passedAt.push(clock.now().getTime() - start);
  }
  t.true(passedAt.length > 50, `${passedAt.length} passed`);
  for (let i = 0; i < passedAt.length; i++) {
    for (let j = i; j < passedAt.length; j++) {
      const seconds = (passedAt[j]! - passedAt[i]!) / 1000;
      t.true(j - i + 1 <= limit.burst + limit.perSecond * (seconds + leaseMs / 1000), `${j - i + 1} passed within ${seconds} s`);
    }
  }
});

test("a leased token serves this gateway without a round trip, but not once the lease is over", async (t) => {
  const clock = manualClock();
  const bucket = uniqueName("RL_");
  const [a, b] = [await sharedStore(t, { clock, bucket, leaseMs: 100 }), await sharedStore(t, { clock, bucket, leaseMs: 100 })];
  const [onA, onB] = [a.limiter("merchant"), b.limiter("merchant")];
  const limit = { perSecond: 1, burst: 4 };
  const nc = await connect({ servers: natsTestUrl });
  t.teardown(() => nc.close());
  const kv = await new Kvm(jetstream(nc)).open(bucket);
  const revision = async () => (await kv.get(kvKey("merchant", "m")))?.revision ?? 0;

  t.deepEqual(await onA.take("m", limit), { allowed: true });
  // A served one since its round trip: the next takes one for the request and one ahead.
  t.deepEqual(await onA.take("m", limit), { allowed: true });
  const written = await revision();
  t.is((await kv.get(kvKey("merchant", "m")))?.string(), `1000 ${clock.now().getTime()}`, "4 - 3 tokens: one was leased to A");
  clock.advance(100 - 1);
  t.deepEqual(await onA.take("m", limit), { allowed: true }, "the leased token");
  t.is(await revision(), written, "served without a write");

  // Again one leased, then the lease ends: B drains the bucket, and A must ask, and is refused.
  clock.advance(1_000);
  t.deepEqual(await onA.take("m", limit), { allowed: true });
  t.deepEqual(await onA.take("m", limit), { allowed: true });
  clock.advance(100);
  while ((await onB.take("m", limit)).allowed);
  t.false((await onA.take("m", limit)).allowed, "a token leased 100 ms ago is not spent");
});

test("with leases a busy key costs far fewer round trips than requests; without, one write per request", async (t) => {
  const clock = manualClock();
  const limit = { perSecond: 1_000, burst: 100 };
  const writes = async (leaseMs: number) => {
    const bucket = uniqueName("RL_");
    const stores = [await sharedStore(t, { clock, bucket, leaseMs }), await sharedStore(t, { clock, bucket, leaseMs })];
    const limiters = stores.map((s) => s.limiter("merchant"));
    let allowed = 0;
    // 400 requests, one every 2 ms, alternating: 250 a second on each gateway, well under the rate.
    for (let i = 0; i < 400; i++) {
      clock.advance(2);
      if ((await limiters[i % 2]!.take("busy", limit)).allowed) allowed++;
    }
    const nc = await connect({ servers: natsTestUrl });
    const entry = await (await new Kvm(jetstream(nc)).open(bucket)).get(kvKey("merchant", "busy"));
    await nc.close();
    return { allowed, writes: entry?.revision ?? 0 };
  };
  const leased = await writes(100);
  t.is(leased.allowed, 400, "under the rate, nothing is refused");
  t.true(leased.writes <= 400 / 4, `${leased.writes} writes for 400 requests`);
  const exact = await writes(0);
  t.deepEqual(exact, { allowed: 400, writes: 400 });
});

// ---------------------------------------------------------------- the store itself

test("keys are namespaced per limit and escaped for NATS; idle keys vanish after the bucket's TTL", async (t) => {
  t.is(kvKey("merchant", "m_01HZY-abc"), "merchant.m_01HZY-abc");
  t.is(kvKey("checkout", "2001:db8::1"), "checkout.2001=3Adb8=3A=3A1");
  t.is(kvKey("auth-failure", "203.0.113.7"), "auth-failure.203=2E0=2E113=2E7");

  const clock = manualClock();
  const bucket = uniqueName("RL_");
  const store = await sharedStore(t, { clock, bucket, ttlMs: 1_000 });
  const limiter = store.limiter("checkout");
  t.deepEqual(await limiter.take("192.0.2.1", { perSecond: 1, burst: 2 }), { allowed: true });

  const nc = await connect({ servers: natsTestUrl });
  t.teardown(() => nc.close());
  const kv = await new Kvm(jetstream(nc)).open(bucket);
  const entry = await kv.get(kvKey("checkout", "192.0.2.1"));
  t.is(entry?.string(), `1000 ${clock.now().getTime()}`, "one token of two left, at the clock's time");
  t.is((await kv.status()).ttl, 1_000);
  await eventually(async () => (await kv.get(kvKey("checkout", "192.0.2.1"))) === null, "the idle key vanishes after the TTL", 10_000);
});

test("a bucket made with another TTL follows the setting", async (t) => {
  const clock = manualClock();
  const bucket = uniqueName("RL_");
  await (await sharedStore(t, { clock, bucket, ttlMs: 5_000 })).close();
  await sharedStore(t, { clock, bucket, ttlMs: 7_000 });
  const nc = await connect({ servers: natsTestUrl });
  t.teardown(() => nc.close());
  t.is((await (await new Kvm(jetstream(nc)).open(bucket)).status()).ttl, 7_000);
});

/** The pid of the nats-server a test started on `port` (startNatsServer runs `nats-server -a 127.0.0.1 -p <port> ...`). */
function natsServerPid(port: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (args[0]?.endsWith("nats-server") && args[args.indexOf("-p") + 1] === String(port)) return Number(entry);
  }
  throw new Error(`no nats-server on port ${port}`);
}

/** Requests the local limiter answered, all of them or those of one reason ("timeout": it waited out the bound; "unreachable": NATS was not asked). */
function fallbacks(metrics: Metrics, reason?: "timeout" | "unreachable"): Promise<number> {
  return metrics.registry
    .getSingleMetricAsString("payments_gateway_rate_limit_fallbacks_total")
    .then((text) =>
      text
        .split("\n")
        .filter((l) => !l.startsWith("#") && l.trim() && (reason === undefined || l.includes(`reason="${reason}"`)))
        .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0),
    );
}

// Serial: alone on the event loop, so the timings it checks are this test's own.
test.serial("NATS stopped or frozen: each request waits at most the bound, then the local limiter answers (counted); no 500; shared again once NATS is back", async (t) => {
  const nats = await startNatsServer();
  t.teardown(() => nats.destroy());
  const clock = manualClock();
  const metrics = createMetrics();
  const store = await sharedStore(t, { clock, url: nats.url, timeoutMs: 50, metrics });
  const app = await startFakeApp({ merchants: [shop], clock, rateLimits: store, metrics, env: { RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "3", TRUSTED_PROXIES: "127.0.0.1" } });
  t.teardown(app.close);
  const limiter = store.limiter("merchant");
  const limit = { perSecond: 1, burst: 3 };
  t.deepEqual(await limiter.take("m_a", limit), { allowed: true });
  t.is(await fallbacks(metrics), 0, "the shared bucket answered");

  // Frozen (SIGSTOP): the connection looks alive, so each request waits out the bound, and no longer.
  const pid = natsServerPid(nats.port);
  process.kill(pid, "SIGSTOP");
  try {
    // Which path answered is read from the fallback reasons, not from timings (the machine may
    // be loaded): "timeout" = waited out the bound, "unreachable" = NATS not asked at all. A
    // wall-clock bound far above the 50 ms only says the wait is bounded, not how fast.
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const taken = await limiter.take(`m_frozen${i}`, limit);
      const waited = performance.now() - started;
      t.true(taken.allowed, "the local limiter answers");
      t.true(waited < 5_000, `answered after ${waited.toFixed(1)} ms: the wait is bounded`);
    }
    t.is(await fallbacks(metrics, "timeout"), 3, "each waited out the bound, then the local limiter answered");
    // After a few timeouts in a row the store is skipped for a while: NATS is not even asked.
    t.deepEqual(await limiter.take("m_frozen", limit), { allowed: true });
    t.is(await fallbacks(metrics, "timeout"), 3, "skipped while NATS keeps failing: no wait this time");
    t.is(await fallbacks(metrics, "unreachable"), 1);
    const replies = await Promise.all(Array.from({ length: 5 }, () => signedCall(app.url, shop, clock, { path: BANKS })));
    t.deepEqual(statuses(replies), { 200: 3, 429: 2 }, "the local limiter holds the limit of this replica");
  } finally {
    process.kill(pid, "SIGCONT");
  }
  t.true((await fallbacks(metrics)) >= 9);

  // Stopped: disconnected, so the local limiter answers at once.
  await nats.stop();
  await eventually(() => !store.isReady(), "the store sees NATS gone", 10_000);
  const timeoutsBefore = await fallbacks(metrics, "timeout");
  const replies = await Promise.all(Array.from({ length: 6 }, () => signedCall(app.url, shop, clock, { path: BANKS })));
  t.is(await fallbacks(metrics, "timeout"), timeoutsBefore, "disconnected: answered at once, without waiting for NATS");
  t.false(replies.some((r) => r.status >= 500), JSON.stringify(statuses(replies)));

  // Back: the shared bucket answers again (the earlier state survived in the server's store).
  await nats.start();
  await eventually(() => store.isReady(), "the store reconnects", 15_000);
  const before = await fallbacks(metrics);
  t.deepEqual(await limiter.take("m_a", limit), { allowed: true });
  t.deepEqual(await limiter.take("m_a", limit), { allowed: true });
  t.false((await limiter.take("m_a", limit)).allowed, "the shared bucket remembered the first token");
  t.is(await fallbacks(metrics), before);
});

test("a bucket deleted under the gateway (a NATS with a new store) is made again; meanwhile the local limiter answers", async (t) => {
  const clock = manualClock();
  const bucket = uniqueName("RL_");
  const store = await sharedStore(t, { clock, bucket });
  const limiter = store.limiter("merchant");
  const limit = { perSecond: 1, burst: 1 };
  t.deepEqual(await limiter.take("m", limit), { allowed: true });
  await deleteBucket(bucket);
  // Answered all the same (by the local limiter once the shared bucket fails).
  t.is(typeof (await limiter.take("m", limit)).allowed, "boolean");
  // Requests that keep failing look for the bucket (at most once a second) and make it again.
  const nc = await connect({ servers: natsTestUrl });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  let attempt = 0;
  await eventually(
    async () => {
      // A key of its own each time: one the gateway knows to be empty would not ask NATS.
      await limiter.take(`m${attempt++}`, limit);
      return jsm.streams.info(`KV_${bucket}`).then(
        () => true,
        () => false,
      );
    },
    "the bucket is made again",
    15_000,
  );
  await eventually(
    async () => {
      clock.advance(1_000);
      return (await limiter.take("m2", limit)).allowed && !(await limiter.take("m2", limit)).allowed;
    },
    "the shared bucket counts again",
    15_000,
  );
  t.is((await (await new Kvm(jetstream(nc)).open(bucket)).get(kvKey("merchant", "m2")))?.string(), `0 ${clock.now().getTime()}`);
});

// ---------------------------------------------------------------- as deployed

test("startGateway: unset RATE_LIMIT_STORE is nats for the split deployment's gateway when NATS_URL is set (bucket <NATS_STREAM>_RATE_LIMITS), memory otherwise; two such gateways share one checkout budget per IP", async (t) => {
  const js = jetStreamTestEnv();
  t.teardown(() => deleteTestStream(js));
  t.teardown(() => deleteBucket(`${js.NATS_STREAM}_RATE_LIMITS`));
  // No service runs: the checkout without a token answers 404 after the limiter, asking none.
  const nowhere = "http://127.0.0.1:1";
  const urls = { merchantUrl: nowhere, bankCatalogUrl: nowhere, depositUrl: nowhere, payoutUrl: nowhere, callbackUrl: nowhere };
  // A generous bound: on this loaded machine a round trip may pass 50 ms, and then a replica would count alone.
  const env = { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", CHECKOUT_RATE_LIMIT_RPS: "1", CHECKOUT_RATE_LIMIT_BURST: "4", RATE_LIMIT_NATS_TIMEOUT: "3s", ...js };
  const start = async (options: Parameters<typeof startGateway>[0]) => {
    const gateway = await startGateway({ ...urls, ...options, env: { ...TEST_OPERATOR_ENV, ...options?.env } });
    t.teardown(() => gateway.stop());
    return gateway;
  };
  const replicas = [await start({ env, split: true }), await start({ env, split: true })];
  t.deepEqual(replicas.map((g) => g.rateLimitStore), ["nats", "nats"]);
  t.is((await start({ env })).rateLimitStore, "memory", "the all-in-one and other embeddings");
  t.is((await start({ env: { ...env, RATE_LIMIT_STORE: "memory" }, split: true })).rateLimitStore, "memory");
  t.is((await start({ env: { ...env, NATS_URL: "" }, split: true })).rateLimitStore, "memory", "no NATS_URL");

  const started = performance.now();
  const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => call(replicas[i % 2]!.url, { path: "/checkout" })));
  const seconds = (performance.now() - started) / 1000;
  const served = replies.filter((r) => r.status === 404).length;
  t.deepEqual(statuses(replies)[500], undefined);
  t.true(served >= 4 && served <= 4 + Math.floor(seconds * 1), `${served} served in ${seconds.toFixed(2)} s by two gateways at 1/s with a burst of 4`);
  t.is(served + (statuses(replies)[429] ?? 0), 12);
  const nc = await connect({ servers: natsTestUrl });
  t.teardown(() => nc.close());
  const bucket = await new Kvm(jetstream(nc)).open(`${js.NATS_STREAM}_RATE_LIMITS`);
  t.regex((await bucket.get(kvKey("checkout", "127.0.0.1")))?.string() ?? "", /^\d+ \d+$/, "the checkout's key in the deployment's bucket");
});
