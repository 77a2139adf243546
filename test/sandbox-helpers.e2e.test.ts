import test from "ava";
import { allModules } from "@payments/all-in-one";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService, UnderpaymentRule } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, CallbackReceiver, createServiceClient, createTestDatabase, credentialsOf, deleteTestStream, eventually, jetStreamTestEnv, TEST_OPERATOR_ENV, testCustomer } from "@payments/testing";
import { verifyCallback } from "@payments/signing";
import { signedFetch, type Credentials } from "./helpers.js";
import { serviceUrlsAt } from "@payments/testing/services";

// The sandbox helpers a merchant's CI calls (POST /v1/sandbox/deposit/{id}/pay and …/expire),
// end to end: every service on MariaDB and JetStream, the gateway in front over the network,
// and a real callback endpoint. What the merchant sees must be what a real payment or a real
// expiry produces: the callback, the balance, the record.
const js = jetStreamTestEnv();
const database = await createTestDatabase();
let services: RunningServices;
let gateway: Awaited<ReturnType<typeof startGateway>>;
let receiver: CallbackReceiver;

test.before(async () => {
  receiver = await new CallbackReceiver().start();
  services = await startServices([...allModules], {
    mode: "all-in-one",
    env: {
      ...TEST_OPERATOR_ENV,
      ...js,
      GRPC_PORT: "0",
      DATABASE_URL: database.url,
      MASTER_KEY: "5".repeat(64),
      LOG_LEVEL: "warn",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_POLL_INTERVAL: "50ms",
      CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
      PAYOUT_WORKER_INTERVAL: "100ms",
    },
  });
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, services.server.url));
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      ...js,
      PORT: "0",
      HOST: "127.0.0.1",
      ...serviceUrlsAt(services.server.url),
      PUBLIC_BASE_URL: "https://pay.example.test",
      LOG_LEVEL: "warn",
    },
  });
});

test.after.always(async () => {
  // Unset if the before hook failed before starting them: their declared types say otherwise.
  await (gateway as typeof gateway | undefined)?.stop();
  await (services as typeof services | undefined)?.stop();
  await (receiver as typeof receiver | undefined)?.stop();
  await database.drop();
  await deleteTestStream(js);
});

type Json = Record<string, unknown>;

interface Shop {
  creds: Credentials;
  merchantId: string;
  /** The callbacks this merchant received (each merchant has its own path). */
  callbacks(): Array<{ type: string; body: { type: string; data: Json }; verified: boolean }>;
}

let shops = 0;
async function newShop(sandbox: boolean): Promise<Shop> {
  const path = `/cb/${++shops}`;
  const created = await createServiceClient(MerchantService, services.server.url).createMerchant({ name: `CI Shop ${shops}`, sandbox, callbackUrl: receiver.url(path) });
  const creds = credentialsOf(created);
  return {
    creds,
    merchantId: created.merchant!.id,
    callbacks: () =>
      receiver.received
        .filter((c) => c.path === path)
        .map((c) => ({
          type: String(c.headers["x-event-type"]),
          body: JSON.parse(c.body.toString("utf8")) as { type: string; data: Json },
          verified: verifyCallback({ secrets: creds.apiSecret, headers: c.headers, body: c.body, path: c.path }).ok,
        })),
  };
}

async function createDeposit(shop: Shop, processId: string, amount: number): Promise<Json> {
  const res = await signedFetch(gateway.url, shop.creds, "POST", "/v1/deposit", { processId, amount, customer: testCustomer });
  if (res.status !== 201) throw new Error(`deposit not created: ${JSON.stringify(res.json)}`);
  return res.json.data as Json;
}

async function available(shop: Shop): Promise<number> {
  const res = await signedFetch(gateway.url, shop.creds, "GET", "/v1/balance");
  return (res.json.data as { balances: Array<{ currency: string; available: number }> }).balances.find((b) => b.currency === "TRY")?.available ?? 0;
}

async function record(shop: Shop, id: unknown): Promise<Json> {
  return (await signedFetch(gateway.url, shop.creds, "GET", `/v1/deposit/${String(id)}`)).json.data as Json;
}

test("pay completes a sandbox deposit: 200 with the record, a signed deposit.completed callback, the balance credited once", async (t) => {
  const shop = await newShop(true);
  const deposit = await createDeposit(shop, "ci-pay-1", 40_000);
  const paid = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/pay`);
  t.is(paid.status, 200, JSON.stringify(paid.json));
  t.like(paid.json.data, { transactionId: deposit.transactionId, processId: "ci-pay-1", status: "completed", amount: 40_000, requestedAmount: 40_000 });
  t.deepEqual(paid.json.data, await record(shop, deposit.transactionId), "the same record GET /v1/deposit/{id} answers");

  await eventually(() => shop.callbacks().length === 1, "the deposit.completed callback");
  const [callback] = shop.callbacks();
  t.like(callback, { type: "deposit.completed", verified: true });
  t.like(callback!.body.data, { transactionId: deposit.transactionId, status: "completed", amount: 40_000 });
  await eventually(async () => (await available(shop)) === 40_000, "the sandbox balance credit");

  // A second pay is refused and changes nothing.
  const again = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/pay`, { amount: 40_000 });
  t.is(again.status, 409);
  t.like(again.json.error, { code: "INVALID_TRANSACTION_STATE", details: { status: "completed" } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(await available(shop), 40_000);
  t.is(shop.callbacks().length, 1);
});

test("pay with a smaller amount, under the default rules: the transfer waits in review, the deposit stays pending, nothing is credited", async (t) => {
  const shop = await newShop(true);
  const deposit = await createDeposit(shop, "ci-short-review", 30_000);
  const paid = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/pay`, { amount: 10_000 });
  t.is(paid.status, 200, JSON.stringify(paid.json));
  t.like(paid.json.data, { status: "pending", amount: 30_000 });
  const { transfers } = await createServiceClient(DepositService, services.server.url).listUnmatchedTransfers({ includeReview: true, limit: 500 });
  t.true(transfers.some((tr) => tr.reviewDepositId === String(deposit.transactionId) && tr.amount === 10_000n));
  t.is(await available(shop), 0);
});

test("pay with a smaller amount does what ReportTransfer does with that transfer: completed with the amount received when the merchant's rule says so", async (t) => {
  const shop = await newShop(true);
  await createServiceClient(MerchantService, services.server.url).setPaymentRules({ merchantId: shop.merchantId, underpayment: UnderpaymentRule.COMPLETE });
  const viaHelper = await createDeposit(shop, "ci-short-1", 30_000);
  const viaBank = await createDeposit(shop, "ci-short-2", 30_000);
  const paid = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String(viaHelper.transactionId)}/pay`, { amount: 10_000, senderName: "Mehmet Kaya" });
  t.is(paid.status, 200, JSON.stringify(paid.json));

  // The same short transfer reported the way a bank integration does.
  const account = viaBank.assignedAccount as { iban: string };
  const reported = await createServiceClient(DepositService, services.server.url).reportTransfer({
    iban: account.iban,
    amount: 10_000n,
    senderName: "Mehmet Kaya",
    reference: String((await record(shop, viaBank.transactionId)).reference),
    bankTransactionId: "bank-ci-short-2",
  });
  t.is(reported.deposit?.id, String(viaBank.transactionId));
  const pick = (r: Json) => ({ status: r.status, amount: r.amount, requestedAmount: r.requestedAmount });
  t.deepEqual(pick(paid.json.data as Json), pick(await record(shop, viaBank.transactionId)));
  t.deepEqual(pick(paid.json.data as Json), { status: "completed", amount: 10_000, requestedAmount: 30_000 });

  await eventually(() => shop.callbacks().length === 2, "both deposit.completed callbacks");
  t.true(shop.callbacks().every((c) => c.type === "deposit.completed" && c.verified && c.body.data.amount === 10_000));
  await eventually(async () => (await available(shop)) === 20_000, "both credits of the amount received");
});

test("expire moves a pending sandbox deposit to expired, with its deposit.expired callback and no credit", async (t) => {
  const shop = await newShop(true);
  const deposit = await createDeposit(shop, "ci-exp-1", 20_000);
  const expired = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/expire`);
  t.is(expired.status, 200, JSON.stringify(expired.json));
  t.like(expired.json.data, { transactionId: deposit.transactionId, status: "expired" });
  await eventually(() => shop.callbacks().length === 1, "the deposit.expired callback");
  t.like(shop.callbacks()[0], { type: "deposit.expired", verified: true });
  t.like(shop.callbacks()[0]!.body.data, { transactionId: deposit.transactionId, status: "expired" });

  const pay = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/pay`);
  t.is(pay.status, 409);
  t.is((pay.json.error as Json).code, "INVALID_TRANSACTION_STATE");
  t.is(await available(shop), 0);
});

test("a live merchant gets 403 SANDBOX_ONLY: the deposit stays pending, no callback, the balance unchanged; another merchant's deposit is 404", async (t) => {
  const live = await newShop(false);
  const sandbox = await newShop(true);
  const deposit = await createDeposit(live, "ci-live-1", 40_000);
  for (const action of ["pay", "expire"]) {
    const res = await signedFetch(gateway.url, live.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/${action}`);
    t.is(res.status, 403, action);
    t.is((res.json.error as Json).code, "SANDBOX_ONLY");
    // A sandbox merchant naming the live merchant's deposit finds nothing.
    const other = await signedFetch(gateway.url, sandbox.creds, "POST", `/v1/sandbox/deposit/${String(deposit.transactionId)}/${action}`);
    t.is(other.status, 404, action);
    t.is((other.json.error as Json).code, "TRANSACTION_NOT_FOUND");
  }
  const unknown = await signedFetch(gateway.url, sandbox.creds, "POST", "/v1/sandbox/deposit/dep_does_not_exist/pay");
  t.is(unknown.status, 404);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.like(await record(live, deposit.transactionId), { status: "pending", amount: 40_000 });
  t.is(live.callbacks().length, 0);
  t.is(await available(live), 0);
});
