import test from "ava";
import { Code } from "@connectrpc/connect";
import { MERCHANT_CHANGED_TOPIC } from "@payments/contracts";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService, MerchantStatus } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createLogger, createMetrics, deriveDatabaseUrl, listenRpc, type BaseContext, type Env, type RunningServices, type ServiceModule } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, rejectionOf, testCustomer, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";
import { createMerchantCache, lookupMerchant } from "../src/merchant-lookup.js";

// The deposit service's cache of GetMerchant answers, against the real merchant service in a
// process of its own (MySQL, JetStream): what the deposit service asks for is counted by the
// merchant service's own RPC metric, and changes travel as the MerchantChanged events they are.
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let merchantSide: RunningServices | undefined;
let depositSide: RunningServices | undefined;

/**
 * The payout service as SetSandbox sees a merchant that never moved money: no withdrawals,
 * no balances, a mode fence that never blocks (this package does not depend on the real one; the payout suite uses it).
 */
const payoutWithoutMoney: ServiceModule = {
  name: "payout",
  services: [PayoutService],
  migrations: [],
  createContext: (base: BaseContext) => base,
  access: () => [],
  routes: (router) =>
    router.service(PayoutService, {
      listWithdrawals: async () => ({ withdrawals: [] }),
      getBalances: async () => ({ balances: [] }),
      // The switch's fence here: nothing to fence, nothing that blocks it.
      raiseModeFence: async () => ({ blocker: "" }),
      lowerModeFence: async () => ({ lowered: true }),
    }),
};

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "error", MASTER_KEY: "cd".repeat(32), ...nats, ...TEST_OPERATOR_ENV };
  // SetSandbox asks the deposit service (started next) whether the merchant has deposits; the
  // merchant service reads DEPOSIT_SERVICE_URL when it first needs it.
  const merchantEnv: Env = { ...common, DATABASE_URL: database.url };
  merchantSide = await startInProcess(["merchant", "bank-catalog", payoutWithoutMoney], { env: merchantEnv });
  depositSide = await startServices([depositModule], {
    mode: "split",
    env: { ...TEST_OPERATOR_ENV,
      ...common,
      DATABASE_URL: deriveDatabaseUrl(database.url, "deposit"),
      MERCHANT_SERVICE_URL: merchantSide.server.url,
      BANK_CATALOG_SERVICE_URL: merchantSide.server.url,
    },
  });
  merchantEnv.DEPOSIT_SERVICE_URL = depositSide.server.url;
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, merchantSide.server.url));
});

test.after.always(async () => {
  await depositSide?.stop();
  await merchantSide?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const merchants = () => createServiceClient(MerchantService, merchantSide!.server.url);
const deposits = () => createServiceClient(DepositService, depositSide!.server.url);
const depositContext = () => depositSide!.contexts.get("deposit") as DepositContext;

/** GetMerchant calls the merchant service has answered so far. */
async function getMerchantCalls(): Promise<number> {
  const { values } = await merchantSide!.metrics.rpcDuration.get();
  return values.filter((v) => v.metricName?.endsWith("_count") && v.labels.rpc_method === "GetMerchant").reduce((sum, v) => sum + v.value, 0);
}

async function newMerchant(sandbox = true): Promise<string> {
  return (await merchants().createMerchant({ name: "Cache Shop", sandbox })).merchant!.id;
}

let sequence = 0;
const createDeposit = (merchantId: string) =>
  deposits().createDeposit({ merchantId, processId: `cache-${++sequence}`, amount: 50_000n, customer: testCustomer });

/** How long `condition` took to hold, failing after 1 s. */
async function withinASecond(condition: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  await eventually(condition, what, 1000);
  return Date.now() - started;
}

test.serial("a merchant's facts are asked once: further deposits make no GetMerchant call", async (t) => {
  const merchantId = await newMerchant();
  const before = await getMerchantCalls();
  await createDeposit(merchantId);
  t.is(await getMerchantCalls(), before + 1, "the first deposit asks the merchant service");
  await Promise.all([createDeposit(merchantId), createDeposit(merchantId), createDeposit(merchantId)]);
  t.is(await getMerchantCalls(), before + 1, "the next three are answered from the cache");
});

test.serial("disabling a merchant refuses its next deposit within a second, and enabling it takes deposits again", async (t) => {
  const merchantId = await newMerchant();
  await createDeposit(merchantId);
  await merchants().setStatus({ merchantId, status: MerchantStatus.DISABLED });
  const refusedAfter = await withinASecond(async () => (await rejectionOf(createDeposit(merchantId)).catch(() => undefined))?.reason === "MERCHANT_DISABLED", "MERCHANT_DISABLED");
  t.log(`refused ${refusedAfter} ms after the change`);
  await merchants().setStatus({ merchantId, status: MerchantStatus.ACTIVE });
  await withinASecond(async () => (await createDeposit(merchantId).then(() => true).catch(() => false)), "a deposit taken again");
  t.pass();
});

test.serial("a switch between sandbox and live reaches the cached facts within a second", async (t) => {
  const merchantId = await newMerchant(true);
  t.true((await lookupMerchant(depositContext(), merchantId)).sandbox);
  const calls = await getMerchantCalls();
  t.true((await lookupMerchant(depositContext(), merchantId)).sandbox, "cached");
  t.is(await getMerchantCalls(), calls, "no call for a cached merchant");
  await merchants().setSandbox({ merchantId, sandbox: false });
  await withinASecond(async () => !(await lookupMerchant(depositContext(), merchantId)).sandbox, "the merchant seen as live");
  await merchants().setSandbox({ merchantId, sandbox: true });
  await withinASecond(async () => (await lookupMerchant(depositContext(), merchantId)).sandbox, "the merchant seen as sandbox again");
  t.pass();
});

test.serial("a change to one merchant keeps the others cached; an unreadable MerchantChanged drops them all", async (t) => {
  const [a, b] = [await newMerchant(), await newMerchant()];
  await lookupMerchant(depositContext(), a);
  await lookupMerchant(depositContext(), b);
  const calls = await getMerchantCalls();
  await merchants().setCallbackUrl({ merchantId: a, callbackUrl: "https://shop.example/cb" });
  await withinASecond(async () => {
    await lookupMerchant(depositContext(), a);
    return (await getMerchantCalls()) === calls + 1;
  }, "merchant a asked again");
  await lookupMerchant(depositContext(), b);
  t.is(await getMerchantCalls(), calls + 1, "merchant b still cached");

  await depositSide!.bus.publish(MERCHANT_CHANGED_TOPIC, new Uint8Array([0xff, 0xff, 0xff]), `garbage-${Date.now()}`);
  await withinASecond(async () => depositContext().merchantCache.size === 0, "everything dropped");
  await lookupMerchant(depositContext(), b);
  t.is(await getMerchantCalls(), calls + 2);
});

test.serial("an unknown merchant is VALIDATION_ERROR on merchant_id every time, never remembered", async (t) => {
  const calls = await getMerchantCalls();
  for (let i = 0; i < 2; i++) {
    t.like(await rejectionOf(createDeposit("mer_doesnotexist")), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "merchant_id" });
  }
  t.is(await getMerchantCalls(), calls + 2);
});

test.serial("with no event, a cached answer is kept no longer than MERCHANT_CACHE_TTL", async (t) => {
  // A cache of its own that watches nothing, on a clock the test moves: as if every event were lost.
  const clock = manualClock();
  const ctx: DepositContext = { ...depositContext(), merchantCache: createMerchantCache({ clock, logger: depositContext().logger }, 30_000) };
  const merchantId = await newMerchant();
  t.true((await lookupMerchant(ctx, merchantId)).active);
  await merchants().setStatus({ merchantId, status: MerchantStatus.DISABLED });
  clock.advance(29_999);
  const calls = await getMerchantCalls();
  t.true((await lookupMerchant(ctx, merchantId)).active, "stale, but within the TTL");
  t.is(await getMerchantCalls(), calls);
  clock.advance(1);
  t.false((await lookupMerchant(ctx, merchantId)).active, "asked again once the TTL has passed");
  t.is(await getMerchantCalls(), calls + 1);
});

test.serial("MERCHANT_CACHE_TTL=0 asks the merchant service for every deposit", async (t) => {
  const ctx: DepositContext = { ...depositContext(), merchantCache: createMerchantCache(depositContext(), 0) };
  const merchantId = await newMerchant();
  const calls = await getMerchantCalls();
  await lookupMerchant(ctx, merchantId);
  await lookupMerchant(ctx, merchantId);
  t.is(await getMerchantCalls(), calls + 2);
});

test.serial("simulating a payment asks the merchant service afresh, whatever is cached", async (t) => {
  const merchantId = await newMerchant(true);
  const { deposit } = await createDeposit(merchantId);
  const calls = await getMerchantCalls();
  await deposits().simulatePayment({ token: deposit!.checkoutToken });
  t.is(await getMerchantCalls(), calls + 1);
});

// ---------------------------------------------------------------- the checkout's merchant name

/** A deposit replica on the same database whose merchant service is `merchantUrl`, with its log lines kept. */
async function depositReplica(merchantUrl: string, extra: Env = {}): Promise<{ replica: RunningServices; logLines: Array<Record<string, unknown>> }> {
  const logLines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ service: "deposit", level: "warn", destination: { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) } });
  const replica = await startServices([depositModule], {
    mode: "split",
    logger,
    env: {
      GRPC_PORT: "0",
      LOG_LEVEL: "warn",
      ...nats,
      ...TEST_OPERATOR_ENV,
      DATABASE_URL: deriveDatabaseUrl(database.url, "deposit"),
      MERCHANT_SERVICE_URL: merchantUrl,
      BANK_CATALOG_SERVICE_URL: merchantSide!.server.url,
      ...extra,
    },
  });
  return { replica, logLines };
}

test.serial("GetCheckout names the merchant by its display name from the cache, and a new display name reaches it within a second", async (t) => {
  const { merchant } = await merchants().createMerchant({ name: "Ornek Magazacilik A.S.", displayName: "Örnek Mağaza", sandbox: true });
  const merchantId = merchant!.id;
  const { deposit } = await createDeposit(merchantId);
  const token = deposit!.checkoutToken;
  const calls = await getMerchantCalls();
  const checkout = await deposits().getCheckout({ token });
  t.is(checkout.merchantDisplayName, "Örnek Mağaza");
  t.is(checkout.deposit?.id, deposit!.id);
  t.is(await getMerchantCalls(), calls, "the facts the deposit was made with answer it: no GetMerchant call");

  await merchants().setDisplayName({ merchantId, displayName: "Yeni Mağaza" });
  await withinASecond(async () => (await deposits().getCheckout({ token })).merchantDisplayName === "Yeni Mağaza", "the new display name on the checkout");
  await merchants().setDisplayName({ merchantId, displayName: "" });
  await withinASecond(async () => (await deposits().getCheckout({ token })).merchantDisplayName === "Ornek Magazacilik A.S.", "the name again once the display name is cleared");
  t.pass();
});

test.serial("when the merchant service cannot be reached, GetCheckout still answers, with no merchant name, and says so in a log line", async (t) => {
  const merchantId = await newMerchant();
  const { deposit } = await createDeposit(merchantId);
  // Nothing listens on port 1: every call is refused at once.
  const { replica, logLines } = await depositReplica("http://127.0.0.1:1");
  t.teardown(() => replica.stop());
  const checkout = await createServiceClient(DepositService, replica.server.url).getCheckout({ token: deposit!.checkoutToken });
  t.is(checkout.deposit?.id, deposit!.id, "the page still gets its deposit");
  t.true(checkout.sandbox);
  t.is(checkout.merchantDisplayName, "");
  const line = logLines.find((l) => typeof l.msg === "string" && l.msg.startsWith("checkout without the merchant's name"));
  t.like(line, { level: "warn", merchantId, depositId: deposit!.id });
});

test.serial("a merchant service slower than CHECKOUT_MERCHANT_TIMEOUT: GetCheckout answers without the name in time, and the late answer serves the next view", async (t) => {
  const merchantId = (await merchants().createMerchant({ name: "Slow Shop", displayName: "Yavaş Mağaza", sandbox: true })).merchant!.id;
  const { deposit } = await createDeposit(merchantId);
  // A merchant service that holds every GetMerchant until the test lets it through.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  const logger = createLogger({ service: "slow-merchant", level: "silent" });
  const slow = await listenRpc({ port: 0, host: "127.0.0.1", logger });
  slow.serve({
    services: [MerchantService],
    logger,
    metrics: createMetrics("slow_"),
    routes: (router) =>
      router.service(MerchantService, {
        getMerchant: async (req) => {
          asked++;
          await released;
          return merchants().getMerchant(req);
        },
      }),
  });
  t.teardown(() => slow.close(0));
  const { replica, logLines } = await depositReplica(slow.url, { CHECKOUT_MERCHANT_TIMEOUT: "200ms" });
  t.teardown(() => replica.stop());
  const replicaDeposits = createServiceClient(DepositService, replica.server.url);

  const started = Date.now();
  const first = await replicaDeposits.getCheckout({ token: deposit!.checkoutToken });
  const waited = Date.now() - started;
  t.is(first.merchantDisplayName, "");
  t.is(first.deposit?.id, deposit!.id);
  t.true(waited >= 150 && waited < 2000, `answered after ${waited} ms`);
  t.like(
    logLines.find((l) => l.msg === "checkout without the merchant's name: the merchant service did not answer in time"),
    { level: "warn", merchantId, depositId: deposit!.id, waitedMs: 200 },
  );

  release();
  await withinASecond(async () => (await replicaDeposits.getCheckout({ token: deposit!.checkoutToken })).merchantDisplayName === "Yavaş Mağaza", "the name once the answer came");
  t.is(asked, 1, "the load cut short kept running and filled the cache: no second call");
});
