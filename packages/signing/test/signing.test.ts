import test from "ava";
import { createHmac } from "node:crypto";
import { sign, verify, signedHeaders } from "../src/index.js";

const parts = { timestamp: "1795000000", method: "POST", path: "/v1/deposit", body: '{"processId":"p1","amount":1000}' };

test("signature is lower-case hex HMAC-SHA256 of timestamp + METHOD + path + body", (t) => {
  const expected = createHmac("sha256", "sk_secret").update(`1795000000POST/v1/deposit{"processId":"p1","amount":1000}`).digest("hex");
  t.is(sign("sk_secret", parts), expected);
  t.regex(sign("sk_secret", parts), /^[0-9a-f]{64}$/);
});

test("raw bytes are signed, not re-serialised JSON: a one-byte change fails", (t) => {
  const signature = sign("sk_secret", parts);
  t.true(verify(["sk_secret"], parts, signature));
  t.false(verify(["sk_secret"], { ...parts, body: '{"processId":"p1","amount":1001}' }, signature));
  t.false(verify(["sk_secret"], { ...parts, body: '{"processId": "p1","amount":1000}' }, signature));
  t.false(verify(["sk_secret"], { ...parts, path: "/v1/deposit?x=1" }, signature));
  t.false(verify(["sk_secret"], { ...parts, timestamp: "1795000001" }, signature));
});

test("any of several secrets verifies (rotation), a wrong or malformed one does not", (t) => {
  const signature = sign("sk_old", parts);
  t.true(verify(["sk_new", "sk_old"], parts, signature));
  t.false(verify(["sk_new"], parts, signature));
  t.false(verify(["sk_old"], parts, "zz"));
  t.false(verify(["sk_old"], parts, signature.slice(0, 63)));
  t.false(verify([], parts, signature));
});

test("signedHeaders produces the three headers for the given time", (t) => {
  const headers = signedHeaders({ apiKey: "pk_1", apiSecret: "sk_1" }, { method: "GET", path: "/v1/available-banks", body: "" }, new Date(1795000000_123));
  t.is(headers["X-Timestamp"], "1795000000");
  t.is(headers["X-API-Key"], "pk_1");
  t.is(headers["X-Signature"], sign("sk_1", { timestamp: "1795000000", method: "GET", path: "/v1/available-banks", body: "" }));
});
