import test from "ava";
import { Webhook } from "standardwebhooks";
import { verifyCallback } from "@payments/signing";
import { webhookSecretsAt } from "../src/callback-target.js";
import { callbackHeaders } from "../src/sender.js";

// The headers of one attempt: X-Signature as before, and the Standard Webhooks headers
// signed with the webhook secrets that still sign at the attempt's time.

const url = new URL("https://shop.example/hooks?shop=1");
const attempt = { eventId: "evt_abc", type: "deposit.completed", body: '{"id":"evt_abc","type":"deposit.completed","createdAt":"2026-11-22T10:15:30.123Z","data":{"transactionId":"dep_1","status":"completed","sequence":2}}' };
const CURRENT = `whsec_${Buffer.alloc(32, 3).toString("base64")}`;
const OLD = `whsec_${Buffer.alloc(32, 4).toString("base64")}`;

test("without webhook secrets the headers are exactly the existing ones", (t) => {
  const headers = callbackHeaders("sk_x", url, attempt, new Date());
  t.deepEqual(Object.keys(headers).sort(), ["content-type", "user-agent", "x-event-id", "x-event-type", "x-signature", "x-timestamp"]);
});

test("with webhook secrets: webhook-id is the event id, webhook-timestamp X-Timestamp, one signature per secret; X-Signature unchanged", (t) => {
  const now = new Date();
  const headers = callbackHeaders("sk_x", url, attempt, now, [CURRENT, OLD]);
  t.is(headers["webhook-id"], "evt_abc");
  t.is(headers["webhook-timestamp"], headers["x-timestamp"]);
  t.is(headers["webhook-signature"]!.split(" ").length, 2);
  for (const secret of [CURRENT, OLD]) t.notThrows(() => new Webhook(secret).verify(attempt.body, headers));
  t.is(headers["x-signature"], callbackHeaders("sk_x", url, attempt, now)["x-signature"]);
  t.true(verifyCallback({ secrets: "sk_x", headers, body: attempt.body, path: "/hooks?shop=1" }).ok);
});

test("a cached target stops signing with a rotated-out secret at its end, without asking again", (t) => {
  const target = { webhookSecrets: [{ secret: CURRENT, expiresAt: null }, { secret: OLD, expiresAt: 10_000 }] };
  t.deepEqual(webhookSecretsAt(target, 9_999), [CURRENT, OLD]);
  t.deepEqual(webhookSecretsAt(target, 10_000), [CURRENT]);
});
