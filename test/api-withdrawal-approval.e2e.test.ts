import test from "ava";
import { allModules } from "@payments/all-in-one";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { startGateway } from "@payments/gateway";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import {
  addTestReceivingAccounts,
  CallbackReceiver,
  createServiceClient,
  createTestDatabase,
  credentialsOf,
  deleteTestStream,
  eventually,
  jetStreamTestEnv,
  testCustomer,
  testMerchantUser,
  testOperator,
  TEST_OPERATOR_ENV,
} from "@payments/testing";
import { serviceUrlsAt } from "@payments/testing/services";
import { signedFetch, type Credentials } from "./helpers.js";

// Issue 32, end to end through a real gateway: the merchant's approval threshold applies to its
// API keys' withdrawals. A signed POST /v1/withdraw above it keeps the public contract (201,
// pending), holds the amount, and nothing is sent (no withdrawal callback) until an owner of the
// merchant approves; rejected or lapsed it is cancelled with its reason in the
// withdrawal.cancelled callback and the amount is back. And every money move says who made it:
// the credit of a deposit names its completer, the hold the API key; none of it in the public
// record. Every service on MariaDB and JetStream, a real callback endpoint.
const js = jetStreamTestEnv();
const database = await createTestDatabase();
const TTL_MS = 5_000;
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
      MASTER_KEY: "6".repeat(64),
      LOG_LEVEL: "warn",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_POLL_INTERVAL: "50ms",
      CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
      PAYOUT_WORKER_INTERVAL: "100ms",
      SANDBOX_PAYOUT_DELAY: "50ms",
      WITHDRAWAL_APPROVAL_TTL: `${TTL_MS}ms`,
      WITHDRAWAL_APPROVAL_EXPIRY_INTERVAL: "200ms",
    },
  });
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, services.server.url));
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV, ...js, PORT: "0", HOST: "127.0.0.1", ...serviceUrlsAt(services.server.url), PUBLIC_BASE_URL: "https://pay.example.test", LOG_LEVEL: "warn" },
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
  callbacks(): Array<{ type: string; data: Json }>;
}

let shops = 0;
/** A sandbox shop that may withdraw from this host, funded by its CI's pay helper, with an owner's threshold of 100 TRY. */
async function fundedShop(lira: number): Promise<Shop> {
  const path = `/approval-cb/${++shops}`;
  const created = await createServiceClient(MerchantService, services.server.url).createMerchant({ name: `Four Eyes Shop ${shops}`, sandbox: true, allowedIps: ["127.0.0.1", "::1"], callbackUrl: receiver.url(path) });
  const shop: Shop = {
    creds: credentialsOf(created),
    merchantId: created.merchant!.id,
    callbacks: () =>
      receiver.received
        .filter((c) => c.path === path)
        .map((c) => JSON.parse(c.body.toString("utf8")) as { type: string; data: Json })
        .map((b) => ({ type: b.type, data: b.data })),
  };
  const deposit = await signedFetch(gateway.url, shop.creds, "POST", "/v1/deposit", { processId: `fund-${shops}`, amount: lira * 100, customer: testCustomer });
  if (deposit.status !== 201) throw new Error(`deposit not created: ${JSON.stringify(deposit.json)}`);
  const paid = await signedFetch(gateway.url, shop.creds, "POST", `/v1/sandbox/deposit/${String((deposit.json.data as Json).transactionId)}/pay`);
  if (paid.status !== 200) throw new Error(`deposit not paid: ${JSON.stringify(paid.json)}`);
  await eventually(async () => (await balance(shop)).available === lira * 100, "the deposit credited");
  await createServiceClient(MerchantService, services.server.url, { operator: testMerchantUser(shop.merchantId, "owner"), approver: null }).setWithdrawalApproval({ threshold: 10_000n });
  return shop;
}

async function balance(shop: Shop): Promise<{ available: number; held: number }> {
  const res = await signedFetch(gateway.url, shop.creds, "GET", "/v1/balance");
  const row = (res.json.data as { balances: Array<{ currency: string; available: number; held: number }> }).balances.find((b) => b.currency === "TRY");
  return { available: row?.available ?? 0, held: row?.held ?? 0 };
}

async function withdraw(shop: Shop, processId: string, amount: number): Promise<Json> {
  const res = await signedFetch(gateway.url, shop.creds, "POST", "/v1/withdraw", { processId, amount, accountName: "Elif Şahin", iban: "TR33 0006 1005 1978 6457 8413 26", userId: "u1", userName: "elif", name: "Elif Şahin" });
  if (res.status !== 201) throw new Error(`withdrawal not created: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json.data as Json;
}

const owner = (shop: Shop) => createServiceClient(PayoutService, services.server.url, { operator: testMerchantUser(shop.merchantId, "owner", "sahip@four-eyes.example"), approver: null });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("a signed POST /v1/withdraw above the threshold: 201 pending and held, no callback until an owner approves; then processing and completed callbacks, once", async (t) => {
  const shop = await fundedShop(1_000);
  const created = await withdraw(shop, "over-1", 30_000);
  t.like(created, { status: "pending", amount: 30_000 }, "the public API's contract, unchanged");
  t.false(JSON.stringify(created).includes("approval") || JSON.stringify(created).includes("spiffe"), "nothing internal in the public record");
  t.deepEqual(await balance(shop), { available: 70_000, held: 30_000 });
  await sleep(800);
  t.like((await signedFetch(gateway.url, shop.creds, "GET", `/v1/withdraw/${String(created.transactionId)}`)).json.data, { status: "pending" });
  t.deepEqual(shop.callbacks().filter((c) => c.type.startsWith("withdrawal.")), [], "nothing sent, nothing told");

  const { withdrawals } = await owner(shop).listWithdrawalApprovals({});
  t.deepEqual(withdrawals.map((w) => w.id), [created.transactionId]);
  t.regex(withdrawals[0]!.createdBy, new RegExp(`^API key \\S+ of ${shop.merchantId} via spiffe://payments\\.local/gateway$`));
  await owner(shop).approveWithdrawal({ withdrawalId: String(created.transactionId) });
  await eventually(() => shop.callbacks().some((c) => c.type === "withdrawal.completed"), "the withdrawal.completed callback");
  t.deepEqual(
    shop.callbacks().filter((c) => c.type.startsWith("withdrawal.")).map((c) => [c.type, c.data.status]),
    [["withdrawal.processing", "processing"], ["withdrawal.completed", "completed"]],
  );
  t.deepEqual(await balance(shop), { available: 70_000, held: 0 });
});

test("rejected by an owner, or left undecided past WITHDRAWAL_APPROVAL_TTL: withdrawal.cancelled with its reason, the amount back", async (t) => {
  const shop = await fundedShop(1_000);
  const rejected = await withdraw(shop, "over-reject", 20_000);
  const lapsing = await withdraw(shop, "over-lapse", 15_000);
  t.deepEqual(await balance(shop), { available: 65_000, held: 35_000 });
  await owner(shop).rejectWithdrawal({ withdrawalId: String(rejected.transactionId), reason: "unknown recipient" });
  await eventually(() => shop.callbacks().some((c) => c.type === "withdrawal.cancelled" && c.data.transactionId === rejected.transactionId), "the rejection's callback");
  t.like(shop.callbacks().find((c) => c.data.transactionId === rejected.transactionId)!.data, { status: "cancelled", failureReason: "APPROVAL_REJECTED" });

  await eventually(() => shop.callbacks().some((c) => c.type === "withdrawal.cancelled" && c.data.transactionId === lapsing.transactionId), "the lapsed one's callback", TTL_MS + 10_000);
  t.like(shop.callbacks().find((c) => c.data.transactionId === lapsing.transactionId)!.data, { status: "cancelled", failureReason: "APPROVAL_EXPIRED" });
  t.deepEqual(await balance(shop), { available: 100_000, held: 0 });
  t.is(shop.callbacks().filter((c) => c.type === "withdrawal.processing").length, 0, "neither was ever sent");
});

test("every credit names who completed its deposit: the merchant's CI key through the pay helper, a bank integration's report; the public record says nothing of it", async (t) => {
  const shop = await fundedShop(500);
  const finance = createServiceClient(PayoutService, services.server.url, { operator: testOperator("finance") });
  const ledger = async () => (await finance.listLedgerEntries({ merchantId: shop.merchantId, limit: 100 })).entries;
  const viaHelper = (await ledger()).find((e) => e.kind === "deposit_credit")!;
  t.regex(viaHelper.actor, new RegExp(`^sandbox pay helper: API key \\S+ of ${shop.merchantId} via spiffe://payments\\.local/gateway$`));

  const deposit = await signedFetch(gateway.url, shop.creds, "POST", "/v1/deposit", { processId: "by-bank", amount: 12_000, customer: testCustomer });
  const data = deposit.json.data as { transactionId: string; reference?: string; assignedAccount: { iban: string } };
  const record = (await signedFetch(gateway.url, shop.creds, "GET", `/v1/deposit/${data.transactionId}`)).json.data as { reference: string };
  await createServiceClient(DepositService, services.server.url, { operator: null, workload: "bank-integration/test-bank" }).reportTransfer({
    iban: data.assignedAccount.iban,
    amount: 12_000n,
    senderName: "Ayşe Yılmaz",
    reference: record.reference,
    bankTransactionId: "e2e-who-1",
  });
  await eventually(async () => (await ledger()).some((e) => e.transactionId === data.transactionId), "the bank-reported deposit credited");
  t.is((await ledger()).find((e) => e.transactionId === data.transactionId)!.actor, "spiffe://payments.local/bank-integration/test-bank");
  await eventually(() => shop.callbacks().some((c) => c.data.transactionId === data.transactionId), "its deposit.completed callback");
  const told = JSON.stringify([shop.callbacks().find((c) => c.data.transactionId === data.transactionId), (await signedFetch(gateway.url, shop.creds, "GET", `/v1/deposit/${data.transactionId}`)).json]);
  t.false(told.includes("spiffe") || told.includes("completedBy"), told);
});
