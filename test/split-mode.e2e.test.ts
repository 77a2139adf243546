import test from "ava";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService, MerchantStatus } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { createServiceClient, startServices, type RunningServices } from "@payments/kit";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv } from "@payments/kit/testing";
import { merchantModule } from "@payments/merchant-service";
import { bankListProblems, signedFetch, type BankEntry } from "./helpers.js";

// Each service alone, as `docker compose` runs them: own process settings, own MySQL
// database, events over JetStream only. The gateway hears MerchantChanged over NATS.
const token = "split-mode-internal-token";
const js = jetStreamTestEnv();
const databases = await Promise.all([createTestDatabase(), createTestDatabase()]);
const common = { ...js, GRPC_PORT: "0", INTERNAL_API_TOKEN: token, LOG_LEVEL: "warn" };
let merchantSvc: RunningServices;
let catalogSvc: RunningServices;
let gateway: Awaited<ReturnType<typeof startGateway>>;

test.before(async () => {
  merchantSvc = await startServices([merchantModule], {
    mode: "split",
    env: { ...common, DATABASE_URL: databases[0]!.url, MASTER_KEY: "a".repeat(64) },
  });
  catalogSvc = await startServices([bankCatalogModule], { mode: "split", env: { ...common, DATABASE_URL: databases[1]!.url } });
  gateway = await startGateway({
    env: {
      ...js,
      PORT: "0",
      HOST: "127.0.0.1",
      INTERNAL_API_TOKEN: token,
      MERCHANT_SERVICE_URL: merchantSvc.server.url,
      BANK_CATALOG_SERVICE_URL: catalogSvc.server.url,
      // Long enough that only the JetStream event can explain a prompt refusal.
      CREDENTIAL_CACHE_TTL: "10m",
      LOG_LEVEL: "warn",
    },
  });
});

test.after.always(async () => {
  await gateway?.stop();
  await merchantSvc?.stop();
  await catalogSvc?.stop();
  await Promise.all(databases.map((d) => d.drop()));
  await deleteTestStream(js);
});

const merchants = () => createServiceClient(MerchantService, merchantSvc.server.url, { token });

test("a merchant created over RPC gets the signed bank list through the gateway (MySQL + JetStream)", async (t) => {
  const created = await merchants().createMerchant({ name: "Split Shop" });
  const res = await signedFetch(gateway.url, { apiKey: created.merchant!.apiKey, apiSecret: created.apiSecret }, "GET", "/v1/available-banks");
  t.is(res.status, 200);
  t.is(res.json.success, true);
  t.true(Number.isInteger(res.json.timestamp));
  t.deepEqual(bankListProblems(res.json.data), []);
  const banks = (res.json.data as { banks: BankEntry[] }).banks;
  t.true(banks.some((b) => b.code === "0064"), "seeded Türkiye İş Bankası is listed");
  t.is(banks.at(-1)?._id, "FAST");
  t.truthy(res.headers.get("x-request-id"));
});

test("a merchant override in the catalog changes that merchant's limits only", async (t) => {
  const [a, b] = await Promise.all([merchants().createMerchant({ name: "A" }), merchants().createMerchant({ name: "B" })]);
  const catalog = createServiceClient(BankCatalogService, catalogSvc.server.url, { token });
  const bank = (await catalog.listBanks({})).banks.find((x) => x.code === "0062")!;
  await catalog.setMerchantLimit({ limit: { merchantId: a.merchant!.id, bankId: bank.id, minAmount: 5000n, maxAmount: 7000n } });
  const list = async (m: typeof a) =>
    ((await signedFetch(gateway.url, { apiKey: m.merchant!.apiKey, apiSecret: m.apiSecret }, "GET", "/v1/available-banks")).json.data as { banks: BankEntry[] }).banks.find(
      (x) => x._id === bank.id,
    );
  t.like(await list(a), { minAmount: 5000, maxAmount: 7000 });
  t.like(await list(b), { minAmount: Number(bank.minAmount), maxAmount: Number(bank.maxAmount) });
});

test("disabling a merchant refuses its key at once: the gateway drops its cache on the JetStream event", async (t) => {
  const created = await merchants().createMerchant({ name: "Soon disabled" });
  const creds = { apiKey: created.merchant!.apiKey, apiSecret: created.apiSecret };
  t.is((await signedFetch(gateway.url, creds, "GET", "/v1/available-banks")).status, 200);
  await merchants().setStatus({ merchantId: created.merchant!.id, status: MerchantStatus.DISABLED });
  let status = 0;
  for (let i = 0; i < 50 && status !== 401; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const res = await signedFetch(gateway.url, creds, "GET", "/v1/available-banks");
    status = res.status;
    if (status === 401) t.is((res.json.error as { code: string }).code, "INVALID_API_KEY");
  }
  t.is(status, 401, "refused within 5 s although the cache TTL is 10 minutes");
});

test("internal calls without the internal token are refused in split mode", async (t) => {
  const anonymous = createServiceClient(MerchantService, merchantSvc.server.url);
  const err = await t.throwsAsync(anonymous.listMerchants({}));
  t.regex(err!.message, /internal API token/);
});

test("/healthz is 200 while both services answer", async (t) => {
  const res = await fetch(`${gateway.url}/healthz`);
  t.is(res.status, 200);
  t.is(((await res.json()) as { success: boolean }).success, true);
});
