import http from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import {
  CALLBACK_EVENT_TYPES,
  CALLBACK_REFUSAL_REASONS,
  isCallbackEventType,
  sign,
  verifyCallback,
  type CallbackEvent,
  type CallbackEventType,
  type CallbackRefusalReason,
  type CallbackVerificationResult,
  type VerifyCallbackOptions,
} from "@payments/signing";

const SECRET = "sk_merchant_current";
const PATH = "/payments/callback?shop=1";
const NOW = new Date(1_795_000_000_400);
const TS = "1795000000";

function callbackBody(overrides: Partial<CallbackEvent> = {}): string {
  // Written the way the callback-sender writes it: JSON.stringify of { id, type, createdAt, data }.
  return JSON.stringify({
    id: "evt_01",
    type: "deposit.completed",
    createdAt: "2026-11-19T10:13:20.000Z",
    data: { transactionId: "dep_01", processId: "order-1", status: "completed", amount: 150000, currency: "TRY", sequence: 3 },
    ...overrides,
  });
}

/** A callback as the sender would POST it: headers (Node's lower-case shape) and raw body. */
function signedCallback(options: { secret?: string; path?: string; body?: string; timestamp?: string; id?: string; type?: string } = {}) {
  const body = options.body ?? callbackBody();
  const timestamp = options.timestamp ?? TS;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-event-id": options.id ?? "evt_01",
    "x-event-type": options.type ?? "deposit.completed",
    "x-timestamp": timestamp,
    "x-signature": sign(options.secret ?? SECRET, { timestamp, method: "POST", path: options.path ?? PATH, body }),
  };
  return { headers, body };
}

function check(overrides: Partial<VerifyCallbackOptions> = {}): CallbackVerificationResult {
  const { headers, body } = signedCallback();
  return verifyCallback({ secrets: SECRET, headers, body: Buffer.from(body), path: PATH, now: NOW, ...overrides });
}

function refused(t: ExecutionContext, result: CallbackVerificationResult, reason: CallbackRefusalReason) {
  if (result.ok) {
    t.fail(`expected ${reason}, the callback verified`);
    return;
  }
  t.is(result.reason, reason, result.message);
  t.true(result.message.length > 0);
}

// --- accepted ---------------------------------------------------------------------------

test("a callback signed with sign() verifies, with a Buffer body and Node-style headers", (t) => {
  const result = check();
  if (!result.ok) return t.fail(result.message);
  t.deepEqual(result.event, JSON.parse(callbackBody()) as CallbackEvent);
  t.is(result.event.data.sequence, 3);
  t.is(result.event.data.transactionId, "dep_01");
});

test("a string body and a Uint8Array / ArrayBuffer body verify alike", (t) => {
  const { headers, body } = signedCallback();
  const bytes = new TextEncoder().encode(body);
  for (const raw of [body, bytes, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)]) {
    const result = verifyCallback({ secrets: [SECRET], headers, body: raw, path: PATH, now: NOW });
    t.true(result.ok, result.ok ? "" : result.message);
  }
});

test("a WHATWG Headers instance and a plain object with keys in any case verify", (t) => {
  const { headers, body } = signedCallback();
  const whatwg = new Headers(headers);
  t.true(verifyCallback({ secrets: SECRET, headers: whatwg, body, path: PATH, now: NOW }).ok);
  const mixedCase = {
    "Content-Type": "application/json",
    "X-Event-Id": headers["x-event-id"],
    "X-EVENT-TYPE": headers["x-event-type"],
    "x-Timestamp": headers["x-timestamp"],
    "X-Signature": [headers["x-signature"]!],
    "x-unrelated": undefined,
  };
  t.true(verifyCallback({ secrets: SECRET, headers: mixedCase, body, path: PATH, now: NOW }).ok);
});

test("non-ASCII bodies are signed and verified as UTF-8 bytes", (t) => {
  const body = callbackBody({ data: { transactionId: "dep_01", status: "completed", sequence: 4, customer: { name: "Ayşe Yılmaz Çağlar" } } });
  const { headers } = signedCallback({ body });
  t.true(verifyCallback({ secrets: SECRET, headers, body: Buffer.from(body, "utf8"), path: PATH, now: NOW }).ok);
  t.true(verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW }).ok);
});

test("rotation: a callback signed with any secret of the list verifies", (t) => {
  const { headers, body } = signedCallback({ secret: "sk_merchant_new" });
  t.true(verifyCallback({ secrets: [SECRET, "sk_merchant_new"], headers, body, path: PATH, now: NOW }).ok);
  t.true(verifyCallback({ secrets: ["sk_merchant_new", SECRET], headers, body, path: PATH, now: NOW }).ok);
  refused(t, verifyCallback({ secrets: [SECRET], headers, body, path: PATH, now: NOW }), "INVALID_SIGNATURE");
});

test("the timestamp may be up to the tolerance away, either way (default 300 s)", (t) => {
  for (const timestamp of [String(1795000000 - 300), String(1795000000 + 300)]) {
    const { headers, body } = signedCallback({ timestamp });
    t.true(verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW }).ok, timestamp);
  }
  const { headers, body } = signedCallback({ timestamp: String(1795000000 - 1000) });
  t.true(verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW, toleranceSeconds: 1000 }).ok);
});

test("an event type this version does not know still verifies (a later gateway may add types)", (t) => {
  const { headers, body } = signedCallback({ type: "deposit.refunded", body: callbackBody({ type: "deposit.refunded" }) });
  const result = verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW });
  if (!result.ok) return t.fail(result.message);
  t.false(isCallbackEventType(result.event.type));
  t.true(isCallbackEventType("withdrawal.failed"));
});

test("CALLBACK_EVENT_TYPES lists the eight decided types", (t) => {
  const expected: CallbackEventType[] = [
    "deposit.completed",
    "deposit.failed",
    "deposit.expired",
    "deposit.cancelled",
    "withdrawal.processing",
    "withdrawal.completed",
    "withdrawal.failed",
    "withdrawal.cancelled",
  ];
  t.deepEqual([...CALLBACK_EVENT_TYPES], expected);
});

// --- refused, each for the reason it names ------------------------------------------------

for (const name of ["x-event-id", "x-event-type", "x-timestamp", "x-signature"]) {
  test(`MISSING_HEADER without ${name} (absent or empty), in both header shapes`, (t) => {
    const { headers, body } = signedCallback();
    const without = { ...headers };
    delete without[name];
    refused(t, verifyCallback({ secrets: SECRET, headers: without, body, path: PATH, now: NOW }), "MISSING_HEADER");
    refused(t, verifyCallback({ secrets: SECRET, headers: new Headers(without), body, path: PATH, now: NOW }), "MISSING_HEADER");
    refused(t, verifyCallback({ secrets: SECRET, headers: { ...headers, [name]: "" }, body, path: PATH, now: NOW }), "MISSING_HEADER");
    refused(t, verifyCallback({ secrets: SECRET, headers: { ...headers, [name]: [] }, body, path: PATH, now: NOW }), "MISSING_HEADER");
    const result = verifyCallback({ secrets: SECRET, headers: without, body, path: PATH, now: NOW });
    t.true(!result.ok && result.message.toLowerCase().includes(name));
  });
}

test("TIMESTAMP_OUT_OF_TOLERANCE for a timestamp too old", (t) => {
  const { headers, body } = signedCallback({ timestamp: String(1795000000 - 301) });
  refused(t, verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW }), "TIMESTAMP_OUT_OF_TOLERANCE");
});

test("TIMESTAMP_OUT_OF_TOLERANCE for a timestamp too far in the future", (t) => {
  const { headers, body } = signedCallback({ timestamp: String(1795000000 + 301) });
  refused(t, verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW }), "TIMESTAMP_OUT_OF_TOLERANCE");
  refused(t, verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW, toleranceSeconds: 0 }), "TIMESTAMP_OUT_OF_TOLERANCE");
  // Milliseconds instead of seconds are far in the future.
  const ms = signedCallback({ timestamp: "1795000000400" });
  refused(t, verifyCallback({ secrets: SECRET, headers: ms.headers, body: ms.body, path: PATH, now: NOW }), "TIMESTAMP_OUT_OF_TOLERANCE");
});

test("INVALID_TIMESTAMP for a timestamp that is not whole Unix seconds, even when signed", (t) => {
  for (const timestamp of ["1795000000.5", "-1795000000", "+1795000000", "1.795e9", "0x6afd1d80", "abc", "1795000000s", "17950000000000000000"]) {
    const { headers, body } = signedCallback({ timestamp });
    refused(t, verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: NOW }), "INVALID_TIMESTAMP");
  }
});

test("INVALID_SIGNATURE with a wrong secret, or a malformed signature", (t) => {
  const wrong = signedCallback({ secret: "sk_someone_else" });
  refused(t, verifyCallback({ secrets: SECRET, headers: wrong.headers, body: wrong.body, path: PATH, now: NOW }), "INVALID_SIGNATURE");
  const { headers, body } = signedCallback();
  for (const signature of ["zz", headers["x-signature"]!.slice(0, 63), `${headers["x-signature"]!}00`, "sha256=" + headers["x-signature"]!]) {
    refused(t, verifyCallback({ secrets: SECRET, headers: { ...headers, "x-signature": signature }, body, path: PATH, now: NOW }), "INVALID_SIGNATURE");
  }
});

test("INVALID_SIGNATURE when one byte of the body changed (raw bytes, not re-serialised JSON)", (t) => {
  const { headers, body } = signedCallback();
  const bytes = Buffer.from(body);
  for (let i = 0; i < bytes.length; i += 17) {
    const changed = Buffer.from(bytes);
    changed[i] = changed[i]! ^ 0x01;
    refused(t, verifyCallback({ secrets: SECRET, headers, body: changed, path: PATH, now: NOW }), "INVALID_SIGNATURE");
  }
  // The same JSON, re-serialised with other spacing: not the bytes that were signed.
  refused(t, verifyCallback({ secrets: SECRET, headers, body: JSON.stringify(JSON.parse(body), null, 2), path: PATH, now: NOW }), "INVALID_SIGNATURE");
  refused(t, verifyCallback({ secrets: SECRET, headers, body: `${body}\n`, path: PATH, now: NOW }), "INVALID_SIGNATURE");
});

test("INVALID_SIGNATURE for a path with a different query, or without it", (t) => {
  const { headers, body } = signedCallback();
  for (const path of ["/payments/callback?shop=2", "/payments/callback", "/payments/callback?shop=1&x=1", "/payments/callback/?shop=1", "https://shop.example/payments/callback?shop=1"]) {
    refused(t, verifyCallback({ secrets: SECRET, headers, body, path, now: NOW }), "INVALID_SIGNATURE");
  }
});

test("INVALID_SIGNATURE for a signature replayed with another timestamp", (t) => {
  const { headers, body } = signedCallback();
  refused(t, verifyCallback({ secrets: SECRET, headers: { ...headers, "x-timestamp": "1795000001" }, body, path: PATH, now: NOW }), "INVALID_SIGNATURE");
});

test("EVENT_MISMATCH when the body's id or type is not the header's", (t) => {
  const otherId = signedCallback({ id: "evt_02" });
  refused(t, verifyCallback({ secrets: SECRET, headers: otherId.headers, body: otherId.body, path: PATH, now: NOW }), "EVENT_MISMATCH");
  const otherType = signedCallback({ type: "deposit.failed" });
  refused(t, verifyCallback({ secrets: SECRET, headers: otherType.headers, body: otherType.body, path: PATH, now: NOW }), "EVENT_MISMATCH");
});

test("INVALID_BODY for a correctly signed body that is not a callback", (t) => {
  const bodies = [
    "not json",
    "",
    "[1,2]",
    "null",
    '"evt_01"',
    JSON.stringify({ id: "evt_01", type: "deposit.completed", createdAt: "2026-11-19T10:13:20.000Z" }),
    callbackBody({ data: { transactionId: "dep_01", status: "completed" } as never }),
    callbackBody({ data: { transactionId: "dep_01", status: "completed", sequence: "3" } as never }),
  ];
  for (const body of bodies) {
    const signed = signedCallback({ body });
    refused(t, verifyCallback({ secrets: SECRET, headers: signed.headers, body: signed.body, path: PATH, now: NOW }), "INVALID_BODY");
  }
  // Bytes that are not UTF-8.
  const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
  const headers = { ...signedCallback().headers, "x-signature": sign(SECRET, { timestamp: TS, method: "POST", path: PATH, body: bytes }) };
  refused(t, verifyCallback({ secrets: SECRET, headers, body: bytes, path: PATH, now: NOW }), "INVALID_BODY");
});

test("the checks run in order: headers, timestamp, signature, body", (t) => {
  // An unsigned body of garbage with a stale timestamp is refused for the timestamp, not parsed.
  const { headers } = signedCallback({ timestamp: "1" });
  refused(t, verifyCallback({ secrets: SECRET, headers, body: "not json", path: PATH, now: NOW }), "TIMESTAMP_OUT_OF_TOLERANCE");
  // A body that is not the signed one is refused for its signature before it is parsed.
  const signed = signedCallback();
  refused(t, verifyCallback({ secrets: SECRET, headers: signed.headers, body: "not json", path: PATH, now: NOW }), "INVALID_SIGNATURE");
  // X-Event-Id and X-Event-Type are not signed: the signed body is the truth, a header that differs is refused.
  refused(t, verifyCallback({ secrets: SECRET, headers: { ...signed.headers, "x-event-id": "evt_99" }, body: signed.body, path: PATH, now: NOW }), "EVENT_MISMATCH");
  t.deepEqual([...CALLBACK_REFUSAL_REASONS].sort(), ["EVENT_MISMATCH", "INVALID_BODY", "INVALID_SIGNATURE", "INVALID_TIMESTAMP", "MISSING_HEADER", "TIMESTAMP_OUT_OF_TOLERANCE"]);
});

test("bad request input never throws; a wrong call does", (t) => {
  const { headers, body } = signedCallback();
  // Whatever the request carries: a result, not an exception.
  t.notThrows(() => verifyCallback({ secrets: SECRET, headers: { "x-signature": ["a", "b"], "x-timestamp": "9".repeat(400) }, body: "\u0000", path: "", now: NOW }));
  t.notThrows(() => verifyCallback({ secrets: SECRET, headers: {}, body: new Uint8Array(), path: "*" }));
  // The programmer's mistakes: a TypeError that says what to pass.
  t.throws(() => verifyCallback({ secrets: [], headers, body, path: PATH }), { instanceOf: TypeError, message: /secrets/ });
  t.throws(() => verifyCallback({ secrets: "", headers, body, path: PATH }), { instanceOf: TypeError });
  t.throws(() => verifyCallback({ secrets: [SECRET, undefined as never], headers, body, path: PATH }), { instanceOf: TypeError });
  t.throws(() => verifyCallback({ secrets: SECRET, headers, body: JSON.parse(body) as never, path: PATH }), { instanceOf: TypeError, message: /express\.raw/ });
  // What Express's body parsers leave when the request has no body or another content type: the request's doing, not a throw.
  for (const empty of [undefined, null, {}]) {
    refused(t, verifyCallback({ secrets: SECRET, headers, body: empty as never, path: PATH, now: NOW }), "INVALID_SIGNATURE");
  }
  t.throws(() => verifyCallback({ secrets: SECRET, headers: undefined as never, body, path: PATH }), { instanceOf: TypeError });
  t.throws(() => verifyCallback({ secrets: SECRET, headers, body, path: undefined as never }), { instanceOf: TypeError });
  t.throws(() => verifyCallback({ secrets: SECRET, headers, body, path: PATH, toleranceSeconds: -1 }), { instanceOf: TypeError });
  t.throws(() => verifyCallback({ secrets: SECRET, headers, body, path: PATH, now: new Date(Number.NaN) }), { instanceOf: TypeError });
});

// --- end to end through Node's http server --------------------------------------------------

test("a receiver on node:http verifies what a sender POSTs, with req.url and the raw body", async (t) => {
  const results: CallbackVerificationResult[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      results.push(verifyCallback({ secrets: SECRET, headers: req.headers, body: Buffer.concat(chunks), path: req.url ?? "", now: NOW }));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const url = new URL(`http://127.0.0.1:${port}${PATH}`);
  const body = callbackBody({ data: { transactionId: "dep_01", status: "completed", sequence: 5, note: "Ödeme alındı" } });
  const { headers } = signedCallback({ body, path: `${url.pathname}${url.search}` });
  const response = await fetch(url, { method: "POST", headers, body });
  t.is(response.status, 204);
  t.is(results.length, 1);
  const [result] = results;
  t.true(result?.ok, result && !result.ok ? result.message : "");
});
