import test from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { deriveDatabaseUrl, errorInfo, type BaseContext, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, testCustomer, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";

// The deposit service's cache of GetDepositTerms answers, against the real bank catalog in a
// process of its own (MySQL, JetStream): the calls it makes are counted by the catalog's own
// RPC metric, and changes travel as the CatalogChanged events they are. The catalog keeps no
// snapshot here (CATALOG_CACHE_TTL=0), so a change written behind its back shows what only the
// deposit service's TTL can bound.
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const depositClock = manualClock(new Date());
const TTL_MS = 30_000;
let catalogSide: RunningServices | undefined;
let depositSide: RunningServices | undefined;

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "error", MASTER_KEY: "cd".repeat(32), ...nats, ...TEST_OPERATOR_ENV };
  catalogSide = await startInProcess(["merchant", "bank-catalog"], { env: { ...common, DATABASE_URL: database.url, CATALOG_CACHE_TTL: "0" } });
  depositSide = await startServices([depositModule], {
    mode: "split",
    clock: depositClock,
    env: { ...TEST_OPERATOR_ENV,
      ...common,
      DATABASE_URL: deriveDatabaseUrl(database.url, "deposit"),
      MERCHANT_SERVICE_URL: catalogSide.server.url,
      BANK_CATALOG_SERVICE_URL: catalogSide.server.url,
      CATALOG_CACHE_TTL: `${TTL_MS}ms`,
    },
  });
  await addTestReceivingAccounts(catalog());
});

test.after.always(async () => {
  await depositSide?.stop();
  await catalogSide?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const catalog = () => createServiceClient(BankCatalogService, catalogSide!.server.url);
const deposits = () => createServiceClient(DepositService, depositSide!.server.url, { clock: depositClock });
const catalogDb = () => (catalogSide!.contexts.get("bank-catalog") as BaseContext).db;

/** GetDepositTerms calls the bank catalog has answered so far. */
async function termsCalls(): Promise<number> {
  const { values } = await catalogSide!.metrics.rpcDuration.get();
  return values.filter((v) => v.metricName?.endsWith("_count") && v.labels.rpc_method === "GetDepositTerms").reduce((sum, v) => sum + v.value, 0);
}

async function newMerchant(): Promise<string> {
  return (await createServiceClient(MerchantService, catalogSide!.server.url).createMerchant({ name: "Terms Shop", sandbox: true })).merchant!.id;
}

async function bankId(code: string): Promise<string> {
  return (await catalog().listBanks({})).banks.find((b) => b.code === code)!.id;
}

let sequence = 0;
const createDeposit = (merchantId: string, bankId: string, amount = 50_000n) =>
  deposits().createDeposit({ merchantId, processId: `terms-${++sequence}`, amount, bankId, customer: testCustomer });

/** The reason a deposit is refused now, or "created". */
const outcome = (merchantId: string, bank: string, amount?: bigint) =>
  createDeposit(merchantId, bank, amount).then(
    () => "created",
    (err: unknown) => errorInfo(err).reason ?? "failed",
  );

/** Lets the second drop of earlier events (500 ms after each) pass, so what follows is kept undisturbed. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 600));

/** How long `condition` took to hold, failing after 1 s. */
async function withinASecond(condition: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  await eventually(condition, what, 1000);
  return Date.now() - started;
}

test.serial("a deposit's terms are asked once per (merchant, bank, kind): further deposits make no GetDepositTerms call", async (t) => {
  const merchantId = await newMerchant();
  const akbank = await bankId("0046");
  const before = await termsCalls();
  await createDeposit(merchantId, akbank);
  t.is(await termsCalls(), before + 1);
  await Promise.all([createDeposit(merchantId, akbank), createDeposit(merchantId, akbank), createDeposit(merchantId, akbank)]);
  t.is(await termsCalls(), before + 1, "answered from the cache");
  await createDeposit(merchantId, "FAST");
  t.is(await termsCalls(), before + 2, "another bank is another question");
});

test.serial("a merchant limit set in the catalog applies to that merchant's next deposit within a second", async (t) => {
  const merchantId = await newMerchant();
  const akbank = await bankId("0046");
  t.is(await outcome(merchantId, akbank), "created");
  await catalog().setMerchantLimit({ limit: { merchantId, bankId: akbank, minAmount: 60_000n } });
  const after = await withinASecond(async () => (await outcome(merchantId, akbank)) === "AMOUNT_OUT_OF_RANGE", "the new minimum applied");
  t.log(`applied ${after} ms after the change`);
  await catalog().clearMerchantLimit({ merchantId, bankId: akbank });
  await withinASecond(async () => (await outcome(merchantId, akbank)) === "created", "the default limits back");
  t.pass();
});

test.serial("a bank deactivated in the catalog is refused within a second, and the refusal is remembered until it is active again", async (t) => {
  const merchantId = await newMerchant();
  const garanti = await bankId("0062");
  t.is(await outcome(merchantId, garanti), "created");
  await catalog().updateBank({ bankId: garanti, active: false });
  const after = await withinASecond(async () => (await outcome(merchantId, garanti)) === "VALIDATION_ERROR", "the deactivated bank refused");
  t.log(`refused ${after} ms after the change`);
  await settled();
  await outcome(merchantId, garanti);
  const calls = await termsCalls();
  t.is(await outcome(merchantId, garanti), "VALIDATION_ERROR");
  t.is(await termsCalls(), calls, "a bank that is not available is an answer too: no call for the refusal");
  await catalog().updateBank({ bankId: garanti, active: true });
  await withinASecond(async () => (await outcome(merchantId, garanti)) === "created", "the bank taking deposits again");
  t.pass();
});

test.serial("without any event, CATALOG_CACHE_TTL bounds how long the deposit service uses old terms", async (t) => {
  const merchantId = await newMerchant();
  const isbank = await bankId("0064");
  await settled();
  t.is(await outcome(merchantId, isbank), "created");
  // Behind the catalog's back: no CatalogChanged is recorded.
  const now = Date.now();
  await catalogDb()("merchant_limits").insert({ merchant_id: merchantId, bank_id: isbank, enabled: null, min_amount: 60_000, max_amount: null, created_at: now, updated_at: now });
  depositClock.advance(TTL_MS - 1);
  t.is(await outcome(merchantId, isbank), "created", "within the TTL the kept terms apply");
  depositClock.advance(1);
  t.is(await outcome(merchantId, isbank), "AMOUNT_OUT_OF_RANGE", "at the TTL they are asked again");
});
