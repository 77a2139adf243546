import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { Health } from "@payments/contracts/health";
import { MerchantChangedSchema, MerchantService, MerchantStatus, type MerchantChanged } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { API_KEY_SCOPES } from "@payments/access";
import { createLogger, createMetrics, type RunningServices } from "@payments/kit";
import { createServiceClient, eventually, manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { createApp } from "../src/app.js";
import { loadGatewayConfig } from "../src/config.js";
import { CredentialCache, MERCHANT_CHANGED_TOPIC } from "../src/credential-cache.js";
import { success } from "../src/envelope.js";
import { startGateway, type RunningGateway } from "../src/server.js";
import { authHeaders, call, signedCall, type Credentials, type Reply } from "./http-client.js";

/*
 * The gateway against the real merchant and bank-catalog services (SQLite, in-process bus),
 * sharing one manual clock. Tests that move the clock are serial; ava runs them first.
 */

const clock = manualClock();
const PUBLIC_BASE_URL = "https://pay.example.test";
const BANKS = "/v1/available-banks";

const dataDirs: string[] = [];
const serviceLog: string[] = [];
const changes: MerchantChanged[] = [];
let running: RunningServices | undefined;
let merchants: Client<typeof MerchantService>;
let bankCatalog: Client<typeof BankCatalogService>;
/** Behind a trusted proxy (127.0.0.1): X-Forwarded-For names the caller. */
let gateway: RunningGateway | undefined;
/** No trusted proxies: the socket address is the caller whatever X-Forwarded-For says. */
let direct: RunningGateway | undefined;
/** The gateway's app with a signed POST echo endpoint, for the body rules. */
let echo: { url: string; server: http.Server } | undefined;

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "gateway-test-"));
  dataDirs.push(dir);
  return dir;
}

function servicesEnv(dataDir: string) {
  return { GRPC_PORT: "0", DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn" };
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} did not start`);
  return value;
}

const gw = () => must(gateway, "the gateway").url;

test.before(async () => {
  // Debug level into memory, to see which request id the services logged.
  const logger = createLogger({ service: "all-in-one", level: "debug", destination: { write: (line: string) => void serviceLog.push(line) } });
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], { env: servicesEnv(tempDir()), clock, logger, receivingAccounts: true });
  merchants = createServiceClient(MerchantService, running.server.url);
  bankCatalog = createServiceClient(BankCatalogService, running.server.url);
  await running.bus.watch([MERCHANT_CHANGED_TOPIC], async (message) => {
    changes.push(fromBinary(MerchantChangedSchema, message.data));
  });

  const urls = { merchantUrl: running.server.url, bankCatalogUrl: running.server.url, depositUrl: running.server.url, payoutUrl: running.server.url, callbackUrl: running.server.url };
  gateway = await startGateway({
    // The authentication table is proven here by many 401s from one address on a clock that
    // stands still; the throttle on failed authentication has its own suite (rate-limits).
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", PUBLIC_BASE_URL, TRUSTED_PROXIES: "127.0.0.1,::1", AUTH_FAILURE_LIMIT_RPS: "0" },
    bus: running.bus,
    clock,
    ...urls,
  });
  direct = await startGateway({ env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn" }, bus: running.bus, clock, ...urls });

  // The app's own clients call as the gateway does: its workload identity, and the merchant it speaks for.
  const asGateway = { operator: null, workload: "gateway", clock } as const;
  const credentials = new CredentialCache({ merchants: createServiceClient(MerchantService, running.server.url, asGateway), clock, ttlMs: 30_000, negativeTtlMs: 5_000 });
  await credentials.watch(running.bus);
  const app = createApp({
    config: loadGatewayConfig({ PORT: "0" }),
    merchants: createServiceClient(MerchantService, running.server.url, asGateway),
    bankCatalog: createServiceClient(BankCatalogService, running.server.url, asGateway),
    deposits: createServiceClient(DepositService, running.server.url, asGateway),
    payouts: createServiceClient(PayoutService, running.server.url, asGateway),
    callbacks: createServiceClient(CallbackService, running.server.url, asGateway),
    health: { merchant: createServiceClient(Health, running.server.url, asGateway) },
    credentials,
    logger: createLogger({ service: "gateway", level: "warn" }),
    metrics: createMetrics(),
    clock,
    routes: [
      {
        method: "POST",
        path: "/v1/echo",
        access: "merchant",
        scopes: API_KEY_SCOPES,
        handler: (ctx) => {
          ctx.status = 201;
          ctx.body = success({ received: ctx.state.body }, clock);
        },
      },
    ],
  });
  const handle = app.callback();
  // Fire-and-forget is safe: Koa catches every error of a request itself (the error handler answers
  // with the envelope), so the promise never rejects.
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  echo = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
});

test.after.always(async () => {
  if (echo) await new Promise((resolve) => echo!.server.close(resolve));
  await gateway?.stop();
  await direct?.stop();
  await running?.stop();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function newMerchant(allowedIps: string[] = []): Promise<Credentials & { id: string }> {
  const res = await merchants.createMerchant({ name: `Shop ${randomBytes(3).toString("hex")}`, allowedIps });
  const merchant = must(res.merchant, "the merchant");
  return { id: merchant.id, apiKey: merchant.apiKey, apiSecret: res.apiSecret };
}

/** Resolves once the merchant service has announced this change; the gateway heard it first. */
async function changeAnnounced(merchantId: string, change: string, after: number): Promise<void> {
  await eventually(() => changes.slice(after).some((c) => c.merchantId === merchantId && c.change === change), `the ${change} event for ${merchantId}`, 5_000, 10);
}

function failed(t: { is(a: unknown, b: unknown, m?: string): void; true(a: boolean, m?: string): void; regex(s: string, r: RegExp, m?: string): void }, reply: Reply, status: number, code: string): void {
  t.is(reply.status, status, `status of ${code}: ${reply.text}`);
  t.is(reply.json.success, false);
  t.is(reply.json.error?.code, code);
  t.true(typeof reply.json.error?.message === "string" && reply.json.error.message.length > 0);
  t.is(reply.json.timestamp, Math.floor(clock.now().getTime() / 1000));
  t.regex(String(reply.headers["x-request-id"]), /^[A-Za-z0-9._:-]+$/);
}

// ---------------------------------------------------------------- clock-moving (serial)

test.serial("a rotated-out secret keeps working until its grace period ends, even while its credentials are cached", async (t) => {
  const merchant = await newMerchant();
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS })).status, 200);

  const before = changes.length;
  const rotated = await merchants.rotateSecret({ merchantId: merchant.id, gracePeriodSeconds: 10 });
  await changeAnnounced(merchant.id, "secret_rotated", before);
  const next = { ...merchant, apiSecret: rotated.apiSecret };

  // Both verify during the grace period; this also caches credentials holding both secrets.
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS })).status, 200);
  t.is((await signedCall(gw(), next, clock, { path: BANKS })).status, 200);

  clock.advance(9_000);
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS })).status, 200);

  // 10 s after rotation: well inside the 30 s cache TTL, so the gateway itself checks the expiry.
  clock.advance(1_000);
  failed(t, await signedCall(gw(), merchant, clock, { path: BANKS }), 401, "INVALID_SIGNATURE");
  t.is((await signedCall(gw(), next, clock, { path: BANKS })).status, 200);
});

test.serial("the timestamp may be 300 s old or ahead, not 301", async (t) => {
  const merchant = await newMerchant();
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS }, { offsetSeconds: -300 })).status, 200);
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS }, { offsetSeconds: 300 })).status, 200);
  failed(t, await signedCall(gw(), merchant, clock, { path: BANKS }, { offsetSeconds: -301 }), 401, "TIMESTAMP_EXPIRED");
  failed(t, await signedCall(gw(), merchant, clock, { path: BANKS }, { offsetSeconds: 301 }), 401, "TIMESTAMP_EXPIRED");

  // The same signed request replayed 301 s later is refused.
  const headers = authHeaders(merchant, clock, { method: "GET", path: BANKS });
  t.is((await call(gw(), { path: BANKS, headers })).status, 200);
  clock.advance(301_000);
  failed(t, await call(gw(), { path: BANKS, headers }), 401, "TIMESTAMP_EXPIRED");
});

// ---------------------------------------------------------------- bank list

test("the bank list has the api.md shape: numbers, absolute logo URLs, one FAST entry last without a logo", async (t) => {
  const merchant = await newMerchant();
  const reply = await signedCall(gw(), merchant, clock, { path: BANKS });
  t.is(reply.status, 200);
  t.regex(String(reply.headers["content-type"]), /^application\/json/);
  t.truthy(reply.headers["x-request-id"]);
  t.is(reply.json.success, true);
  t.is(reply.json.timestamp, Math.floor(clock.now().getTime() / 1000));
  t.deepEqual(Object.keys(reply.json).sort(), ["data", "success", "timestamp"]);

  const banks = reply.json.data?.banks as Array<Record<string, unknown>>;
  t.true(banks.length > 1);
  const fast = banks.filter((b) => b._id === "FAST");
  t.is(fast.length, 1);
  t.deepEqual(banks.at(-1), fast[0]);
  t.deepEqual(Object.keys(fast[0]!).sort(), ["_id", "code", "maxAmount", "minAmount", "name"]);
  t.like(fast[0], { _id: "FAST", name: "FAST", code: "FAST" });

  for (const bank of banks) {
    t.true(Number.isSafeInteger(bank.minAmount) && Number.isSafeInteger(bank.maxAmount), JSON.stringify(bank));
    t.true((bank.minAmount as number) <= (bank.maxAmount as number));
    for (const key of ["_id", "name", "code"]) t.is(typeof bank[key], "string");
  }
  for (const bank of banks.slice(0, -1)) {
    t.deepEqual(Object.keys(bank).sort(), ["_id", "code", "logo", "maxAmount", "minAmount", "name"]);
    const logo = new URL(bank.logo as string);
    t.is(logo.origin, PUBLIC_BASE_URL);
  }
  t.true(banks.some((b) => b.code === "0064" && b.logo === `${PUBLIC_BASE_URL}/assets/banks/0064.svg`));
});

test("a merchant without FAST gets no FAST entry, and a merchant's own limits are shown", async (t) => {
  const merchant = await newMerchant();
  await bankCatalog.setMerchantLimit({ limit: { merchantId: merchant.id, bankId: "FAST", enabled: false } });
  const listed = (await signedCall(gw(), merchant, clock, { path: BANKS })).json.data?.banks as Array<Record<string, unknown>>;
  t.false(listed.some((b) => b._id === "FAST"));
  const isbank = listed.find((b) => b.code === "0064")!;
  await bankCatalog.setMerchantLimit({ limit: { merchantId: merchant.id, bankId: isbank._id as string, minAmount: 2_500n, maxAmount: 7_500_000n } });
  // The gateway's cached list goes when the catalog's CatalogChanged arrives, a moment after the RPC returns.
  let after: Array<Record<string, unknown>> = [];
  await eventually(async () => {
    after = (await signedCall(gw(), merchant, clock, { path: BANKS })).json.data?.banks as Array<Record<string, unknown>>;
    return after.find((b) => b.code === "0064")?.minAmount === 2_500;
  }, "the new limits through the gateway", 1_000).catch(() => undefined);
  t.like(after.find((b) => b.code === "0064"), { minAmount: 2_500, maxAmount: 7_500_000 });
});

test("bank logo tiles are public, cacheable SVG; an unknown bank code is a 404 envelope", async (t) => {
  const tile = await call(gw(), { path: "/assets/banks/0064.svg" });
  t.is(tile.status, 200);
  t.regex(String(tile.headers["content-type"]), /^image\/svg\+xml/);
  t.regex(String(tile.headers["cache-control"]), /public/);
  t.true(tile.text.startsWith("<svg"));
  t.truthy(tile.headers["x-request-id"]);
  failed(t, await call(gw(), { path: "/assets/banks/9999.svg" }), 404, "NOT_FOUND");
});

// ---------------------------------------------------------------- authentication table

test("each authentication failure has its status and code, and the first failing check wins", async (t) => {
  const merchant = await newMerchant();
  const good = authHeaders(merchant, clock, { method: "GET", path: BANKS });
  const without = (...names: string[]) => Object.fromEntries(Object.entries(good).filter(([name]) => !names.includes(name)));

  // 1: no key, even with nothing else either.
  failed(t, await call(gw(), { path: BANKS }), 401, "MISSING_API_KEY");
  failed(t, await call(gw(), { path: BANKS, headers: without("X-API-Key", "X-Signature") }), 401, "MISSING_API_KEY");
  // 2: unknown key beats missing timestamp and signature.
  failed(t, await call(gw(), { path: BANKS, headers: { "X-API-Key": "pk_unknown" } }), 401, "INVALID_API_KEY");
  failed(t, await call(gw(), { path: BANKS, headers: { ...good, "X-API-Key": "pk_unknown" } }), 401, "INVALID_API_KEY");
  // 3: missing timestamp beats missing signature.
  failed(t, await call(gw(), { path: BANKS, headers: without("X-Timestamp", "X-Signature") }), 401, "MISSING_TIMESTAMP");
  failed(t, await call(gw(), { path: BANKS, headers: without("X-Timestamp") }), 401, "MISSING_TIMESTAMP");
  // 4
  failed(t, await call(gw(), { path: BANKS, headers: without("X-Signature") }), 401, "MISSING_SIGNATURE");
  // 5: an expired or malformed timestamp beats a wrong signature.
  failed(t, await call(gw(), { path: BANKS, headers: { ...good, "X-Timestamp": String(Number(good["X-Timestamp"]) - 301), "X-Signature": "00".repeat(32) } }), 401, "TIMESTAMP_EXPIRED");
  failed(t, await call(gw(), { path: BANKS, headers: authHeaders(merchant, clock, { method: "GET", path: BANKS }, { timestamp: `${good["X-Timestamp"]}.0` }) }), 401, "TIMESTAMP_EXPIRED");
  // 6
  failed(t, await call(gw(), { path: BANKS, headers: { ...good, "X-Signature": "00".repeat(32) } }), 401, "INVALID_SIGNATURE");
  failed(t, await call(gw(), { path: BANKS, headers: { ...good, "X-Signature": "not-hex" } }), 401, "INVALID_SIGNATURE");
  // Someone else's secret.
  const other = await newMerchant();
  failed(t, await call(gw(), { path: BANKS, headers: { ...authHeaders(other, clock, { method: "GET", path: BANKS }), "X-API-Key": merchant.apiKey } }), 401, "INVALID_SIGNATURE");
  // All good.
  t.is((await call(gw(), { path: BANKS, headers: good })).status, 200);
});

test("the signature covers the method, the path with its query and the exact body bytes", async (t) => {
  const merchant = await newMerchant();
  const base = must(echo, "the echo app").url;
  const body = '{"processId":"p1","amount":1000}';
  const headers = { ...authHeaders(merchant, clock, { method: "POST", path: "/v1/echo", body }), "Content-Type": "application/json" };

  const ok = await call(base, { method: "POST", path: "/v1/echo", headers, body });
  t.is(ok.status, 201, ok.text);
  t.deepEqual(ok.json.data, { received: { processId: "p1", amount: 1000 } });

  failed(t, await call(base, { method: "POST", path: "/v1/echo", headers, body: '{"processId":"p1","amount":1001}' }), 401, "INVALID_SIGNATURE");
  failed(t, await call(base, { method: "POST", path: "/v1/echo", headers, body: '{"processId": "p1","amount":1000}' }), 401, "INVALID_SIGNATURE");
  failed(t, await call(base, { method: "POST", path: "/v1/echo?x=1", headers, body }), 401, "INVALID_SIGNATURE");

  const withQuery = authHeaders(merchant, clock, { method: "GET", path: `${BANKS}?lang=tr` });
  t.is((await call(gw(), { path: `${BANKS}?lang=tr`, headers: withQuery })).status, 200);
  failed(t, await call(gw(), { path: BANKS, headers: withQuery }), 401, "INVALID_SIGNATURE");
});

test("a disabled merchant's key is refused at once: the change event drops the cached credentials", async (t) => {
  const merchant = await newMerchant();
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS })).status, 200);

  let before = changes.length;
  await merchants.setStatus({ merchantId: merchant.id, status: MerchantStatus.DISABLED });
  await changeAnnounced(merchant.id, "status", before);
  failed(t, await signedCall(gw(), merchant, clock, { path: BANKS }), 401, "INVALID_API_KEY");
  // Check 2 comes before check 3.
  failed(t, await call(gw(), { path: BANKS, headers: { "X-API-Key": merchant.apiKey } }), 401, "INVALID_API_KEY");

  before = changes.length;
  await merchants.setStatus({ merchantId: merchant.id, status: MerchantStatus.ACTIVE });
  await changeAnnounced(merchant.id, "status", before);
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS })).status, 200);
});

// ---------------------------------------------------------------- IP allow-list

test("with an allow-list only listed IPs and CIDRs get in; X-Forwarded-For counts only from a trusted proxy", async (t) => {
  const merchant = await newMerchant(["198.51.100.7", "203.0.113.0/24", "2001:db8::/32"]);
  const from = (ip: string, base = gw()) => signedCall(base, merchant, clock, { path: BANKS, headers: { "X-Forwarded-For": ip } });

  t.is((await from("198.51.100.7")).status, 200);
  t.is((await from("203.0.113.200")).status, 200);
  t.is((await from("2001:db8:1::5")).status, 200);
  t.is((await from("::ffff:198.51.100.7")).status, 200);
  failed(t, await from("198.51.100.8"), 403, "IP_NOT_WHITELISTED");
  failed(t, await from("2001:db9::1"), 403, "IP_NOT_WHITELISTED");
  // Without trusted proxies the socket (127.0.0.1) is the caller, whatever the header claims.
  failed(t, await from("198.51.100.7", must(direct, "the direct gateway").url), 403, "IP_NOT_WHITELISTED");

  // A new list applies at once.
  const before = changes.length;
  await merchants.setAllowedIps({ merchantId: merchant.id, allowedIps: ["127.0.0.1"] });
  await changeAnnounced(merchant.id, "allowed_ips", before);
  t.is((await signedCall(must(direct, "the direct gateway").url, merchant, clock, { path: BANKS })).status, 200);
  failed(t, await from("198.51.100.7"), 403, "IP_NOT_WHITELISTED");
});

test("an empty allow-list leaves the bank list open to any IP", async (t) => {
  const merchant = await newMerchant();
  t.is((await signedCall(gw(), merchant, clock, { path: BANKS, headers: { "X-Forwarded-For": "192.0.2.44" } })).status, 200);
});

test("the IP check comes after the signature check", async (t) => {
  const merchant = await newMerchant(["198.51.100.7"]);
  failed(t, await call(gw(), { path: BANKS, headers: { "X-API-Key": merchant.apiKey, "X-Forwarded-For": "192.0.2.1" } }), 401, "MISSING_TIMESTAMP");
});

// ---------------------------------------------------------------- rate limit

test("over its rate limit a merchant gets 429 RATE_LIMITED with Retry-After; a rate of 0 is no limit", async (t) => {
  const merchant = await newMerchant();
  let before = changes.length;
  await merchants.setRateLimit({ merchantId: merchant.id, requestsPerSecond: 1, burst: 2 });
  await changeAnnounced(merchant.id, "rate_limit", before);

  const replies: Reply[] = [];
  for (let i = 0; i < 3; i++) replies.push(await signedCall(gw(), merchant, clock, { path: BANKS }));
  t.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
  failed(t, replies[2]!, 429, "RATE_LIMITED");
  const retryAfter = Number(replies[2]!.headers["retry-after"]);
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, String(retryAfter));

  // Another merchant is not affected.
  t.is((await signedCall(gw(), await newMerchant(), clock, { path: BANKS })).status, 200);

  before = changes.length;
  await merchants.setRateLimit({ merchantId: merchant.id, requestsPerSecond: 0 });
  await changeAnnounced(merchant.id, "rate_limit", before);
  const unlimited = await Promise.all(Array.from({ length: 10 }, () => signedCall(gw(), merchant, clock, { path: BANKS })));
  t.deepEqual(unlimited.map((r) => r.status), Array(10).fill(200));
});

// ---------------------------------------------------------------- routing and bodies

test("an unknown route is 404 NOT_FOUND and a wrong method 405 METHOD_NOT_ALLOWED with Allow, both before authentication", async (t) => {
  failed(t, await call(gw(), { path: "/v1/nothing-here" }), 404, "NOT_FOUND");
  failed(t, await call(gw(), { path: "/index.html" }), 404, "NOT_FOUND");
  const wrong = await call(gw(), { method: "POST", path: BANKS, headers: { "Content-Type": "application/json" }, body: "{}" });
  failed(t, wrong, 405, "METHOD_NOT_ALLOWED");
  t.regex(String(wrong.headers.allow), /GET/);
  failed(t, await call(gw(), { method: "DELETE", path: "/healthz" }), 405, "METHOD_NOT_ALLOWED");
});

test("a body over 64 KiB is 413 PAYLOAD_TOO_LARGE before authentication; 64 KiB exactly is read", async (t) => {
  const tooBig = await call(gw(), { path: BANKS, body: Buffer.alloc(65_537, 0x61) });
  failed(t, tooBig, 413, "PAYLOAD_TOO_LARGE");

  const merchant = await newMerchant();
  const base = must(echo, "the echo app").url;
  const pad = "x".repeat(65_536 - '{"pad":""}'.length);
  const body = `{"pad":"${pad}"}`;
  t.is(Buffer.byteLength(body), 65_536);
  const ok = await signedCall(base, merchant, clock, { method: "POST", path: "/v1/echo", headers: { "Content-Type": "application/json" }, body });
  t.is(ok.status, 201);
  failed(t, await signedCall(base, merchant, clock, { method: "POST", path: "/v1/echo", headers: { "Content-Type": "application/json" }, body: `${body} ` }), 413, "PAYLOAD_TOO_LARGE");
});

test("a POST that is not application/json is 415, after authentication", async (t) => {
  const merchant = await newMerchant();
  const base = must(echo, "the echo app").url;
  failed(t, await call(base, { method: "POST", path: "/v1/echo", headers: { "Content-Type": "text/plain" }, body: "{}" }), 401, "MISSING_API_KEY");
  failed(t, await signedCall(base, merchant, clock, { method: "POST", path: "/v1/echo", headers: { "Content-Type": "text/plain" }, body: "{}" }), 415, "UNSUPPORTED_MEDIA_TYPE");
  failed(t, await signedCall(base, merchant, clock, { method: "POST", path: "/v1/echo", body: "{}" }), 415, "UNSUPPORTED_MEDIA_TYPE");
  const charset = await signedCall(base, merchant, clock, { method: "POST", path: "/v1/echo", headers: { "Content-Type": "application/json; charset=utf-8" }, body: "{}" });
  t.is(charset.status, 201);
});

test("malformed JSON or a body that is not an object is 400 VALIDATION_ERROR naming the body", async (t) => {
  const merchant = await newMerchant();
  const base = must(echo, "the echo app").url;
  for (const body of ['{"processId":', "[1,2]", "null", '"text"', "", "\u00ff"]) {
    const reply = await signedCall(base, merchant, clock, { method: "POST", path: "/v1/echo", headers: { "Content-Type": "application/json" }, body });
    failed(t, reply, 400, "VALIDATION_ERROR");
    t.regex(reply.json.error?.message ?? "", /body/);
  }
});

test("every response carries X-Request-Id: a valid incoming one is echoed, anything else replaced", async (t) => {
  const echoed = await call(gw(), { path: "/v1/nothing", headers: { "X-Request-Id": "merchant-trace.42" } });
  t.is(echoed.headers["x-request-id"], "merchant-trace.42");
  const replaced = await call(gw(), { path: BANKS, headers: { "X-Request-Id": "bad id <script>" } });
  t.not(replaced.headers["x-request-id"], "bad id <script>");
  t.regex(String(replaced.headers["x-request-id"]), /^req_/);
  const tooLong = await call(gw(), { path: BANKS, headers: { "X-Request-Id": "a".repeat(200) } });
  t.regex(String(tooLong.headers["x-request-id"]), /^req_/);
});

test("the request id reaches the services' logs", async (t) => {
  const merchant = await newMerchant();
  const id = `trace-${randomBytes(4).toString("hex")}`;
  const reply = await signedCall(gw(), merchant, clock, { path: BANKS, headers: { "X-Request-Id": id } });
  t.is(reply.status, 200);
  // Which field names the RPC is the kit's business; the line just has to mention it.
  const lines = serviceLog.filter((line) => (JSON.parse(line) as { requestId?: string }).requestId === id);
  t.true(lines.some((line) => line.includes("GetCredentials")), lines.join("\n"));
  t.true(lines.some((line) => line.includes("ListAvailableBanks")), lines.join("\n"));
});

test("no response ever carries a stack trace", async (t) => {
  const replies = await Promise.all([
    call(gw(), { path: "/v1/%E0%A4%A" }),
    call(gw(), { path: BANKS, headers: { "X-API-Key": "x".repeat(5_000) } }),
    call(gw(), { method: "POST", path: "/v1/available-banks", body: "{" }),
  ]);
  for (const reply of replies) {
    t.false(/at .*\.(ts|js):\d+/.test(reply.text), reply.text);
    t.is(reply.json.success, false);
  }
});

// ---------------------------------------------------------------- health

// Serial, with a health timeout a busy process keeps: beside the file's concurrent tests, a catalog
// just started could miss 500 ms and read as unreachable while it serves.
test.serial("/healthz is 200 while both services serve and 503 once one is stopped", async (t) => {
  const catalog = await startInProcess(["bank-catalog"], { env: servicesEnv(tempDir()), clock });
  const lonely = await startGateway({
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", HEALTH_TIMEOUT: "3s", RPC_TIMEOUT: "1s" },
    bus: must(running, "the services").bus,
    clock,
    merchantUrl: must(running, "the services").server.url,
    bankCatalogUrl: catalog.server.url,
    depositUrl: must(running, "the services").server.url,
    payoutUrl: must(running, "the services").server.url,
    callbackUrl: must(running, "the services").server.url,
  });
  try {
    const healthy = await call(lonely.url, { path: "/healthz" });
    t.is(healthy.status, 200, healthy.text);
    t.deepEqual(healthy.json.data, { status: "SERVING", services: { merchant: "SERVING", "bank-catalog": "SERVING", deposit: "SERVING", payout: "SERVING", "callback-sender": "SERVING" } });

    await catalog.stop();
    const sick = await call(lonely.url, { path: "/healthz" });
    failed(t, sick, 503, "SERVICE_UNAVAILABLE");
    t.is(sick.json.error?.details?.merchant, "SERVING");
    t.not(sick.json.error?.details?.["bank-catalog"], "SERVING");

    // A merchant call that needs the stopped service is 503 too.
    const merchant = await newMerchant();
    failed(t, await signedCall(lonely.url, merchant, clock, { path: BANKS }), 503, "SERVICE_UNAVAILABLE");
  } finally {
    await lonely.stop();
    await catalog.stop();
  }
});
