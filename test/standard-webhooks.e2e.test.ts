import test from "ava";
import { Webhook } from "standardwebhooks";
import { callbackModule } from "@payments/callback-sender-service";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { CallbackReceiver, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, type ReceivedCallback, testCustomer, TEST_OPERATOR_ENV } from "@payments/testing";
import { verifyCallback, verifyStandardWebhook } from "@payments/signing";
import { startInProcess } from "@payments/testing/services";

// Standard Webhooks on real callbacks: the producers (merchant, bank-catalog, deposit, payout)
// on MariaDB with events over JetStream, a callback-sender of its own (split mode, its own
// database), and an HTTP receiver on 127.0.0.1. Every callback is checked with the
// `standardwebhooks` npm package, the reference implementation a merchant would use.

const TOKEN = "standard-webhooks-internal-token";
const js = jetStreamTestEnv();
const databases: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
let producers: RunningServices;
let sender: RunningServices;
let receiver: CallbackReceiver;

const merchants = () => createServiceClient(MerchantService, producers.server.url, { token: TOKEN });
const deposits = () => createServiceClient(DepositService, producers.server.url, { token: TOKEN });

test.before(async () => {
  const [producersDb, senderDb] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  databases.push(producersDb, senderDb);
  producers = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { ...js, DATABASE_URL: producersDb.url, INTERNAL_API_TOKEN: TOKEN, MASTER_KEY: "c".repeat(64), LOG_LEVEL: "error", PAYOUT_WORKER: "0", CALLBACK_ALLOW_PRIVATE: "1" },
    receivingAccounts: true,
  });
  sender = await startServices([callbackModule], {
    mode: "split",
    env: { ...TEST_OPERATOR_ENV,
      ...js,
      DATABASE_URL: senderDb.url,
      GRPC_PORT: "0",
      INTERNAL_API_TOKEN: TOKEN,
      MERCHANT_SERVICE_URL: producers.server.url,
      LOG_LEVEL: "error",
      CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
      CALLBACK_POLL_INTERVAL: "50ms",
      CALLBACK_ALLOW_PRIVATE: "1",
    },
  });
  receiver = await new CallbackReceiver().start();
});

test.after.always(async () => {
  // Unset if the before hook failed before starting them: their declared types say otherwise.
  await (receiver as typeof receiver | undefined)?.stop();
  await (sender as typeof sender | undefined)?.stop();
  await (producers as typeof producers | undefined)?.stop();
  await Promise.allSettled(databases.map((d) => d.drop()));
  await deleteTestStream(js).catch(() => undefined);
});

/** A status change (a deposit, cancelled) and the callback it caused, as received. */
async function callbackOf(merchantId: string, processId: string): Promise<ReceivedCallback> {
  const { deposit } = await deposits().createDeposit({ merchantId, processId, amount: 10_000n, customer: testCustomer });
  await deposits().cancelDeposit({ merchantId, depositId: deposit!.id });
  let found: ReceivedCallback | undefined;
  await eventually(() => (found = receiver.received.find((c) => (JSON.parse(c.body.toString("utf8")) as { data?: { processId?: string } }).data?.processId === processId)) !== undefined, `the callback of ${processId}`);
  return found!;
}

function headersOf(c: ReceivedCallback): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.headers)) if (typeof value === "string") out[name] = value;
  return out;
}

/** Whether the `standardwebhooks` package accepts the callback with this secret. */
function verifies(secret: string, c: ReceivedCallback, headers = headersOf(c), body: Buffer | string = c.body): boolean {
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

async function shop(name: string) {
  const created = await merchants().createMerchant({ name, callbackUrl: receiver.url(`/hooks/${name}?shop=1`), sandbox: true });
  return { id: created.merchant!.id, apiSecret: created.apiSecret, webhookSecret: created.webhookSecret };
}

test("a new merchant's callbacks carry webhook-id, webhook-timestamp and one webhook-signature that standardwebhooks verifies; X-Signature is unchanged", async (t) => {
  const m = await shop("fresh");
  t.regex(m.webhookSecret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
  const key = Buffer.from(m.webhookSecret.slice("whsec_".length), "base64");
  t.true(key.length >= 24 && key.length <= 32);

  const c = await callbackOf(m.id, "fresh-1");
  const h = headersOf(c);
  const event = JSON.parse(c.body.toString("utf8")) as { id: string };
  t.is(h["webhook-id"], event.id);
  t.is(h["webhook-id"], h["x-event-id"]);
  t.is(h["webhook-timestamp"], h["x-timestamp"], "the attempt's Unix seconds, as X-Timestamp");
  t.regex(h["webhook-signature"]!, /^v1,[A-Za-z0-9+/]+={0,2}$/, "one signature");
  t.true(verifies(m.webhookSecret, c));
  t.true(verifyStandardWebhook({ secrets: m.webhookSecret, headers: c.headers, body: c.body }).ok, "the signing package's verifier agrees");
  // The existing scheme, exactly as before.
  t.true(verifyCallback({ secrets: m.apiSecret, headers: c.headers, body: c.body, path: c.path }).ok);
  t.false(verifies((await shop("other")).webhookSecret, c), "another merchant's secret does not verify");
});

test("a tampered body or timestamp is refused", async (t) => {
  const m = await shop("tampered");
  const c = await callbackOf(m.id, "tampered-1");
  t.true(verifies(m.webhookSecret, c));
  const body = c.body.toString("utf8").replace('"cancelled"', '"completed"');
  t.not(body, c.body.toString("utf8"));
  t.false(verifies(m.webhookSecret, c, headersOf(c), body), "changed body");
  const h = headersOf(c);
  t.false(verifies(m.webhookSecret, c, { ...h, "webhook-timestamp": String(Number(h["webhook-timestamp"]) - 1) }), "changed timestamp");
  t.false(verifies(m.webhookSecret, c, { ...h, "webhook-id": "evt_other" }), "changed id");
  t.false(verifyStandardWebhook({ secrets: m.webhookSecret, headers: c.headers, body }).ok);
});

test.serial("rotation: during the grace period both the old and the new secret verify (two signatures); after it only the new one", async (t) => {
  const m = await shop("rotating");
  const before = await callbackOf(m.id, "rot-before");
  t.true(verifies(m.webhookSecret, before));

  const rotated = await merchants().rotateWebhookSecret({ merchantId: m.id, gracePeriodSeconds: 4 });
  const started = Date.now();
  t.not(rotated.webhookSecret, m.webhookSecret);
  t.is(rotated.webhookSecrets.filter((s) => s.valid).length, 2);

  // MerchantChanged drops the sender's cached target; the next callback signs with both.
  const during = await callbackOf(m.id, "rot-during");
  t.true(Date.now() - started < 4000, "still within the grace period");
  const signatures = headersOf(during)["webhook-signature"]!.split(" ");
  t.is(signatures.length, 2, "v1,<new> v1,<old>");
  t.true(verifies(rotated.webhookSecret, during), "the new secret verifies");
  t.true(verifies(m.webhookSecret, during), "the old secret verifies during the grace period");
  t.true(verifyCallback({ secrets: m.apiSecret, headers: during.headers, body: during.body, path: during.path }).ok, "X-Signature: the API secret did not change");

  // No event marks the end of the grace period: the cached target's ends do.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 4500 - Date.now())));
  const after = await callbackOf(m.id, "rot-after");
  t.is(headersOf(after)["webhook-signature"]!.split(" ").length, 1);
  t.true(verifies(rotated.webhookSecret, after), "the new secret verifies");
  t.false(verifies(m.webhookSecret, after), "the old one no longer does");
});

test.serial("a rotation with grace 0 ends the old secret at once", async (t) => {
  const m = await shop("abrupt");
  const rotated = await merchants().rotateWebhookSecret({ merchantId: m.id, gracePeriodSeconds: 0 });
  const c = await callbackOf(m.id, "abrupt-1");
  t.true(verifies(rotated.webhookSecret, c));
  t.false(verifies(m.webhookSecret, c));
});

test.serial("a merchant made before webhook secrets existed gets no webhook-* headers until it is issued one, which signs from then on", async (t) => {
  const m = await shop("legacy");
  // What the migration leaves for a merchant that existed before it: no webhook secret.
  await producers.contexts.get("merchant")!.db("merchant_webhook_secrets").where({ merchant_id: m.id }).delete();
  await merchants().setCallbackUrl({ merchantId: m.id, callbackUrl: receiver.url("/hooks/legacy?shop=2") }); // drops the cached target

  const before = await callbackOf(m.id, "legacy-1");
  t.false(Object.keys(before.headers).some((name) => name.startsWith("webhook-")), "never signed with a secret it was not shown");
  t.true(verifyCallback({ secrets: m.apiSecret, headers: before.headers, body: before.body, path: before.path }).ok);

  const issued = await merchants().rotateWebhookSecret({ merchantId: m.id });
  t.is(issued.webhookSecrets.length, 1);
  const after = await callbackOf(m.id, "legacy-2");
  t.is(headersOf(after)["webhook-signature"]!.split(" ").length, 1);
  t.true(verifies(issued.webhookSecret, after));
});
