import test from "ava";
import { Webhook } from "standardwebhooks";
import { standardWebhookHeaders, verifyStandardWebhook } from "@payments/signing";

// The zero-dependency Standard Webhooks signer and verifier against the reference package.

const OLD = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
const NEW = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;
const BODY = '{"id":"evt_1","type":"deposit.completed","data":{"sequence":2}}';
const now = () => String(Math.floor(Date.now() / 1000));

test("headers signed with one secret verify with the standardwebhooks package and with verifyStandardWebhook", (t) => {
  const headers = standardWebhookHeaders([NEW], "evt_1", now(), BODY);
  t.notThrows(() => new Webhook(NEW).verify(BODY, headers));
  t.true(verifyStandardWebhook({ secrets: NEW, headers, body: Buffer.from(BODY) }).ok);
  t.is(headers["webhook-signature"], new Webhook(NEW).sign("evt_1", new Date(Number(headers["webhook-timestamp"]) * 1000), BODY), "the same bytes as the reference");
});

test("two secrets give two space-separated signatures and either verifies", (t) => {
  const headers = standardWebhookHeaders([NEW, OLD], "evt_1", now(), BODY);
  t.is(headers["webhook-signature"]!.split(" ").length, 2);
  for (const secret of [NEW, OLD]) {
    t.notThrows(() => new Webhook(secret).verify(BODY, headers));
    t.true(verifyStandardWebhook({ secrets: secret, headers, body: BODY }).ok);
  }
  const other = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
  t.like(verifyStandardWebhook({ secrets: other, headers, body: BODY }), { ok: false, reason: "INVALID_SIGNATURE" });
});

test("a changed body, id or timestamp, a stale timestamp and a missing header are refused", (t) => {
  const headers = standardWebhookHeaders([NEW], "evt_1", now(), BODY);
  t.like(verifyStandardWebhook({ secrets: NEW, headers, body: BODY.replace("2", "3") }), { ok: false, reason: "INVALID_SIGNATURE" });
  t.like(verifyStandardWebhook({ secrets: NEW, headers: { ...headers, "webhook-id": "evt_2" }, body: BODY }), { ok: false, reason: "INVALID_SIGNATURE" });
  t.like(verifyStandardWebhook({ secrets: NEW, headers: { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) + 1) }, body: BODY }), { ok: false, reason: "INVALID_SIGNATURE" });
  const stale = standardWebhookHeaders([NEW], "evt_1", String(Math.floor(Date.now() / 1000) - 600), BODY);
  t.like(verifyStandardWebhook({ secrets: NEW, headers: stale, body: BODY }), { ok: false, reason: "TIMESTAMP_OUT_OF_TOLERANCE" });
  t.like(verifyStandardWebhook({ secrets: NEW, headers: { "webhook-id": "evt_1" }, body: BODY }), { ok: false, reason: "MISSING_HEADER" });
  t.throws(() => verifyStandardWebhook({ secrets: "sk_not_a_webhook_secret", headers, body: BODY }), { instanceOf: TypeError });
});
