import test from "ava";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, newId, type Env, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { bankIban, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, rejectionOf, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { PayoutContext } from "../src/context.js";
import { creditDeposit } from "../src/deposit-credits.js";
import { createPayoutModule } from "../src/index.js";
import { createMerchantCache, merchantOf, requireMerchant } from "../src/merchants.js";

// The payout service's cache of GetMerchant answers (withdrawals, adjustments, the
// deposit-credit check), against the real merchant service in a process of its own (MySQL,
// JetStream): what the payout service asks is counted by the merchant service's own RPC metric,
// and changes travel as the MerchantChanged events they are.
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let merchantSide: RunningServices | undefined;
let payoutSide: RunningServices | undefined;

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "fatal", MASTER_KEY: "ef".repeat(32), ...nats, ...TEST_OPERATOR_ENV };
  // SetSandbox asks the payout service (started next) about withdrawals and balances; the
  // merchant service reads PAYOUT_SERVICE_URL when it first needs it.
  const merchantEnv: Env = { ...common, DATABASE_URL: database.url };
  merchantSide = await startInProcess(["merchant", "bank-catalog", "deposit"], { env: merchantEnv });
  payoutSide = await startServices([createPayoutModule()], {
    mode: "split",
    env: { ...TEST_OPERATOR_ENV,
      ...common,
      PAYOUT_WORKER: "0",
      DATABASE_URL: deriveDatabaseUrl(database.url, "payout"),
      MERCHANT_SERVICE_URL: merchantSide.server.url,
      BANK_CATALOG_SERVICE_URL: merchantSide.server.url,
    },
  });
  merchantEnv.PAYOUT_SERVICE_URL = payoutSide.server.url;
  await createServiceClient(BankCatalogService, merchantSide.server.url).seedSandboxAccounts({});
});

test.after.always(async () => {
  await payoutSide?.stop();
  await merchantSide?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const merchants = () => createServiceClient(MerchantService, merchantSide!.server.url);
const payouts = () => createServiceClient(PayoutService, payoutSide!.server.url);
const payout = () => payoutSide!.contexts.get("payout") as PayoutContext;

/** GetMerchant calls the merchant service has answered so far. */
async function getMerchantCalls(): Promise<number> {
  const { values } = await merchantSide!.metrics.rpcDuration.get();
  return values.filter((v) => v.metricName?.endsWith("_count") && v.labels.rpc_method === "GetMerchant").reduce((sum, v) => sum + v.value, 0);
}

async function newMerchant(sandbox = true): Promise<string> {
  return (await merchants().createMerchant({ name: "Payout Cache Shop", sandbox })).merchant!.id;
}

/** How long `condition` took to hold, failing after 1 s. */
async function withinASecond(condition: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  await eventually(condition, what, 1000);
  return Date.now() - started;
}

let sequence = 0;
function withdraw(merchantId: string) {
  sequence += 1;
  const iban = bankIban("00062", 5000 + sequence);
  return payouts().createWithdrawal({ merchantId, processId: `cache-${sequence}`, amount: 100n, accountName: "Ayşe Yılmaz", iban, userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" });
}

/** The event of a completed sandbox deposit, as the deposit service publishes it. */
function sandboxDepositCompleted(merchantId: string): Uint8Array {
  return toBinary(
    DepositStatusChangedSchema,
    create(DepositStatusChangedSchema, {
      eventId: newId("evt"),
      deposit: { id: newId("dep"), merchantId, amount: 1_000n, requestedAmount: 1_000n, currency: "TRY", status: DepositStatus.COMPLETED, sequence: 2n, sandbox: true },
      previousStatus: DepositStatus.PENDING,
      occurredAt: timestampNow(),
    }),
  );
}

test.serial("a merchant is asked once: further adjustments, withdrawals and deposit credits make no GetMerchant call but the four-eyes check's", async (t) => {
  const merchantId = await newMerchant();
  const before = await getMerchantCalls();
  // Whether an operator's adjustment needs a second operator (a live merchant) is asked afresh
  // each time (access.ts), never from the cache: one call per adjustment besides the handler's.
  await payouts().adjustBalance({ merchantId, amount: 10_000n, reason: "test funds" });
  t.is(await getMerchantCalls(), before + 2, "the first asks the merchant service (and the four-eyes check its own question)");
  await payouts().adjustBalance({ merchantId, amount: 10_000n, reason: "more funds" });
  t.is(await getMerchantCalls(), before + 3, "a further adjustment asks only the four-eyes check's question");
  await Promise.all([withdraw(merchantId), withdraw(merchantId)]);
  t.is(await getMerchantCalls(), before + 3, "the rest are answered from the cache");
  t.is(await creditDeposit(payout(), sandboxDepositCompleted(merchantId)), "credited");
  // Issue 22: a merchant with a deposit never switches kinds (the mode fence), so the cached
  // answer holds for the credit check too; it asked afresh per deposit before.
  t.is(await getMerchantCalls(), before + 3, "a sandbox credit is answered from the cache too");
});

test.serial("a switch between sandbox and live reaches withdrawals and the deposit-credit check within a second", async (t) => {
  const merchantId = await newMerchant(true);
  t.true((await requireMerchant(payout(), merchantId)).sandbox);
  await merchants().setSandbox({ merchantId, sandbox: false });
  const seen = await withinASecond(async () => !(await requireMerchant(payout(), merchantId)).sandbox, "the merchant seen as live");
  t.log(`seen as live ${seen} ms after the switch`);
  t.is(await creditDeposit(payout(), sandboxDepositCompleted(merchantId)), "refused", "sandbox money is not credited to a live merchant");

  await merchants().setSandbox({ merchantId, sandbox: true });
  await withinASecond(async () => (await merchantOf(payout(), merchantId)).sandbox, "the merchant seen as sandbox again");
  t.is(await creditDeposit(payout(), sandboxDepositCompleted(merchantId)), "credited");
});

test.serial("an unknown merchant is VALIDATION_ERROR on merchant_id every time, never remembered", async (t) => {
  const calls = await getMerchantCalls();
  for (let i = 0; i < 2; i++) {
    t.like(await rejectionOf(payouts().adjustBalance({ merchantId: "mer_doesnotexist", amount: 1n, reason: "typo" })), {
      code: Code.InvalidArgument,
      reason: "VALIDATION_ERROR",
      field: "merchant_id",
    });
  }
  t.is(await getMerchantCalls(), calls + 2);
});

test.serial("with no event, a cached merchant is kept no longer than MERCHANT_CACHE_TTL", async (t) => {
  // A cache of its own that watches nothing, on a clock the test moves: as if every event were lost.
  const clock = manualClock();
  const ctx: PayoutContext = { ...payout(), merchantCache: createMerchantCache({ clock, logger: payout().logger }, 30_000) };
  const merchantId = await newMerchant(true);
  t.true((await requireMerchant(ctx, merchantId)).sandbox);
  await merchants().setSandbox({ merchantId, sandbox: false });
  clock.advance(29_999);
  const calls = await getMerchantCalls();
  t.true((await requireMerchant(ctx, merchantId)).sandbox, "stale, but within the TTL");
  t.is(await getMerchantCalls(), calls);
  clock.advance(1);
  t.false((await requireMerchant(ctx, merchantId)).sandbox, "asked again once the TTL has passed");
  t.is(await getMerchantCalls(), calls + 1);
});

test.serial("MERCHANT_CACHE_TTL=0 asks the merchant service every time", async (t) => {
  const ctx: PayoutContext = { ...payout(), merchantCache: createMerchantCache(payout(), 0) };
  const merchantId = await newMerchant();
  const calls = await getMerchantCalls();
  await requireMerchant(ctx, merchantId);
  await requireMerchant(ctx, merchantId);
  t.is(await getMerchantCalls(), calls + 2);
});
