import test, { type ExecutionContext } from "ava";
import type { AllInOne } from "@payments/all-in-one";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { type BaseContext } from "@payments/kit";
import { createServiceClient, credentialsOf, eventuallyAt, runCli, testCustomer } from "@payments/testing";
import { signedFetch, type Credentials } from "./helpers.js";
import { offered, startCatalogDeployments, type CatalogDeployments } from "./catalog-deployments.js";

// The bank list and deposit terms are cached at every hop (the catalog's snapshot, the
// gateway's lists, the deposit service's terms), with TTLs of 10 minutes here: only the
// CatalogChanged event can explain a prompt change. An operator disables a bank with the real
// CLI; within 1 s of the change being written the bank is no longer offered and a deposit
// through it is refused. Once in split mode (MySQL, JetStream, a process per service as far
// as the ports go), once all-in-one (SQLite, the in-process bus). A gateway that hears no
// events at all shows what the TTL alone bounds.

const token = "catalog-cache-internal-token";
const BOUND_MS = 1_000;
const AKBANK_CODE = "0046";
const GARANTI_CODE = "0062";

interface Deployment {
  gatewayUrl: string;
  catalogUrl: string;
  merchantUrl: string;
  token?: string;
  catalogDb(): BaseContext["db"];
  /** ListAvailableBanks calls the gateway has made so far. */
  gatewayCatalogLoads(): number;
}

let deployments: CatalogDeployments | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>>;
/** Hears no events: NATS_URL unset and no bus given. */
let deafGateway: Awaited<ReturnType<typeof startGateway>>;
let allInOne: AllInOne;
let split: Deployment;
let local: Deployment;

test.before(async () => {
  deployments = await startCatalogDeployments({ token, masterKeys: ["b".repeat(64), "c".repeat(64)], receivingAccounts: true });
  ({ gateway, deafGateway, allInOne } = deployments);
  const splitServices = deployments.split;
  split = {
    gatewayUrl: gateway.url,
    catalogUrl: splitServices.url("bank-catalog"),
    merchantUrl: splitServices.url("merchant"),
    token,
    catalogDb: () => splitServices.service("bank-catalog").contexts.get("bank-catalog")!.db,
    gatewayCatalogLoads: () => gateway.catalog.stats().loads,
  };

  local = {
    gatewayUrl: allInOne.gateway.url,
    catalogUrl: allInOne.services.server.url,
    merchantUrl: allInOne.services.server.url,
    catalogDb: () => allInOne.services.contexts.get("bank-catalog")!.db,
    gatewayCatalogLoads: () => allInOne.gateway.catalog.stats().loads,
  };
});

test.after.always(async () => {
  await deployments?.stop();
});

/** `pnpm cli …` against a deployment, as an operator runs it. */
function cli(deployment: Deployment, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // runCli signs as the test admin, whose key both deployments' services accept.
  return runCli(args, { GRPC_URL: deployment.catalogUrl, BANK_CATALOG_SERVICE_URL: deployment.catalogUrl, MERCHANT_SERVICE_URL: deployment.merchantUrl, INTERNAL_API_TOKEN: deployment.token || undefined });
}

async function newMerchant(deployment: Deployment, sandbox: boolean): Promise<Credentials> {
  const created = await createServiceClient(MerchantService, deployment.merchantUrl, deployment.token ? { token: deployment.token } : {}).createMerchant({ name: "Cache Shop", sandbox });
  return credentialsOf(created);
}

let sequence = 0;
async function deposit(deployment: Deployment, merchant: Credentials, bankCode: string): Promise<{ status: number; code?: string }> {
  const res = await signedFetch(deployment.gatewayUrl, merchant, "POST", "/v1/deposit", {
    processId: `cache-e2e-${++sequence}`,
    amount: 150_000,
    bankCode,
    customer: testCustomer,
  });
  return { status: res.status, code: (res.json.error as { code?: string } | undefined)?.code };
}

/** When the catalog wrote the change (its `updated_at`, by the service's clock). */
async function changedAt(deployment: Deployment, bankCode: string): Promise<number> {
  const row = await deployment.catalogDb()("banks").where({ code: bankCode }).first<{ updated_at: number; active: number | boolean }>("updated_at", "active");
  if (row.active) throw new Error(`bank ${bankCode} is still active`);
  return Number(row.updated_at);
}

async function disabledWithinOneSecond(t: ExecutionContext, deployment: Deployment, sandbox: boolean): Promise<void> {
  const merchant = await newMerchant(deployment, sandbox);
  const akbank = (await offered(deployment.gatewayUrl, merchant)).find((b) => b.code === AKBANK_CODE);
  t.truthy(akbank, "Akbank is offered");
  t.is((await deposit(deployment, merchant, akbank!._id)).status, 201, "and takes deposits");
  // Both answers are now cached on the way: the bank list is served without asking the catalog.
  const loads = deployment.gatewayCatalogLoads();
  await offered(deployment.gatewayUrl, merchant);
  t.is(deployment.gatewayCatalogLoads(), loads, "a repeated bank list makes no call to the catalog");

  // The gateway is watched the whole time the CLI runs.
  // Typed boolean, not the literal: the loop reads it after the CLI run sets it false.
  let watching = true as boolean;
  const gone = (async () => {
    while (watching) {
      if (!(await offered(deployment.gatewayUrl, merchant)).some((b) => b._id === akbank!._id)) return Date.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return 0;
  })();
  const updated = await cli(deployment, ["bank", "update", akbank!._id, "--active", "false"]);
  t.is(updated.code, 0, updated.stderr);
  const changed = await changedAt(deployment, AKBANK_CODE);
  const refused = await eventuallyAt(async () => {
    const res = await deposit(deployment, merchant, akbank!._id);
    return res.status === 400 && res.code === "VALIDATION_ERROR";
  }, "the deposit through the disabled bank refused", 5_000, 20);
  const goneAt = await Promise.race([gone, new Promise<number>((resolve) => setTimeout(() => resolve(0), 5_000))]);
  watching = false;
  t.not(goneAt, 0, "the bank left the list");
  t.log(`no longer offered ${goneAt - changed} ms, deposit refused ${refused - changed} ms after the change was written`);
  t.true(goneAt - changed <= BOUND_MS, `no longer offered within ${BOUND_MS} ms (took ${goneAt - changed} ms)`);
  t.true(refused - changed <= BOUND_MS, `deposit refused within ${BOUND_MS} ms (took ${refused - changed} ms; measured after the CLI exited)`);

  // Back on (by RPC: one CLI start is proof enough), and the list follows the same way.
  await createServiceClient(BankCatalogService, deployment.catalogUrl, deployment.token ? { token: deployment.token } : {}).updateBank({ bankId: akbank!._id, active: true });
  await eventuallyAt(async () => (await offered(deployment.gatewayUrl, merchant)).some((b) => b._id === akbank!._id), "Akbank offered again", BOUND_MS, 20);
}

test.serial("split mode (MySQL, JetStream): a bank disabled with the CLI stops being offered and taking deposits within 1 s", async (t) => {
  await disabledWithinOneSecond(t, split, false);
});

test.serial("all-in-one (SQLite, in-process bus): a bank disabled with the CLI stops being offered and taking deposits within 1 s", async (t) => {
  await disabledWithinOneSecond(t, local, true);
});

test.serial("a gateway that hears no event still stops offering a disabled bank once CATALOG_CACHE_TTL (1 s) has passed", async (t) => {
  const merchant = await newMerchant(split, false);
  const garanti = (await offered(deafGateway.url, merchant)).find((b) => b.code === GARANTI_CODE)!;
  // The kept list was read before this moment, so it expires before this moment + 1 s.
  const keptBy = Date.now();
  t.truthy(garanti);
  const catalog = createServiceClient(BankCatalogService, deployments!.split.url("bank-catalog"), { token });
  await catalog.updateBank({ bankId: garanti._id, active: false });
  // The catalog itself, and the gateway that hears events, know at once.
  await eventuallyAt(async () => !(await offered(gateway.url, merchant)).some((b) => b._id === garanti._id), "the listening gateway to drop Garanti", BOUND_MS, 20);
  // The deaf one serves its kept list until the TTL: no answer to a request sent after keptBy + 1 s is stale.
  const probes: Array<{ sentAt: number; stale: boolean }> = [];
  await eventuallyAt(async () => {
    const sentAt = Date.now();
    const stale = (await offered(deafGateway.url, merchant)).some((b) => b._id === garanti._id);
    probes.push({ sentAt, stale });
    return !stale;
  }, "the TTL to expire", 3_000, 20);
  t.true(probes[0]!.stale, "after the change the deaf gateway first served its kept list");
  const lastStale = probes.filter((p) => p.stale).at(-1)!;
  t.log(`last stale answer to a request sent ${lastStale.sentAt - keptBy} ms after the list was kept`);
  t.true(lastStale.sentAt <= keptBy + 1_000, "nothing older than CATALOG_CACHE_TTL was served");
  await catalog.updateBank({ bankId: garanti._id, active: true });
});
