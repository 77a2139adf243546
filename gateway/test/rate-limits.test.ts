import { randomBytes } from "node:crypto";
import test from "ava";
import { Code } from "@connectrpc/connect";
import { serviceError } from "@payments/kit";
import { startFakeApp, type FakeApp, type FakeMerchant } from "./fake-app.js";
import { call, signedCall, type Reply } from "./http-client.js";

/*
 * The three token buckets of the edge, over HTTP on a manual clock: per merchant (check 8),
 * per client IP on failed authentication (before the key lookup), and per client IP on the
 * public checkout. 127.0.0.1 is a trusted proxy here, so X-Forwarded-For plays the client.
 */

const BANKS = "/v1/available-banks";
const shop: FakeMerchant = { merchantId: "m_shop", apiKey: "pk_shop", apiSecret: "sk_shop" };
const other: FakeMerchant = { merchantId: "m_other", apiKey: "pk_other", apiSecret: "sk_other" };

function from(ip: string): Record<string, string> {
  return { "X-Forwarded-For": ip };
}

function isRateLimited(t: { is(a: unknown, b: unknown, m?: string): void; regex(s: string, r: RegExp): void }, reply: Reply, retryAfter: string): void {
  t.is(reply.status, 429, reply.text);
  t.is(reply.json.success, false);
  t.is(reply.json.error?.code, "RATE_LIMITED");
  t.is(reply.headers["retry-after"], retryAfter);
  t.regex(String(reply.headers["x-request-id"]), /^[A-Za-z0-9._:-]+$/);
}

/** A request with a made-up API key: 401 INVALID_API_KEY after a lookup. */
function randomKeyCall(app: FakeApp, ip: string): Promise<Reply> {
  return call(app.url, { path: BANKS, headers: { ...from(ip), "X-API-Key": `pk_${randomBytes(8).toString("hex")}`, "X-Timestamp": "1", "X-Signature": "00" } });
}

// ---------------------------------------------------------------- per merchant

test("a merchant at 2/s with a burst of 10: 10 pass at once, the 11th is 429 RATE_LIMITED with Retry-After, and 0.5 s later one more passes", async (t) => {
  const app = await startFakeApp({ merchants: [shop, other], env: { RATE_LIMIT_RPS: "2", RATE_LIMIT_BURST: "10", TRUSTED_PROXIES: "127.0.0.1" } });
  t.teardown(app.close);
  const burst = await Promise.all(Array.from({ length: 10 }, () => signedCall(app.url, shop, app.clock, { path: BANKS })));
  t.deepEqual(burst.map((r) => r.status), Array(10).fill(200));

  isRateLimited(t, await signedCall(app.url, shop, app.clock, { path: BANKS }), "1");
  // Another merchant has its own bucket.
  t.is((await signedCall(app.url, other, app.clock, { path: BANKS })).status, 200);

  app.clock.advance(499);
  isRateLimited(t, await signedCall(app.url, shop, app.clock, { path: BANKS }), "1");
  app.clock.advance(1);
  t.is((await signedCall(app.url, shop, app.clock, { path: BANKS })).status, 200);
  isRateLimited(t, await signedCall(app.url, shop, app.clock, { path: BANKS }), "1");
});

test("the merchant's own rate and burst win over the defaults; Retry-After is whole seconds, rounded up", async (t) => {
  const slow: FakeMerchant = { merchantId: "m_slow", apiKey: "pk_slow", apiSecret: "sk_slow", rateLimitPerSecond: 1, rateLimitBurst: 3 };
  const app = await startFakeApp({ merchants: [slow], env: { RATE_LIMIT_RPS: "100", RATE_LIMIT_BURST: "200" } });
  t.teardown(app.close);
  for (let i = 0; i < 3; i++) t.is((await signedCall(app.url, slow, app.clock, { path: BANKS })).status, 200);
  isRateLimited(t, await signedCall(app.url, slow, app.clock, { path: BANKS }), "1");
  app.clock.advance(1_000);
  t.is((await signedCall(app.url, slow, app.clock, { path: BANKS })).status, 200);
});

test("over HTTP, random arrival times never let more than burst + rate·t requests of a merchant through in any window", async (t) => {
  const app = await startFakeApp({ merchants: [shop], env: { RATE_LIMIT_RPS: "2", RATE_LIMIT_BURST: "10" } });
  t.teardown(app.close);
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const start = app.clock.now().getTime();
  const passedAt: number[] = [];
  let refused = 0;
  for (let i = 0; i < 150; i++) {
    const roll = next();
    app.clock.advance(roll < 0.6 ? 0 : roll < 0.9 ? Math.floor(next() * 400) : Math.floor(next() * 4_000));
    const reply = await signedCall(app.url, shop, app.clock, { path: BANKS });
    if (reply.status === 200) passedAt.push(app.clock.now().getTime() - start);
    else {
      t.is(reply.status, 429);
      refused++;
    }
  }
  t.true(refused > 0 && passedAt.length > 10, `${passedAt.length} passed, ${refused} refused: the loop must test both`);
  for (let i = 0; i < passedAt.length; i++) {
    for (let j = i; j < passedAt.length; j++) {
      const seconds = (passedAt[j]! - passedAt[i]!) / 1000;
      t.true(j - i + 1 <= 10 + 2 * seconds, `${j - i + 1} requests passed within ${seconds} s`);
    }
  }
});

// ---------------------------------------------------------------- failed authentication, per client IP

test("an IP over its failed-authentication budget gets 429 before any key lookup; a merchant from another IP is unaffected", async (t) => {
  const app = await startFakeApp({ merchants: [shop], env: { AUTH_FAILURE_LIMIT_RPS: "5", AUTH_FAILURE_LIMIT_BURST: "20", TRUSTED_PROXIES: "127.0.0.1" } });
  t.teardown(app.close);
  const flooder = "203.0.113.66";
  for (let i = 0; i < 20; i++) {
    const reply = await randomKeyCall(app, flooder);
    t.is(reply.json.error?.code, "INVALID_API_KEY", `attempt ${i + 1}`);
  }
  t.is(app.lookups.length, 20);

  // The budget is spent: nothing from this IP reaches the lookup, whatever key it sends.
  const refused = await Promise.all(Array.from({ length: 50 }, () => randomKeyCall(app, flooder)));
  for (const reply of refused) isRateLimited(t, reply, "1");
  isRateLimited(t, await call(app.url, { path: BANKS, headers: from(flooder) }), "1");
  t.is(app.lookups.length, 20, "no lookup for a throttled IP");

  // A merchant elsewhere is served as usual.
  t.is((await signedCall(app.url, shop, app.clock, { path: BANKS, headers: from("198.51.100.10") })).status, 200);

  // 5 a second come back: after 200 ms one more attempt reaches the lookup, then 429 again.
  app.clock.advance(200);
  t.is((await randomKeyCall(app, flooder)).json.error?.code, "INVALID_API_KEY");
  isRateLimited(t, await randomKeyCall(app, flooder), "1");
  t.is(app.lookups.length, 22, "the merchant's lookup and the one refilled attempt");
});

test("every 401 of the authentication table spends the budget, a merchant's valid requests never do", async (t) => {
  const app = await startFakeApp({ merchants: [shop], env: { AUTH_FAILURE_LIMIT_RPS: "1", AUTH_FAILURE_LIMIT_BURST: "4", TRUSTED_PROXIES: "127.0.0.1" } });
  t.teardown(app.close);
  const ip = "192.0.2.5";
  // Many good requests first: they cost nothing.
  for (let i = 0; i < 30; i++) t.is((await signedCall(app.url, shop, app.clock, { path: BANKS, headers: from(ip) })).status, 200);

  const codes = [];
  codes.push((await call(app.url, { path: BANKS, headers: from(ip) })).json.error?.code);
  codes.push((await call(app.url, { path: BANKS, headers: { ...from(ip), "X-API-Key": shop.apiKey } })).json.error?.code);
  codes.push((await call(app.url, { path: BANKS, headers: { ...from(ip), "X-API-Key": shop.apiKey, "X-Timestamp": "1" } })).json.error?.code);
  codes.push((await signedCall(app.url, { ...shop, apiSecret: "wrong" }, app.clock, { path: BANKS, headers: from(ip) })).json.error?.code);
  t.deepEqual(codes, ["MISSING_API_KEY", "MISSING_TIMESTAMP", "MISSING_SIGNATURE", "INVALID_SIGNATURE"]);

  // Four failures spent a burst of four: now even the merchant's own signed request from this IP waits.
  isRateLimited(t, await signedCall(app.url, shop, app.clock, { path: BANKS, headers: from(ip) }), "1");
  app.clock.advance(1_000);
  t.is((await signedCall(app.url, shop, app.clock, { path: BANKS, headers: from(ip) })).status, 200);
});

test("X-Forwarded-For from an untrusted peer buys no fresh budget: the socket address is the client", async (t) => {
  const app = await startFakeApp({ env: { AUTH_FAILURE_LIMIT_RPS: "5", AUTH_FAILURE_LIMIT_BURST: "3" } });
  t.teardown(app.close);
  for (let i = 0; i < 3; i++) t.is((await randomKeyCall(app, `10.0.0.${i}`)).status, 401);
  isRateLimited(t, await randomKeyCall(app, "10.0.0.99"), "1");
  t.is(app.lookups.length, 3);
});

test("AUTH_FAILURE_LIMIT_RPS=0 turns the failed-authentication limit off", async (t) => {
  const app = await startFakeApp({ env: { AUTH_FAILURE_LIMIT_RPS: "0", AUTH_FAILURE_LIMIT_BURST: "1" } });
  t.teardown(app.close);
  const replies = await Promise.all(Array.from({ length: 40 }, () => randomKeyCall(app, "ignored")));
  t.deepEqual(new Set(replies.map((r) => r.status)), new Set([401]));
  t.is(app.lookups.length, 40);
});

// ---------------------------------------------------------------- checkout, per client IP

test("every /checkout request spends its IP's bucket: 30 at once, then 429 with the checkout's security headers; another IP is unaffected", async (t) => {
  let served = 0;
  const app = await startFakeApp({
    env: { CHECKOUT_RATE_LIMIT_RPS: "10", CHECKOUT_RATE_LIMIT_BURST: "30", TRUSTED_PROXIES: "127.0.0.1" },
    deposits: {
      getCheckout: () => {
        served++;
        throw serviceError(Code.NotFound, "CHECKOUT_NOT_FOUND", "no such checkout");
      },
      simulatePayment: () => {
        served++;
        throw serviceError(Code.NotFound, "CHECKOUT_NOT_FOUND", "no such checkout");
      },
    },
  });
  t.teardown(app.close);
  const customer = "198.51.100.77";
  const token = "tok_0123456789abcdef";
  // The page, its status and simulate share one budget.
  const paths = [`/checkout?token=${token}`, `/checkout/status?token=${token}`];
  const first = await Promise.all(Array.from({ length: 29 }, (_, i) => call(app.url, { path: paths[i % 2]!, headers: from(customer) })));
  first.push(await call(app.url, { method: "POST", path: `/checkout/simulate?token=${token}`, headers: from(customer) }));
  t.deepEqual(new Set(first.map((r) => r.status)), new Set([404]));
  t.is(served, 30);

  const refused = await call(app.url, { path: `/checkout/status?token=${token}`, headers: from(customer) });
  isRateLimited(t, refused, "1");
  t.is(refused.headers["cache-control"], "no-store");
  t.is(refused.headers["referrer-policy"], "no-referrer");
  t.truthy(refused.headers["content-security-policy"]);
  isRateLimited(t, await call(app.url, { path: `/checkout?token=${token}`, headers: from(customer) }), "1");
  t.is(served, 30, "a throttled request never reaches the deposit service");

  t.is((await call(app.url, { path: `/checkout/status?token=${token}`, headers: from("198.51.100.78") })).status, 404);

  // 10 a second: 100 ms buys one more.
  app.clock.advance(100);
  t.is((await call(app.url, { path: `/checkout/status?token=${token}`, headers: from(customer) })).status, 404);
  isRateLimited(t, await call(app.url, { path: `/checkout/status?token=${token}`, headers: from(customer) }), "1");
});

test("the checkout limit leaves other public routes alone, and CHECKOUT_RATE_LIMIT_RPS=0 turns it off", async (t) => {
  const limited = await startFakeApp({ env: { CHECKOUT_RATE_LIMIT_RPS: "1", CHECKOUT_RATE_LIMIT_BURST: "1" } });
  t.teardown(limited.close);
  t.is((await call(limited.url, { path: "/checkout/status" })).status, 404);
  t.is((await call(limited.url, { path: "/checkout/status" })).status, 429);
  const assets = await Promise.all(Array.from({ length: 5 }, () => call(limited.url, { path: "/assets/banks/0001.svg" })));
  t.false(assets.some((r) => r.status === 429));

  const off = await startFakeApp({ env: { CHECKOUT_RATE_LIMIT_RPS: "0", CHECKOUT_RATE_LIMIT_BURST: "1" } });
  t.teardown(off.close);
  const replies = await Promise.all(Array.from({ length: 40 }, () => call(off.url, { path: "/checkout/status" })));
  t.deepEqual(new Set(replies.map((r) => r.status)), new Set([404]));
});
