import type { TestFn } from "ava";
import { randomBytes } from "node:crypto";
import { fromBinary, toJsonString } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, type Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { PayoutService } from "@payments/contracts/payout";
import {
  GetMerchantResponseSchema,
  LatePaymentRule,
  MerchantChangedSchema,
  MerchantService,
  MerchantStatus,
  OverpaymentRule,
  UnderpaymentRule,
  type Merchant,
  type MerchantChanged,
} from "@payments/contracts/merchant";
import { errorInfo, type Env, type RunningServices, type Subscription } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, createServiceClient, eventuallyValue, manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { merchantModule } from "../src/index.js";
import type { SecretRow } from "../src/store.js";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";

type MerchantClient = Client<typeof MerchantService>;

export interface Backend {
  /** The environment of one split-mode merchant service (database, bus). */
  env(): Promise<Env>;
  cleanUp(): Promise<void>;
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;

/**
 * The service's behaviour over a real server, registered once per storage backend.
 * Tests that move the clock are serial; ava runs them before the concurrent ones.
 */
export function merchantServiceSuite(test: TestFn, backend: Backend): void {
  const clock = manualClock();
  let running: RunningServices | undefined;
  let neighbours: RunningServices | undefined;
  let client: MerchantClient;
  /** The two workloads that read a merchant's secrets: the gateway (API secrets) and the callback-sender (signing secrets). */
  let gateway: MerchantClient;
  let callbackSender: MerchantClient;
  let watcher: Subscription | undefined;
  const published: MerchantChanged[] = [];

  function service(): RunningServices {
    if (!running) throw new Error("the service did not start");
    return running;
  }

  test.before(async () => {
    const env = {
      LOG_LEVEL: "warn",
      ...(await backend.env()),
      GRPC_PORT: "0",
      MASTER_KEY: randomBytes(32).toString("hex"),
      SECRET_GRACE_PERIOD: "2h",
      ...TEST_OPERATOR_ENV,
    };
    running = await startServices([merchantModule], { mode: "split", env, clock });
    client = createServiceClient(MerchantService, running.server.url, { clock });
    gateway = createServiceClient(MerchantService, running.server.url, { clock, operator: null, workload: "gateway" });
    callbackSender = createServiceClient(MerchantService, running.server.url, { clock, operator: null, workload: "callback-sender" });
    // SetSandbox asks the deposit and payout services whether the merchant has moved money:
    // they run beside it (their own databases, derived from the same base), and the merchant
    // service finds them through the *_SERVICE_URL it reads when it first needs them.
    neighbours = await startInProcess(["bank-catalog", "deposit", "payout"], {
      env: { ...env, MERCHANT_SERVICE_URL: running.server.url, PAYOUT_WORKER: "0" },
      clock,
    });
    Object.assign(env, { DEPOSIT_SERVICE_URL: neighbours.server.url, PAYOUT_SERVICE_URL: neighbours.server.url });
    watcher = await running.bus.watch([MERCHANT_CHANGED_TOPIC], async (message) => {
      published.push(fromBinary(MerchantChangedSchema, message.data));
    });
  });

  test.after.always(async () => {
    await watcher?.stop();
    await neighbours?.stop();
    await running?.stop();
    await backend.cleanUp();
  });

  function db() {
    const ctx = service().contexts.get("merchant");
    if (!ctx) throw new Error("no merchant context");
    return ctx.db;
  }

  // A name of its own: two identical requests of one admin at once are one approval (a form sent twice), which concurrent tests must not be.
  async function newMerchant(name = `Acme Payments ${randomBytes(3).toString("hex")}`) {
    return client.createMerchant({ name, allowedIps: [], callbackUrl: "", sandbox: false });
  }

  async function rejection(call: () => Promise<unknown>) {
    try {
      await call();
    } catch (err) {
      return errorInfo(err);
    }
    throw new Error("the call succeeded");
  }

  test.serial("a rotated-out secret verifies alongside the new one during the grace period and stops at its end", async (t) => {
    const created = await newMerchant();
    const id = created.merchant!.id;
    const apiKey = created.merchant!.apiKey;
    const rotatedAt = clock.now().getTime();
    const rotated = await client.rotateSecret({ merchantId: id, gracePeriodSeconds: 600 });
    t.regex(rotated.apiSecret, /^sk_[A-Za-z0-9_-]{43}$/);
    t.not(rotated.apiSecret, created.apiSecret);

    const during = await gateway.getCredentials({ apiKey });
    t.deepEqual(
      during.secrets.map((s) => s.secret),
      [rotated.apiSecret, created.apiSecret],
      "current first",
    );
    t.is(during.secrets[0]!.expiresAt, undefined);
    t.is(timestampDate(during.secrets[1]!.expiresAt!).getTime(), rotatedAt + 600 * SECOND);

    clock.advance(600 * SECOND - 1);
    t.is((await gateway.getCredentials({ apiKey })).secrets.length, 2, "still valid 1 ms before the end");

    clock.advance(1);
    const after = await gateway.getCredentials({ apiKey });
    t.deepEqual(
      after.secrets.map((s) => s.secret),
      [rotated.apiSecret],
    );
    const { merchant } = await client.getMerchant({ merchantId: id });
    t.deepEqual(
      merchant!.secrets.map((s) => s.valid),
      [true, false],
      "metadata lists both, newest first",
    );
  });

  test.serial("rotation without a grace period uses SECRET_GRACE_PERIOD and never extends an earlier expiry", async (t) => {
    const created = await newMerchant();
    const id = created.merchant!.id;
    const apiKey = created.merchant!.apiKey;
    const t0 = clock.now().getTime();
    const second = await client.rotateSecret({ merchantId: id });
    const third = await client.rotateSecret({ merchantId: id, gracePeriodSeconds: 10 * 3600 });
    const expiries = (await gateway.getCredentials({ apiKey })).secrets.map((s) => (s.expiresAt ? timestampDate(s.expiresAt).getTime() : null));
    t.deepEqual(expiries, [null, t0 + 10 * HOUR, t0 + 2 * HOUR], "third current, second +10 h, first keeps its earlier +2 h");

    clock.advance(HOUR);
    const fourth = await client.rotateSecret({ merchantId: id, gracePeriodSeconds: 0 });
    const credentials = await gateway.getCredentials({ apiKey });
    t.deepEqual(
      credentials.secrets.map((s) => s.secret),
      [fourth.apiSecret],
      "a zero grace period retires every older secret at once",
    );
    t.not(second.apiSecret, third.apiSecret);
  });

  test.serial("ListMerchants pages through merchants oldest first with an opaque token", async (t) => {
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1);
      mine.push((await newMerchant(`Pager ${i}`)).merchant!.id);
    }
    const seen: string[] = [];
    const created: number[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await client.listMerchants({ pageSize: 2, pageToken });
      t.true(page.merchants.length <= 2);
      for (const m of page.merchants) {
        seen.push(m.id);
        created.push(timestampDate(m.createdAt!).getTime());
        t.true(
          m.secrets.every((s) => !("secret" in s)),
          "no secret values in a listing",
        );
      }
      pageToken = page.nextPageToken;
      t.false(pageToken.includes("mer_"), "the token is opaque");
      pages++;
    } while (pageToken !== "" && pages < 100);
    t.is(new Set(seen).size, seen.length, "no merchant twice");
    t.deepEqual(
      created,
      [...created].sort((a, b) => a - b),
    );
    t.deepEqual(
      seen.filter((id) => mine.includes(id)),
      mine,
    );
    const all = await client.listMerchants({ pageSize: 0, pageToken: "" });
    t.is(all.merchants.length, Math.min(seen.length, 50), "page size 0 means the default of 50");
  });

  test("CreateMerchant returns the secret once, and GetCredentials gives the gateway the same secret", async (t) => {
    const created = await client.createMerchant({
      name: "  Acme Payments  ",
      allowedIps: ["203.0.113.7", "2001:DB8::/32", "::ffff:198.51.100.1"],
      callbackUrl: "https://acme.example/callbacks",
      sandbox: true,
    });
    const merchant = created.merchant!;
    t.regex(merchant.id, /^mer_[A-Za-z0-9_-]{22}$/);
    t.regex(merchant.apiKey, /^pk_[A-Za-z0-9_-]{32}$/);
    t.regex(created.apiSecret, /^sk_[A-Za-z0-9_-]{43}$/);
    t.is(merchant.name, "Acme Payments");
    t.is(merchant.status, MerchantStatus.ACTIVE);
    t.true(merchant.sandbox);
    t.deepEqual(merchant.allowedIps, ["203.0.113.7", "2001:db8::/32", "198.51.100.1"]);
    t.is(merchant.callbackUrl, "https://acme.example/callbacks");
    t.is(merchant.rateLimitPerSecond, undefined);
    t.is(merchant.secrets.length, 1);
    t.true(merchant.secrets[0]!.valid);
    t.is(timestampDate(merchant.createdAt!).getTime(), clock.now().getTime());

    const fetched = await client.getMerchant({ merchantId: merchant.id });
    t.deepEqual(fetched.merchant, merchant);
    t.false(toJsonString(GetMerchantResponseSchema, fetched).includes(created.apiSecret), "GetMerchant never returns the secret");

    const credentials = await gateway.getCredentials({ apiKey: merchant.apiKey });
    t.is(credentials.merchantId, merchant.id);
    t.is(credentials.status, MerchantStatus.ACTIVE);
    t.true(credentials.sandbox);
    t.deepEqual(credentials.allowedIps, merchant.allowedIps);
    t.deepEqual(
      credentials.secrets.map((s) => [s.secret, s.expiresAt]),
      [[created.apiSecret, undefined]],
    );
  });

  test.serial("webhook secrets: one with every new merchant, rotated with a grace period during which both sign, then only the new one", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    t.regex(created.webhookSecret, /^whsec_[A-Za-z0-9+/]{43}=$/, "whsec_ and the base64 of 32 bytes");
    t.is(Buffer.from(created.webhookSecret.slice(6), "base64").length, 32);
    const first = await callbackSender.getCallbackTarget({ merchantId });
    t.deepEqual(
      first.webhookSecrets.map((s) => [s.secret, s.expiresAt]),
      [[created.webhookSecret, undefined]],
    );

    const rotatedAt = clock.now().getTime();
    const rotated = await client.rotateWebhookSecret({ merchantId, gracePeriodSeconds: 600 });
    t.not(rotated.webhookSecret, created.webhookSecret);
    t.regex(rotated.webhookSecret, /^whsec_/);
    t.deepEqual(
      rotated.webhookSecrets.map((s) => [s.valid, s.expiresAt ? timestampDate(s.expiresAt).getTime() : null]),
      [
        [true, null],
        [true, rotatedAt + 600 * SECOND],
      ],
      "newest first, the older one in its grace period",
    );
    t.is(rotated.merchant!.id, merchantId);
    const during = await callbackSender.getCallbackTarget({ merchantId });
    t.deepEqual(
      during.webhookSecrets.map((s) => s.secret),
      [rotated.webhookSecret, created.webhookSecret],
      "current first",
    );
    t.is(during.signingSecret, created.apiSecret, "the API secret is untouched");
    t.is(timestampDate(during.webhookSecrets[1]!.expiresAt!).getTime(), rotatedAt + 600 * SECOND, "its end travels with it");

    clock.advance(600 * SECOND);
    t.deepEqual(
      (await callbackSender.getCallbackTarget({ merchantId })).webhookSecrets.map((s) => s.secret),
      [rotated.webhookSecret],
      "after the grace period only the new one",
    );

    const third = await client.rotateWebhookSecret({ merchantId, gracePeriodSeconds: 0 });
    t.deepEqual(
      (await callbackSender.getCallbackTarget({ merchantId })).webhookSecrets.map((s) => s.secret),
      [third.webhookSecret],
      "grace 0 ends the old one now",
    );
    const defaulted = await client.rotateWebhookSecret({ merchantId });
    t.is(timestampDate(defaulted.webhookSecrets[1]!.expiresAt!).getTime(), clock.now().getTime() + 2 * HOUR, "unset: SECRET_GRACE_PERIOD");
  });

  test("webhook secrets are stored sealed under their own context: an API secret's sealed value does not open as one", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    const rows = await db()<SecretRow>("merchant_webhook_secrets").where({ merchant_id: merchantId });
    t.is(rows.length, 1);
    t.regex(String(rows[0]!.sealed), /^v1\./);
    t.false(JSON.stringify(rows).includes(created.webhookSecret.slice(6)));
    const [apiRow] = await db()<SecretRow>("merchant_secrets").where({ merchant_id: merchantId });
    await db()("merchant_webhook_secrets").where({ merchant_id: merchantId }).update({ sealed: apiRow!.sealed });
    const refused = await rejection(() => callbackSender.getCallbackTarget({ merchantId }));
    t.is(refused.reason, "SECRET_UNREADABLE");
  });

  test("a merchant without a webhook secret (made before they existed) has none in its target until RotateWebhookSecret issues its first", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    await db()("merchant_webhook_secrets").where({ merchant_id: merchantId }).delete();
    t.deepEqual((await callbackSender.getCallbackTarget({ merchantId })).webhookSecrets, []);
    const issued = await client.rotateWebhookSecret({ merchantId, gracePeriodSeconds: 3600 });
    t.is(issued.webhookSecrets.length, 1);
    t.deepEqual(
      (await callbackSender.getCallbackTarget({ merchantId })).webhookSecrets.map((s) => s.secret),
      [issued.webhookSecret],
    );
    const unknown = await rejection(() => client.rotateWebhookSecret({ merchantId: "mer_doesnotexist" }));
    t.is(unknown.code, Code.NotFound);
    t.is(unknown.reason, "MERCHANT_NOT_FOUND");
  });

  test("API secrets are stored sealed, never in plain text", async (t) => {
    const created = await newMerchant();
    const id = created.merchant!.id;
    const rotated = await client.rotateSecret({ merchantId: id });
    const secrets = await db()<SecretRow>("merchant_secrets").where({ merchant_id: id });
    const merchants = await db()("merchants").where({ id });
    t.is(secrets.length, 2);
    for (const row of secrets) t.regex(String(row.sealed), /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const raw = JSON.stringify([secrets, merchants]);
    for (const secret of [created.apiSecret, rotated.apiSecret]) {
      t.false(raw.includes(secret));
      t.false(raw.includes(secret.slice(3)), "not even without its prefix");
    }
  });

  test("a stored secret altered in the database is refused, not handed out", async (t) => {
    const created = await newMerchant();
    const id = created.merchant!.id;
    const row = (await db()<SecretRow>("merchant_secrets").where({ merchant_id: id }).first())!;
    const [version, iv, tag, ciphertext] = String(row.sealed).split(".");
    const flipped = Buffer.from(ciphertext!, "base64url");
    flipped[0] = flipped[0]! ^ 0x01;
    await db()("merchant_secrets")
      .where({ id: row.id })
      .update({ sealed: [version, iv, tag, flipped.toString("base64url")].join(".") });
    const info = await rejection(() => gateway.getCredentials({ apiKey: created.merchant!.apiKey }));
    t.is(info.code, Code.Internal);
    t.is(info.reason, "SECRET_UNREADABLE");
    t.false(info.message.includes("sk_"));
  });

  test("concurrent rotations leave exactly one current secret", async (t) => {
    const created = await newMerchant();
    const id = created.merchant!.id;
    const rotations = await Promise.all(Array.from({ length: 6 }, () => client.rotateSecret({ merchantId: id, gracePeriodSeconds: 3600 })));
    const rows = await db()<SecretRow>("merchant_secrets").where({ merchant_id: id });
    t.is(rows.length, 7);
    t.is(rows.filter((r) => r.expires_at === null).length, 1);
    t.deepEqual(
      rows.map((r) => Number(r.generation)).sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7],
    );
    const credentials = await gateway.getCredentials({ apiKey: created.merchant!.apiKey });
    t.is(credentials.secrets.length, 7);
    t.true(rotations.some((r) => r.apiSecret === credentials.secrets[0]!.secret));
    t.is(credentials.secrets[0]!.expiresAt, undefined);
  });

  test("a disabled merchant is reported as disabled with no secrets, and enabling restores them", async (t) => {
    const created = await newMerchant();
    const id = created.merchant!.id;
    const apiKey = created.merchant!.apiKey;
    const disabled = await client.setStatus({ merchantId: id, status: MerchantStatus.DISABLED });
    t.is(disabled.merchant!.status, MerchantStatus.DISABLED);
    const credentials = await gateway.getCredentials({ apiKey });
    t.is(credentials.status, MerchantStatus.DISABLED);
    t.is(credentials.merchantId, id);
    t.deepEqual(credentials.secrets, []);

    await client.setStatus({ merchantId: id, status: MerchantStatus.ACTIVE });
    const again = await gateway.getCredentials({ apiKey });
    t.is(again.status, MerchantStatus.ACTIVE);
    t.deepEqual(
      again.secrets.map((s) => s.secret),
      [created.apiSecret],
    );
  });

  // Serial, so the only statements on the merchant tables are the call's own.
  test.serial("GetMerchant answers in one query that never reads a sealed secret, and GetCallbackTarget in one query", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    const rotated = await client.rotateSecret({ merchantId, gracePeriodSeconds: 60 });
    const statements: string[] = [];
    const listen = (query: { sql: string }) => {
      if (/merchant/.test(query.sql)) statements.push(query.sql);
    };
    const during = async <T>(call: () => Promise<T>): Promise<T> => {
      statements.length = 0;
      db().on("query", listen);
      try {
        return await call();
      } finally {
        db().off("query", listen);
      }
    };

    const { merchant } = await during(() => client.getMerchant({ merchantId }));
    t.is(statements.length, 1, statements.join("\n"));
    t.notRegex(statements[0]!, /sealed/, "secret metadata only");
    t.deepEqual(
      merchant!.secrets.map((s) => [s.valid, s.expiresAt !== undefined]),
      [
        [true, false],
        [true, true],
      ],
      "both secrets, newest first, the older one in its grace period",
    );
    t.is(merchant!.apiKey, created.merchant!.apiKey);

    const target = await during(() => callbackSender.getCallbackTarget({ merchantId }));
    t.is(statements.length, 1, statements.join("\n"));
    t.is(target.signingSecret, rotated.apiSecret);

    clock.advance(61 * SECOND);
    t.is((await callbackSender.getCallbackTarget({ merchantId })).signingSecret, rotated.apiSecret, "after the grace period too");
    t.deepEqual(
      (await client.getMerchant({ merchantId })).merchant!.secrets.map((s) => s.valid),
      [true, false],
    );
  });

  test("GetCallbackTarget gives the callback-sender the current URL and the current secret, for disabled merchants too", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    const before = await callbackSender.getCallbackTarget({ merchantId });
    t.is(before.callbackUrl, "", "no URL set yet");
    t.is(before.signingSecret, created.apiSecret);
    await client.setCallbackUrl({ merchantId, callbackUrl: "https://shop.example/payments/cb?x=1" });
    const rotated = await client.rotateSecret({ merchantId, gracePeriodSeconds: 3600 });
    const after = await callbackSender.getCallbackTarget({ merchantId });
    t.is(after.callbackUrl, "https://shop.example/payments/cb?x=1");
    t.is(after.signingSecret, rotated.apiSecret, "the rotated-in secret signs, not the one in its grace period");
    await client.setStatus({ merchantId, status: MerchantStatus.DISABLED });
    const disabled = await callbackSender.getCallbackTarget({ merchantId });
    t.is(disabled.status, MerchantStatus.DISABLED);
    t.is(disabled.signingSecret, rotated.apiSecret);
    const unknown = await rejection(() => callbackSender.getCallbackTarget({ merchantId: "mer_doesnotexist" }));
    t.is(unknown.reason, "MERCHANT_NOT_FOUND");
  });

  test("allowed IPs, callback URL, sandbox and rate limit are saved, normalised and cleared", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    const apiKey = created.merchant!.apiKey;

    const ips = await client.setAllowedIps({ merchantId, allowedIps: ["10.1.2.3/8", "10.0.0.0/8", " 2001:db8::1 "] });
    t.deepEqual(ips.merchant!.allowedIps, ["10.0.0.0/8", "2001:db8::1"]);
    t.deepEqual((await gateway.getCredentials({ apiKey })).allowedIps, ["10.0.0.0/8", "2001:db8::1"]);
    t.deepEqual((await client.setAllowedIps({ merchantId, allowedIps: [] })).merchant!.allowedIps, []);

    t.is((await client.setCallbackUrl({ merchantId, callbackUrl: "https://shop.example:8443/cb" })).merchant!.callbackUrl, "https://shop.example:8443/cb");
    t.is((await client.setCallbackUrl({ merchantId, callbackUrl: "" })).merchant!.callbackUrl, "", "empty clears it");
    t.is((await client.getMerchant({ merchantId })).merchant!.callbackUrl, "");

    t.true((await client.setSandbox({ merchantId, sandbox: true })).merchant!.sandbox);
    t.true((await gateway.getCredentials({ apiKey })).sandbox);
    t.false((await client.setSandbox({ merchantId, sandbox: false })).merchant!.sandbox);

    const limited = await client.setRateLimit({ merchantId, requestsPerSecond: 20, burst: 40 });
    t.is(limited.merchant!.rateLimitPerSecond, 20);
    t.is(limited.merchant!.rateLimitBurst, 40);
    const credentials = await gateway.getCredentials({ apiKey });
    t.is(credentials.rateLimitPerSecond, 20);
    t.is(credentials.rateLimitBurst, 40);
    const off = await client.setRateLimit({ merchantId, requestsPerSecond: 0 });
    t.is(off.merchant!.rateLimitPerSecond, 0, "0 turns the limit off and is kept apart from unset");
    t.is(off.merchant!.rateLimitBurst, undefined);
    const defaults = await client.setRateLimit({ merchantId });
    t.is(defaults.merchant!.rateLimitPerSecond, undefined, "unset goes back to the gateway default");
    t.is((await gateway.getCredentials({ apiKey })).rateLimitPerSecond, undefined);
  });

  test("a merchant switches between sandbox and live only while it has no transactions and every balance is zero", async (t) => {
    const deposits = createServiceClient(DepositService, neighbours!.server.url);
    const payouts = createServiceClient(PayoutService, neighbours!.server.url);
    await addTestReceivingAccounts(createServiceClient(BankCatalogService, neighbours!.server.url));
    // Other tests run meanwhile and record events of their own merchants: count this one's.
    const eventsOf = async (merchantId: string) =>
      (await db()("outbox").select<Array<{ payload: Buffer }>>("payload")).filter((row) => fromBinary(MerchantChangedSchema, new Uint8Array(row.payload)).merchantId === merchantId).length;
    const refusedSwitch = async (merchantId: string, sandbox: boolean, because: RegExp) => {
      const before = await eventsOf(merchantId);
      const info = await rejection(() => client.setSandbox({ merchantId, sandbox }));
      t.is(info.code, Code.FailedPrecondition);
      t.is(info.reason, "SANDBOX_CHANGE_REFUSED");
      t.regex(info.message, because);
      t.is((await client.getMerchant({ merchantId })).merchant!.sandbox, !sandbox, "the flag did not change");
      t.is(await eventsOf(merchantId), before, "no change event was recorded");
    };

    const withDeposit = (await client.createMerchant({ name: "Deposit Shop", allowedIps: [], callbackUrl: "", sandbox: true })).merchant!.id;
    await deposits.createDeposit({ merchantId: withDeposit, processId: "o-1", amount: 10_000n, customer: { id: "c", name: "N", username: "u" } });
    await refusedSwitch(withDeposit, false, /has deposits/);

    const withBalance = (await newMerchant("Balance Shop")).merchant!.id;
    await payouts.adjustBalance({ merchantId: withBalance, amount: 500n, reason: "opening credit" });
    await refusedSwitch(withBalance, true, /TRY balance is not zero/);
    await payouts.adjustBalance({ merchantId: withBalance, amount: -500n, reason: "reversed" });
    t.true((await client.setSandbox({ merchantId: withBalance, sandbox: true })).merchant!.sandbox, "back at zero and never transacted: the switch is allowed");

    const same = (await client.setSandbox({ merchantId: withDeposit, sandbox: true })).merchant!;
    t.true(same.sandbox, "setting the kind it already has is not a switch");
  });

  test("a private, loopback or link-local callback URL is refused when it is set, unless CALLBACK_ALLOW_PRIVATE is on", async (t) => {
    const { merchant } = await newMerchant();
    for (const callbackUrl of ["http://localhost:4000/cb", "https://127.0.0.1/cb", "https://[::127.0.0.1]/cb", "https://[::1]/cb", "https://10.0.0.5/cb", "https://169.254.169.254/latest/meta-data", "https://admin.localhost/cb"]) {
      const info = await rejection(() => client.setCallbackUrl({ merchantId: merchant!.id, callbackUrl }));
      t.is(info.reason, "VALIDATION_ERROR", callbackUrl);
      t.is(info.field, "callback_url", callbackUrl);
      const created = await rejection(() => client.createMerchant({ name: "Private", allowedIps: [], callbackUrl, sandbox: false }));
      t.is(created.field, "callback_url", callbackUrl);
    }
    t.is((await client.getMerchant({ merchantId: merchant!.id })).merchant!.callbackUrl, "", "nothing was stored");
  });

  test("paid-amount rules: a new merchant has the defaults, everywhere a merchant is returned", async (t) => {
    const created = await newMerchant("Rules Default Shop");
    const rules = (m: Merchant | undefined) => [m!.underpayment, m!.overpayment, m!.latePayment];
    const defaults = [UnderpaymentRule.REVIEW, OverpaymentRule.COMPLETE, LatePaymentRule.REVIEW];
    t.deepEqual(rules(created.merchant), defaults, "CreateMerchant");
    const merchantId = created.merchant!.id;
    t.deepEqual(rules((await client.getMerchant({ merchantId })).merchant), defaults, "GetMerchant (what the deposit service asks)");
    let listed: Merchant | undefined;
    for (let pageToken = ""; !listed; ) {
      const page = await client.listMerchants({ pageSize: 100, pageToken });
      listed = page.merchants.find((m) => m.id === merchantId);
      if (page.nextPageToken === "") break;
      pageToken = page.nextPageToken;
    }
    t.deepEqual(rules(listed), defaults, "ListMerchants");
  });

  test("a display name is stored trimmed and shown by CreateMerchant, GetMerchant and ListMerchants; without one it is the name", async (t) => {
    const created = await client.createMerchant({ name: "Ornek Magazacilik A.S.", displayName: "  Örnek Mağaza  ", allowedIps: [], callbackUrl: "", sandbox: false });
    const merchantId = created.merchant!.id;
    t.is(created.merchant!.displayName, "Örnek Mağaza");
    t.is((await client.getMerchant({ merchantId })).merchant!.displayName, "Örnek Mağaza", "GetMerchant (what the deposit service asks)");
    let listed: Merchant | undefined;
    for (let pageToken = ""; !listed; ) {
      const page = await client.listMerchants({ pageSize: 100, pageToken });
      listed = page.merchants.find((m) => m.id === merchantId);
      if (page.nextPageToken === "") break;
      pageToken = page.nextPageToken;
    }
    t.is(listed?.displayName, "Örnek Mağaza", "ListMerchants");
    t.like(await db()("merchants").where({ id: merchantId }).first(), { name: "Ornek Magazacilik A.S.", display_name: "Örnek Mağaza" });

    for (const displayName of [undefined, "", "   "]) {
      const plain = await client.createMerchant({ name: "Plain Shop", ...(displayName === undefined ? {} : { displayName }), allowedIps: [], callbackUrl: "", sandbox: true });
      t.is(plain.merchant!.displayName, "Plain Shop", `display name ${JSON.stringify(displayName)}: the name`);
      t.is((await client.getMerchant({ merchantId: plain.merchant!.id })).merchant!.displayName, "Plain Shop");
      t.like(await db()("merchants").where({ id: plain.merchant!.id }).first(), { display_name: null }, "stored as none, so it follows the name");
    }
  });

  test("SetDisplayName sets the display name, an empty one goes back to the name, and each records a display_name event", async (t) => {
    const merchantId = (await newMerchant("Display Shop")).merchant!.id;
    const set = await client.setDisplayName({ merchantId, displayName: " Display Mağaza " });
    t.is(set.merchant!.displayName, "Display Mağaza");
    t.is(set.merchant!.name, "Display Shop", "the name is untouched");
    t.is((await client.getMerchant({ merchantId })).merchant!.displayName, "Display Mağaza");
    const cleared = await client.setDisplayName({ merchantId, displayName: "" });
    t.is(cleared.merchant!.displayName, "Display Shop");
    t.like(await db()("merchants").where({ id: merchantId }).first(), { display_name: null });
    const blank = await client.setDisplayName({ merchantId, displayName: "  " });
    t.is(blank.merchant!.displayName, "Display Shop", "blank is empty after trimming");

    const changes = ((await db()("outbox").select("payload").orderBy("seq")) as Array<{ payload: Buffer }>)
      .map((row) => fromBinary(MerchantChangedSchema, new Uint8Array(row.payload)))
      .filter((e) => e.merchantId === merchantId)
      .map((e) => e.change);
    t.deepEqual(changes, ["created", "display_name", "display_name", "display_name"]);
  });

  test("a refused display name changes nothing and records no event", async (t) => {
    const merchantId = (await client.createMerchant({ name: "Kept Shop", displayName: "Kept Mağaza", allowedIps: [], callbackUrl: "", sandbox: false })).merchant!.id;
    for (const displayName of ["x".repeat(101), "Kept\u202EShop", "Kept\r\nShop", "Kept\u0000"]) {
      const info = await rejection(() => client.setDisplayName({ merchantId, displayName }));
      t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "display_name" }, JSON.stringify(displayName));
      t.true(info.message.startsWith("display_name: "), info.message);
    }
    t.is((await client.getMerchant({ merchantId })).merchant!.displayName, "Kept Mağaza");
    const changes = (await db()("outbox").select<Array<{ payload: Buffer }>>("payload"))
      .map((row) => fromBinary(MerchantChangedSchema, new Uint8Array(row.payload)))
      .filter((e) => e.merchantId === merchantId)
      .map((e) => e.change);
    t.deepEqual(changes, ["created"]);
  });

  test("SetPaymentRules changes only the rules given, and GetMerchant returns them", async (t) => {
    const merchantId = (await newMerchant("Rules Shop")).merchant!.id;
    const late = await client.setPaymentRules({ merchantId, latePayment: LatePaymentRule.RETURN });
    t.is(late.merchant!.latePayment, LatePaymentRule.RETURN);
    t.is(late.merchant!.underpayment, UnderpaymentRule.REVIEW, "left out: unchanged");
    t.is(late.merchant!.overpayment, OverpaymentRule.COMPLETE, "left out: unchanged");

    const all = await client.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.COMPLETE, overpayment: OverpaymentRule.REVIEW, latePayment: LatePaymentRule.COMPLETE });
    const expected = [UnderpaymentRule.COMPLETE, OverpaymentRule.REVIEW, LatePaymentRule.COMPLETE];
    t.deepEqual([all.merchant!.underpayment, all.merchant!.overpayment, all.merchant!.latePayment], expected);
    const { merchant } = await client.getMerchant({ merchantId });
    t.deepEqual([merchant!.underpayment, merchant!.overpayment, merchant!.latePayment], expected);
    t.like(await db()("merchants").where({ id: merchantId }).first(), { underpayment: "complete", overpayment: "review", late_payment: "complete" }, "stored by name");

    const back = await client.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.REVIEW });
    t.deepEqual([back.merchant!.underpayment, back.merchant!.overpayment, back.merchant!.latePayment], [UnderpaymentRule.REVIEW, OverpaymentRule.REVIEW, LatePaymentRule.COMPLETE]);
  });

  test("SetPaymentRules refuses a call without any rule, and UNSPECIFIED or unknown values, changing nothing", async (t) => {
    const merchantId = (await newMerchant("Rules Refused Shop")).merchant!.id;
    // Other tests write to the outbox concurrently: only this merchant's events count.
    const eventsOf = async () =>
      (await db()("outbox").select<Array<{ payload: Buffer }>>("payload"))
        .map((row) => fromBinary(MerchantChangedSchema, new Uint8Array(row.payload)))
        .filter((e) => e.merchantId === merchantId)
        .map((e) => e.change);
    const none = await rejection(() => client.setPaymentRules({ merchantId }));
    t.is(none.code, Code.InvalidArgument);
    t.is(none.reason, "VALIDATION_ERROR");
    t.regex(none.message, /at least one rule/);
    for (const [field, call] of [
      ["underpayment", () => client.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.UNSPECIFIED })],
      ["overpayment", () => client.setPaymentRules({ merchantId, overpayment: 9 as OverpaymentRule })],
      ["late_payment", () => client.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.COMPLETE, latePayment: LatePaymentRule.UNSPECIFIED })],
    ] as const) {
      const info = await rejection(call);
      t.is(info.code, Code.InvalidArgument, field);
      t.is(info.field, field);
      t.true(info.message.startsWith(field), info.message);
    }
    const { merchant } = await client.getMerchant({ merchantId });
    t.deepEqual([merchant!.underpayment, merchant!.overpayment, merchant!.latePayment], [UnderpaymentRule.REVIEW, OverpaymentRule.COMPLETE, LatePaymentRule.REVIEW], "nothing changed");
    t.deepEqual(await eventsOf(), ["created"], "no change event was recorded");
  });

  test("bad input is refused with VALIDATION_ERROR naming the request field", async (t) => {
    const { merchant } = await newMerchant();
    const merchantId = merchant!.id;
    const cases: Array<[string, () => Promise<unknown>]> = [
      ["name", () => client.createMerchant({ name: "   ", allowedIps: [], callbackUrl: "", sandbox: false })],
      ["name", () => client.createMerchant({ name: "x".repeat(201), allowedIps: [], callbackUrl: "", sandbox: false })],
      ["allowed_ips", () => client.createMerchant({ name: "A", allowedIps: ["10.0.0.1", "300.1.1.1"], callbackUrl: "", sandbox: false })],
      ["callback_url", () => client.createMerchant({ name: "A", allowedIps: [], callbackUrl: "http://acme.example/cb", sandbox: false })],
      ["allowed_ips", () => client.setAllowedIps({ merchantId, allowedIps: ["garbage"] })],
      ["allowed_ips", () => client.setAllowedIps({ merchantId, allowedIps: ["203.0.113.7", "0.0.0.0/0"] })],
      ["allowed_ips", () => client.setAllowedIps({ merchantId, allowedIps: ["::/0"] })],
      ["name", () => client.createMerchant({ name: "Acme\u202E", allowedIps: [], callbackUrl: "", sandbox: false })],
      ["name", () => client.createMerchant({ name: "Acme\r\nX", allowedIps: [], callbackUrl: "", sandbox: false })],
      ["display_name", () => client.createMerchant({ name: "A", displayName: "x".repeat(101), allowedIps: [], callbackUrl: "", sandbox: false })],
      ["display_name", () => client.createMerchant({ name: "A", displayName: "Acme\u2066X\u2069", allowedIps: [], callbackUrl: "", sandbox: false })],
      ["display_name", () => client.setDisplayName({ merchantId, displayName: "Acme\nX" })],
      ["merchant_id", () => client.setDisplayName({ merchantId: "", displayName: "Acme" })],
      ["callback_url", () => client.setCallbackUrl({ merchantId, callbackUrl: "ftp://acme.example" })],
      ["status", () => client.setStatus({ merchantId, status: MerchantStatus.UNSPECIFIED })],
      ["status", () => client.setStatus({ merchantId, status: 7 as MerchantStatus })],
      ["burst", () => client.setRateLimit({ merchantId, requestsPerSecond: 50, burst: 10 })],
      ["requests_per_second", () => client.setRateLimit({ merchantId, requestsPerSecond: 4_000_000_000 })],
      ["grace_period_seconds", () => client.rotateSecret({ merchantId, gracePeriodSeconds: 31 * 24 * 3600 })],
      ["grace_period_seconds", () => client.rotateWebhookSecret({ merchantId, gracePeriodSeconds: 31 * 24 * 3600 })],
      ["merchant_id", () => client.rotateWebhookSecret({ merchantId: "" })],
      ["page_size", () => client.listMerchants({ pageSize: 101, pageToken: "" })],
      ["page_token", () => client.listMerchants({ pageSize: 10, pageToken: "not-a-token" })],
      ["merchant_id", () => client.getMerchant({ merchantId: "" })],
      ["api_key", () => gateway.getCredentials({ apiKey: "" })],
    ];
    for (const [field, call] of cases) {
      const info = await rejection(call);
      t.is(info.code, Code.InvalidArgument, field);
      t.is(info.reason, "VALIDATION_ERROR", field);
      t.is(info.field, field);
      t.true(info.message.startsWith(field), `${field}: message "${info.message}" names the field`);
    }
    const unchanged = await client.getMerchant({ merchantId });
    t.is(unchanged.merchant!.status, MerchantStatus.ACTIVE, "a refused change changes nothing");
  });

  test("unknown API keys and merchants are NOT_FOUND with their own reasons", async (t) => {
    const key = await rejection(() => gateway.getCredentials({ apiKey: "pk_doesnotexist" }));
    t.is(key.code, Code.NotFound);
    t.is(key.reason, "API_KEY_NOT_FOUND");
    const merchantId = "mer_doesnotexist";
    for (const call of [
      () => client.getMerchant({ merchantId }),
      () => client.rotateSecret({ merchantId }),
      () => client.setAllowedIps({ merchantId, allowedIps: ["10.0.0.1"] }),
      () => client.setCallbackUrl({ merchantId, callbackUrl: "" }),
      () => client.setStatus({ merchantId, status: MerchantStatus.DISABLED }),
      () => client.setSandbox({ merchantId, sandbox: true }),
      () => client.setRateLimit({ merchantId }),
      () => client.setPaymentRules({ merchantId, overpayment: OverpaymentRule.REVIEW }),
      () => client.setDisplayName({ merchantId, displayName: "Nobody" }),
    ]) {
      const info = await rejection(call);
      t.is(info.code, Code.NotFound);
      t.is(info.reason, "MERCHANT_NOT_FOUND");
    }
    const outbox = await db()("outbox").select<Array<{ payload: Buffer }>>("payload");
    t.false(
      outbox.some((row) => fromBinary(MerchantChangedSchema, new Uint8Array(row.payload)).merchantId === merchantId),
      "a failed change records no event",
    );
  });

  test("every change records a MerchantChanged event in the outbox, and it is published", async (t) => {
    const created = await newMerchant();
    const merchantId = created.merchant!.id;
    await client.rotateSecret({ merchantId });
    await client.rotateWebhookSecret({ merchantId });
    await client.setAllowedIps({ merchantId, allowedIps: ["10.0.0.1"] });
    await client.setCallbackUrl({ merchantId, callbackUrl: "https://acme.example/cb" });
    await client.setStatus({ merchantId, status: MerchantStatus.DISABLED });
    await client.setSandbox({ merchantId, sandbox: true });
    await client.setRateLimit({ merchantId, requestsPerSecond: 5 });
    await client.setPaymentRules({ merchantId, latePayment: LatePaymentRule.RETURN });
    await client.setDisplayName({ merchantId, displayName: "Acme Mağaza" });
    const expected = ["created", "secret_rotated", "webhook_secret_rotated", "allowed_ips", "callback_url", "status", "sandbox", "rate_limit", "payment_rules", "display_name"];

    const ours = (rows: Array<{ payload: Buffer }>) => rows.map((r) => fromBinary(MerchantChangedSchema, new Uint8Array(r.payload))).filter((e) => e.merchantId === merchantId);
    const recorded = ours(await db()("outbox").select<Array<{ payload: Buffer }>>("payload").orderBy("seq"));
    t.deepEqual(
      recorded.map((e) => e.change),
      expected,
    );
    for (const event of recorded) {
      t.is(event.apiKey, created.merchant!.apiKey);
      t.regex(event.eventId, /^evt_/);
      t.is(timestampDate(event.occurredAt!).getTime(), clock.now().getTime());
    }

    const received = await eventuallyValue(() => {
      const mine = published.filter((e) => e.merchantId === merchantId);
      return mine.length >= expected.length ? mine : undefined;
    }, "the events on the bus");
    t.deepEqual(
      received.map((e) => e.change),
      expected,
    );
    t.deepEqual(
      received.map((e) => e.eventId),
      recorded.map((e) => e.eventId),
    );
    const unpublished = await eventuallyValue(async () => {
      const rows = ours(await db()("outbox").select<Array<{ payload: Buffer }>>("payload").whereNull("published_at"));
      return rows.length === 0 ? rows : undefined;
    }, "the outbox rows marked published");
    t.deepEqual(unpublished, []);
  });
}
