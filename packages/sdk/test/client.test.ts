import { createServer } from "node:net";
import test from "ava";
import { PaymentsClient, PaymentsError } from "../src/index.js";
import { KEY, SECRET, failure, fakeGateway, json, ok } from "./fake-gateway.js";

// The client against a local node:http server: real fetch, real signatures, scripted answers.

const deposit = { transactionId: "dep_1", processId: "order-1", amount: 15000, currency: "TRY", status: "pending", checkoutUrl: "http://x/checkout?token=t", createdAt: "2026-11-23T10:00:00.000Z" };
const body = { processId: "order-1", amount: 15000, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } };

function client(url: string, extra: Partial<ConstructorParameters<typeof PaymentsClient>[0]> = {}) {
  return new PaymentsClient({ baseUrl: url, apiKey: KEY, apiSecret: SECRET, retryBaseDelayMs: 20, ...extra });
}

test("a request is signed over timestamp + method + path + body, and the envelope's data is returned", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 201, ok(deposit))]);
  t.teardown(gw.stop);
  t.deepEqual(await client(gw.url).createDeposit(body), deposit);
  const [req] = gw.seen;
  t.true(req!.signatureOk);
  t.is(req!.method, "POST");
  t.is(req!.path, "/v1/deposit");
  t.is(req!.body, JSON.stringify(body));
  t.is(req!.headers["content-type"], "application/json");
  t.regex(String(req!.headers["x-signature"]), /^[0-9a-f]{64}$/);
});

test("a GET signs its query and an empty body; ids are path-encoded", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 200, ok(deposit))]);
  t.teardown(gw.stop);
  const c = client(gw.url);
  await c.getDepositByProcessId("order 1&x");
  await c.getDeposit("dep/1");
  t.is(gw.seen[0]!.path, "/v1/deposit?processId=order+1%26x");
  t.is(gw.seen[1]!.path, "/v1/deposit/dep%2F1");
  t.true(gw.seen.every((s) => s.signatureOk && s.body === ""));
});

test("503, then 429 with Retry-After, then success: retried with back-off, each attempt signed afresh", async (t) => {
  const gw = await fakeGateway([
    (_req, res) => json(res, 503, failure("SERVICE_UNAVAILABLE", "busy")),
    (_req, res) => json(res, 429, failure("RATE_LIMITED", "slow down"), { "retry-after": "1" }),
    (_req, res) => json(res, 200, ok({ banks: [] })),
  ]);
  t.teardown(gw.stop);
  t.deepEqual(await client(gw.url).availableBanks(), { banks: [] });
  t.is(gw.seen.length, 3);
  t.true(gw.seen.every((s) => s.signatureOk));
  t.true(gw.seen[2]!.at - gw.seen[1]!.at >= 990, "Retry-After: 1 was honoured");
  t.true(Number(gw.seen[2]!.headers["x-timestamp"]) > Number(gw.seen[1]!.headers["x-timestamp"]), "a retry carries a new timestamp");
});

test("Retry-After as an HTTP date is honoured", async (t) => {
  const gw = await fakeGateway([
    (_req, res) => json(res, 503, failure("SERVICE_UNAVAILABLE", "busy"), { "retry-after": new Date(Date.now() + 1500).toUTCString() }),
    (_req, res) => json(res, 200, ok({ banks: [] })),
  ]);
  t.teardown(gw.stop);
  await client(gw.url).availableBanks();
  // The HTTP date has whole seconds: the wait is 0.5 to 1.5 s, far above the 20 ms back-off.
  t.true(gw.seen[1]!.at - gw.seen[0]!.at >= 400);
});

test("after maxRetries the last answer is thrown as a PaymentsError with its code, details and request id", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 500, failure("INTERNAL_ERROR", "boom", { hint: "x" }))]);
  t.teardown(gw.stop);
  const error = await t.throwsAsync(client(gw.url, { maxRetries: 3 }).balance(), { instanceOf: PaymentsError });
  t.like(error, { status: 500, code: "INTERNAL_ERROR", message: "boom", details: { hint: "x" }, requestId: "req_500", attempts: 4, name: "PaymentsError" });
  t.is(gw.seen.length, 4);
  // Exponential: the gaps grow (20 ms base: ≥10, ≥20, ≥40 ms).
  const gaps = gw.seen.slice(1).map((s, i) => s.at - gw.seen[i]!.at);
  t.true(gaps[2]! >= 35, JSON.stringify(gaps));
});

test("a 4xx is never retried", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 400, failure("VALIDATION_ERROR", "amount: is required"))]);
  t.teardown(gw.stop);
  const error = await t.throwsAsync(client(gw.url).createDeposit(body), { instanceOf: PaymentsError });
  t.like(error, { status: 400, code: "VALIDATION_ERROR", message: "amount: is required", details: undefined, attempts: 1 });
  t.false(error.retryable);
  t.is(gw.seen.length, 1);
});

test("maxRetries: 0 sends once", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 503, failure("SERVICE_UNAVAILABLE", "busy"))]);
  t.teardown(gw.stop);
  await t.throwsAsync(client(gw.url, { maxRetries: 0 }).balance(), { instanceOf: PaymentsError, message: "busy" });
  t.is(gw.seen.length, 1);
});

test("an answer that is not the JSON envelope (a proxy's 502 page) is INVALID_RESPONSE, after retries", async (t) => {
  const gw = await fakeGateway([(_req, res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad Gateway</h1>")]);
  t.teardown(gw.stop);
  const error = await t.throwsAsync(client(gw.url).balance(), { instanceOf: PaymentsError });
  t.like(error, { status: 502, code: "INVALID_RESPONSE", attempts: 3 });
});

test("no answer at all: NETWORK_ERROR with status 0, after the retries", async (t) => {
  // A port nothing listens on: each attempt is refused at once.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const started = Date.now();
  const error = await t.throwsAsync(client(`http://127.0.0.1:${port}`, { maxRetries: 2 }).balance(), { instanceOf: PaymentsError });
  t.like(error, { status: 0, code: "NETWORK_ERROR", attempts: 3, requestId: undefined });
  t.regex(error.message, /ECONNREFUSED|fetch failed/);
  t.true(error.retryable);
  t.true(Date.now() - started >= 30, "it waited between the attempts");
});

test("an attempt that outlasts timeoutMs is abandoned: TIMEOUT", async (t) => {
  const gw = await fakeGateway([() => undefined]);
  t.teardown(gw.stop);
  // 1 s, not less: on a busy machine a shorter attempt can end before the request reaches the server.
  const error = await t.throwsAsync(client(gw.url, { timeoutMs: 1000, maxRetries: 1 }).balance(), { instanceOf: PaymentsError });
  t.like(error, { status: 0, code: "TIMEOUT", attempts: 2 });
  t.is(gw.seen.length, 2);
});

test("the caller's abort stops the call, waiting retries included, and is not retried", async (t) => {
  const controller = new AbortController();
  // The caller gives up once the first answer (503, retry in 10 s) is out: while the client waits to retry.
  const gw = await fakeGateway([
    (_req, res) => {
      json(res, 503, failure("SERVICE_UNAVAILABLE", "busy"), { "retry-after": "10" });
      setTimeout(() => controller.abort(new Error("user gave up")), 50);
    },
  ]);
  t.teardown(gw.stop);
  await t.throwsAsync(client(gw.url).balance({ signal: controller.signal }), { message: "user gave up" });
  t.is(gw.seen.length, 1);
});

test("a retried creation refused as DUPLICATE_TRANSACTION returns the deposit the earlier attempt made", async (t) => {
  const gw = await fakeGateway([
    (_req, res) => json(res, 503, failure("SERVICE_UNAVAILABLE", "lost answer")),
    (_req, res) => json(res, 400, failure("DUPLICATE_TRANSACTION", "exists", { transactionId: "dep_1" })),
    (_req, res) => json(res, 200, ok(deposit)),
  ]);
  t.teardown(gw.stop);
  t.deepEqual(await client(gw.url).createDeposit(body), deposit);
  t.deepEqual(gw.seen.map((s) => `${s.method} ${s.path}`), ["POST /v1/deposit", "POST /v1/deposit", "GET /v1/deposit?processId=order-1"]);
});

test("a first-attempt DUPLICATE_TRANSACTION is the merchant's reused processId: thrown", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 400, failure("DUPLICATE_TRANSACTION", "exists", { transactionId: "dep_0" }))]);
  t.teardown(gw.stop);
  await t.throwsAsync(client(gw.url).createDeposit(body), { instanceOf: PaymentsError, code: "DUPLICATE_TRANSACTION" } as never);
  t.is(gw.seen.length, 1);
});

test("transactions() walks every page by nextCursor; the cursor is signed in the query", async (t) => {
  const item = (n: number) => ({ transactionId: `tx_${n}`, type: "deposit", status: "pending", amount: n, createdAt: "2026-11-23T10:00:00.000Z" });
  const gw = await fakeGateway([
    (_req, res) => json(res, 200, ok({ items: [item(1), item(2)], nextCursor: "c/2" })),
    (_req, res) => json(res, 200, ok({ items: [item(3)], nextCursor: "c3" })),
    (_req, res) => json(res, 200, ok({ items: [], nextCursor: null })),
  ]);
  t.teardown(gw.stop);
  const ids: string[] = [];
  for await (const tx of client(gw.url).transactions({ status: "pending", limit: 2 })) ids.push(tx.transactionId);
  t.deepEqual(ids, ["tx_1", "tx_2", "tx_3"]);
  t.deepEqual(gw.seen.map((s) => s.path), ["/v1/transactions?status=pending&limit=2", "/v1/transactions?status=pending&limit=2&cursor=c%2F2", "/v1/transactions?status=pending&limit=2&cursor=c3"]);
  t.true(gw.seen.every((s) => s.signatureOk));
});

test("pages() yields pages; toArray(max) stops early; events() pages the same way", async (t) => {
  const gw = await fakeGateway([
    (req, res) => json(res, 200, ok(req.path.includes("cursor=") ? { items: [{ id: "e3" }], nextCursor: null } : { items: [{ id: "e1" }, { id: "e2" }], nextCursor: "n" })),
  ]);
  t.teardown(gw.stop);
  const c = client(gw.url);
  const pages = [];
  for await (const page of c.events({ deliveryStatus: "failed" }).pages()) pages.push(page.items.length);
  t.deepEqual(pages, [2, 1]);
  t.deepEqual((await c.events().toArray(2)).map((e) => e.id), ["e1", "e2"]);
  t.is(gw.seen.length, 3, "toArray(2) did not fetch the second page");
});

test("sandbox helpers and actions POST to their paths; a live merchant's 403 SANDBOX_ONLY is a PaymentsError", async (t) => {
  const gw = await fakeGateway([
    (_req, res) => json(res, 200, ok({ ...deposit, status: "completed" })),
    (_req, res) => json(res, 200, ok({ ...deposit, status: "expired" })),
    (_req, res) => json(res, 403, failure("SANDBOX_ONLY", "only sandbox merchants")),
  ]);
  t.teardown(gw.stop);
  const c = client(gw.url);
  t.is((await c.sandbox.payDeposit("dep_1", { amount: 100, senderName: "AYSE" })).status, "completed");
  t.is((await c.sandbox.expireDeposit("dep_1")).status, "expired");
  await t.throwsAsync(c.sandbox.payDeposit("dep_1"), { instanceOf: PaymentsError, message: "only sandbox merchants" });
  t.deepEqual(gw.seen.map((s) => `${s.method} ${s.path} ${s.body}`), [
    `POST /v1/sandbox/deposit/dep_1/pay {"amount":100,"senderName":"AYSE"}`,
    "POST /v1/sandbox/deposit/dep_1/expire ",
    "POST /v1/sandbox/deposit/dep_1/pay {}",
  ]);
});

test("a base URL with a path keeps it, and signs it", async (t) => {
  const gw = await fakeGateway([(_req, res) => json(res, 200, ok({ balances: [] }))]);
  t.teardown(gw.stop);
  await client(`${gw.url}/payments/`).balance();
  t.is(gw.seen[0]!.path, "/payments/v1/balance");
  t.true(gw.seen[0]!.signatureOk);
});

test("constructor refuses missing credentials", (t) => {
  t.throws(() => new PaymentsClient({ baseUrl: "http://x", apiKey: "", apiSecret: "s" }), { instanceOf: TypeError });
});
