import test from "ava";
import { BankFeedError, jsonFeedAdapter, parseJsonFeed, signFeedBody, validateFeedBody, verifyFeedSignature } from "../src/bank-feed/index.js";

const transfer = (overrides: Record<string, unknown> = {}) => ({
  receivingIban: "TR33 0006 1005 1978 6457 8413 26",
  amount: 150000,
  currency: "try",
  valueDate: "2024-06-15",
  senderName: " Şükrü Öztürk ",
  senderIban: "tr29 0006 4000 0011 2345 6789 01",
  description: "ODEME REF AB-CD 2345 sipariş ödemesi",
  bankTransactionId: "AGG-0001",
  ...overrides,
});

test("a valid body becomes normalised records", (t) => {
  const { records, skipped } = parseJsonFeed(JSON.stringify({ transfers: [transfer(), transfer({ bankTransactionId: "AGG-0002", senderIban: undefined, amount: 1 })] }));
  t.deepEqual(records, [
    {
      receivingIban: "TR330006100519786457841326",
      amount: 150000,
      currency: "TRY",
      valueDate: "2024-06-15",
      senderName: "Şükrü Öztürk",
      senderIban: "TR290006400000112345678901",
      description: "ODEME REF AB-CD 2345 sipariş ödemesi",
      bankTransactionId: "AGG-0001",
    },
    {
      receivingIban: "TR330006100519786457841326",
      amount: 1,
      currency: "TRY",
      valueDate: "2024-06-15",
      senderName: "Şükrü Öztürk",
      description: "ODEME REF AB-CD 2345 sipariş ödemesi",
      bankTransactionId: "AGG-0002",
    },
  ]);
  t.deepEqual(skipped, []);
  t.deepEqual(jsonFeedAdapter.parse(Buffer.from(JSON.stringify({ transfers: [transfer()] }))).records.length, 1);
});

test("the same transfer twice in one body is recorded once", (t) => {
  const { records, skipped } = validateFeedBody({ transfers: [transfer(), transfer({ receivingIban: "TR330006100519786457841326" })] });
  t.is(records.length, 1);
  t.deepEqual(skipped, [{ entry: "transfers[1]", reason: "repeats transfers[0] (same receivingIban and bankTransactionId): recorded once" }]);
});

function issuesOf(t: import("ava").ExecutionContext, body: unknown): readonly string[] {
  const err = t.throws(() => validateFeedBody(body), { instanceOf: BankFeedError });
  return err.issues;
}

test("every invalid field is named with its record index", (t) => {
  const body = {
    transfers: [
      transfer(),
      transfer(),
      transfer({ receivingIban: "DE89370400440532013000", valueDate: "2024-02-30" }),
      transfer({ amount: 1500.5 }),
      transfer({ amount: "1500,00", currency: "TL!", senderName: "" }),
      transfer({ senderIban: "TR00 1234", bankTransactionId: undefined, description: "x".repeat(501) }),
    ],
  };
  t.deepEqual(issuesOf(t, body), [
    "transfers[2].receivingIban: must be a Turkish IBAN (TR + 24 digits, valid checksum)",
    "transfers[2].valueDate: must be a date, YYYY-MM-DD",
    "transfers[3].amount: must be a positive integer (kuruş)",
    "transfers[4].amount: must be a positive integer (kuruş)",
    "transfers[4].currency: must be an ISO 4217 code such as TRY",
    "transfers[4].senderName: is required",
    "transfers[5].senderIban: is not a valid IBAN",
    "transfers[5].description: must be at most 500 characters",
    "transfers[5].bankTransactionId: is required",
  ]);
  const err = t.throws(() => validateFeedBody(body), { instanceOf: BankFeedError });
  t.is(err.message, "transfers[2].receivingIban: must be a Turkish IBAN (TR + 24 digits, valid checksum) (and 8 more)");
});

test("zero, negative and unsafe amounts are refused", (t) => {
  for (const amount of [0, -100, Number.MAX_SAFE_INTEGER + 1, null]) {
    t.deepEqual(issuesOf(t, { transfers: [transfer({ amount })] }), ["transfers[0].amount: must be a positive integer (kuruş)"], String(amount));
  }
});

test("the body's shape: an object with 1..500 transfers, as JSON", (t) => {
  t.deepEqual(issuesOf(t, { transfers: [] }), ["transfers: must hold at least one transfer"]);
  t.deepEqual(issuesOf(t, { transfers: Array.from({ length: 501 }, (_, i) => transfer({ bankTransactionId: `T${i}` })) }), ["transfers: must hold at most 500 transfers"]);
  t.deepEqual(issuesOf(t, {}), ["transfers: is required"]);
  t.deepEqual(issuesOf(t, { transfers: "x" }), ["transfers: must be an array of transfers"]);
  t.deepEqual(issuesOf(t, [1]), ["the body must be a JSON object with a transfers array"]);
  t.is(validateFeedBody({ transfers: Array.from({ length: 500 }, (_, i) => transfer({ bankTransactionId: `T${i}` })) }).records.length, 500);
  const err = t.throws(() => parseJsonFeed("{not json"), { instanceOf: BankFeedError });
  t.regex(err.message, /^the body is not JSON/);
});

const SECRET = "feed-secret-0123456789";
const NOW = new Date("2024-06-15T12:00:00Z");
const TS = String(NOW.getTime() / 1000);
const BODY = JSON.stringify({ transfers: [transfer()] });

test("signature: a correctly signed body is accepted", (t) => {
  const signature = signFeedBody({ secret: SECRET, timestamp: TS, rawBody: BODY });
  t.regex(signature, /^[0-9a-f]{64}$/);
  t.deepEqual(verifyFeedSignature({ secret: SECRET, timestamp: TS, signature, rawBody: BODY, now: NOW }), { ok: true });
  t.deepEqual(verifyFeedSignature({ secret: SECRET, timestamp: TS, signature: signature.toUpperCase(), rawBody: Buffer.from(BODY), now: NOW }), { ok: true }, "bytes and upper-case hex alike");
  t.deepEqual(verifyFeedSignature({ secret: ["old-secret", SECRET], timestamp: TS, signature, rawBody: BODY, now: NOW }), { ok: true }, "during a rotation");
  t.deepEqual(verifyFeedSignature({ secret: SECRET, timestamp: String(Number(TS) - 300), signature: signFeedBody({ secret: SECRET, timestamp: Number(TS) - 300, rawBody: BODY }), rawBody: BODY, now: NOW }), { ok: true }, "300 s old is still in time");
});

test("signature: wrong secret, stale or future timestamp, tampered body, bad headers", (t) => {
  const signature = signFeedBody({ secret: SECRET, timestamp: TS, rawBody: BODY });
  const reason = (input: Partial<Parameters<typeof verifyFeedSignature>[0]>) => {
    const result = verifyFeedSignature({ secret: SECRET, timestamp: TS, signature, rawBody: BODY, now: NOW, ...input });
    return result.ok ? "ok" : result.reason;
  };
  t.is(reason({ secret: "another-secret" }), "X-Feed-Signature does not match the body");
  t.is(reason({ rawBody: BODY.replace("150000", "950000") }), "X-Feed-Signature does not match the body");
  t.is(reason({ timestamp: String(Number(TS) + 1) }), "X-Feed-Signature does not match the body", "the timestamp is signed too");
  const stale = String(Number(TS) - 301);
  t.is(reason({ timestamp: stale, signature: signFeedBody({ secret: SECRET, timestamp: stale, rawBody: BODY }) }), "X-Feed-Timestamp is 301 s away from now (at most 300 s)");
  const future = String(Number(TS) + 3600);
  t.is(reason({ timestamp: future, signature: signFeedBody({ secret: SECRET, timestamp: future, rawBody: BODY }) }), "X-Feed-Timestamp is 3600 s away from now (at most 300 s)");
  t.is(reason({ timestamp: undefined }), "X-Feed-Timestamp is missing");
  t.is(reason({ timestamp: "2024-06-15T12:00:00Z" }), "X-Feed-Timestamp must be unix seconds");
  t.is(reason({ signature: undefined }), "X-Feed-Signature is missing");
  t.is(reason({ signature: "abc" }), "X-Feed-Signature must be a hex HMAC-SHA256 (64 hex digits)");
  t.is(reason({ secret: "" }), "no feed secret is configured");
});
