import test from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, type BaseContext, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, rejectionOf, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { createPayoutModule } from "../src/index.js";

// The bank-id check of CreateWithdrawal, against the real bank catalog in a process of its
// own (MySQL, JetStream): its ListBanks calls are counted by the catalog's own RPC metric, and
// changes travel as CatalogChanged events. The catalog keeps no snapshot here
// (CATALOG_CACHE_TTL=0), so a bank added behind its back shows what only the payout
// service's TTL can bound.
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const payoutClock = manualClock(new Date());
const TTL_MS = 30_000;
let catalogSide: RunningServices | undefined;
let payoutSide: RunningServices | undefined;
let merchantId = "";

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "fatal", MASTER_KEY: "ef".repeat(32), ...nats, ...TEST_OPERATOR_ENV };
  catalogSide = await startInProcess(["merchant", "bank-catalog"], { env: { ...common, DATABASE_URL: database.url, CATALOG_CACHE_TTL: "0" } });
  payoutSide = await startServices([createPayoutModule()], {
    mode: "split",
    clock: payoutClock,
    env: { ...TEST_OPERATOR_ENV,
      ...common,
      PAYOUT_WORKER: "0",
      DATABASE_URL: deriveDatabaseUrl(database.url, "payout"),
      MERCHANT_SERVICE_URL: catalogSide.server.url,
      BANK_CATALOG_SERVICE_URL: catalogSide.server.url,
      CATALOG_CACHE_TTL: `${TTL_MS}ms`,
    },
  });
  merchantId = (await createServiceClient(MerchantService, catalogSide.server.url).createMerchant({ name: "Bank Check Shop", sandbox: true })).merchant!.id;
});

test.after.always(async () => {
  await payoutSide?.stop();
  await catalogSide?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const catalog = () => createServiceClient(BankCatalogService, catalogSide!.server.url);
const payouts = () => createServiceClient(PayoutService, payoutSide!.server.url);

/** ListBanks calls the bank catalog has answered so far. */
async function listBanksCalls(): Promise<number> {
  const { values } = await catalogSide!.metrics.rpcDuration.get();
  return values.filter((v) => v.metricName?.endsWith("_count") && v.labels.rpc_method === "ListBanks").reduce((sum, v) => sum + v.value, 0);
}

let sequence = 0;

/**
 * Whether a withdrawal naming `bankId` passes the bank check. The merchant has no balance,
 * so one that passes stops at INSUFFICIENT_BALANCE; one that does not is VALIDATION_ERROR on
 * bank_id.
 */
async function bankAccepted(bankId: string): Promise<boolean> {
  sequence += 1;
  const refusal = await rejectionOf(
    payouts().createWithdrawal({ merchantId, processId: `bank-${sequence}`, amount: 100n, bankId, accountName: "Ayşe Yılmaz", iban: "TR330006100519786457841326", userId: "u1", userName: "ayse", name: "Ayşe" }),
  );
  if (refusal.reason === "INSUFFICIENT_BALANCE") return true;
  if (refusal.reason === "VALIDATION_ERROR" && refusal.field === "bank_id") return false;
  throw new Error(`unexpected refusal: ${JSON.stringify(refusal)}`);
}

test.serial("the bank id of a withdrawal is checked against ListBanks asked once, not once per withdrawal", async (t) => {
  const [akbank] = (await catalog().listBanks({})).banks;
  const before = await listBanksCalls();
  t.true(await bankAccepted(akbank!.id));
  t.is(await listBanksCalls(), before + 1);
  // One after another: concurrent first holds of a merchant without a balance row can deadlock
  // on MariaDB (a ledger matter, not this check's).
  const results: boolean[] = [];
  for (const id of [akbank!.id, "bnk_unknown", "FAST", akbank!.id]) results.push(await bankAccepted(id));
  t.deepEqual(results, [true, false, true, true]);
  t.is(await listBanksCalls(), before + 1, "answered from the cached bank ids");
});

test.serial("a bank added to the catalog is accepted within a second", async (t) => {
  await bankAccepted("FAST");
  const { bank } = await catalog().createBank({ name: "New Bank", code: "NEW1", logoUrl: "", minAmount: 100n, maxAmount: 1000n });
  const started = Date.now();
  await eventually(() => bankAccepted(bank!.id), "the new bank accepted", 1_000);
  t.log(`accepted ${Date.now() - started} ms after the change`);
  t.pass();
});

test.serial("without any event, CATALOG_CACHE_TTL bounds how long the payout service uses old bank ids", async (t) => {
  // Past the second drop (500 ms) of the previous test's event, so the ids read next are kept undisturbed.
  await new Promise((resolve) => setTimeout(resolve, 600));
  t.false(await bankAccepted("bnk_behind_the_back"));
  const now = Date.now();
  await (catalogSide!.contexts.get("bank-catalog") as BaseContext)
    .db("banks")
    .insert({ id: "bnk_behind_the_back", name: "Quiet Bank", code: "QUIET", logo_url: "", active: true, min_amount: 1, max_amount: 2, created_at: now, updated_at: now });
  payoutClock.advance(TTL_MS - 1);
  t.false(await bankAccepted("bnk_behind_the_back"), "within the TTL the kept ids apply");
  payoutClock.advance(1);
  t.true(await bankAccepted("bnk_behind_the_back"), "at the TTL they are asked again");
});
