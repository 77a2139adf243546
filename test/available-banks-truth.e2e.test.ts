import test, { type ExecutionContext } from "ava";
import type { AllInOne } from "@payments/all-in-one";
import { BankCatalogService, type Bank } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { addTestReceivingAccounts, createServiceClient, credentialsOf, eventuallyAt, testCustomer } from "@payments/testing";
import { signedFetch, type BankEntry, type Credentials } from "./helpers.js";
import { offered, startCatalogDeployments, type CatalogDeployments } from "./catalog-deployments.js";

// "The bank list is the truth" (decisions.md): GET /v1/available-banks lists a bank, or FAST,
// exactly when a deposit there would be accepted now. Against the real services, once split
// (MySQL, JetStream, a gateway on its own) and once all-in-one (SQLite, in-process bus), for a
// sandbox and a live merchant: every listed entry takes a deposit through the signed gateway,
// every bank left out refuses one, and when the last account of a listed bank is deactivated
// the bank leaves the list within 1 s (the gateway's CATALOG_CACHE_TTL is 10 minutes here, so
// only the CatalogChanged event can explain it) and a deposit there is BANK_UNAVAILABLE. A
// gateway that hears no event shows the fallback bound, CATALOG_CACHE_TTL (1 s).

const token = "available-banks-truth-token";
const BOUND_MS = 1_000;
const CODES = { halk: "0012", vakif: "0015", teb: "0032", yapiKredi: "0067" } as const;

interface Deployment {
  name: string;
  gatewayUrl: string;
  catalog: ReturnType<typeof createServiceClient<typeof BankCatalogService>>;
  merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;
}

let deployments: CatalogDeployments | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>>;
/** Hears no events (no NATS_URL, no bus): only its CATALOG_CACHE_TTL of 1 s bounds its lists. */
let deafGateway: Awaited<ReturnType<typeof startGateway>>;
let allInOne: AllInOne;
let split: Deployment;
let local: Deployment;

/** A valid TEB (00032) IBAN, unlike any the sandbox plan (numbers starting with 5) or its live twins (7) use. */
const TEB_LIVE_IBAN = "TR880003203333333333333331";

/**
 * The catalog the tests walk: the sandbox seed (12 accounts at 8 banks) and a live twin of
 * each; then Halk and Vakıflar lose their live twins (sandbox accounts only), and TEB, which
 * the seed leaves without an account, gets a live one (a live account only).
 */
async function prepareCatalog(catalog: Deployment["catalog"]): Promise<void> {
  await addTestReceivingAccounts(catalog);
  const banks = (await catalog.listBanks({})).banks;
  const byCode = (code: string) => banks.find((b) => b.code === code)!;
  for (const code of [CODES.halk, CODES.vakif]) {
    const { accounts } = await catalog.listReceivingAccounts({ bankId: byCode(code).id, sandbox: false });
    for (const account of accounts) await catalog.updateReceivingAccount({ accountId: account.id, active: false });
  }
  await catalog.createReceivingAccount({ bankId: byCode(CODES.teb).id, accountName: "Ödeme Hizmetleri A.Ş.", iban: TEB_LIVE_IBAN, fastEnabled: false, sandbox: false });
}

test.before(async () => {
  deployments = await startCatalogDeployments({ token, masterKeys: ["d".repeat(64), "e".repeat(64)] });
  ({ gateway, deafGateway, allInOne } = deployments);
  const splitServices = deployments.split;
  split = {
    name: "split",
    gatewayUrl: gateway.url,
    catalog: createServiceClient(BankCatalogService, splitServices.url("bank-catalog"), { token }),
    merchants: createServiceClient(MerchantService, splitServices.url("merchant"), { token }),
  };
  await prepareCatalog(split.catalog);

  local = {
    name: "all-in-one",
    gatewayUrl: allInOne.gateway.url,
    catalog: createServiceClient(BankCatalogService, allInOne.services.server.url),
    merchants: createServiceClient(MerchantService, allInOne.services.server.url),
  };
  await prepareCatalog(local.catalog);
});

test.after.always(async () => {
  await deployments?.stop();
});

async function newMerchant(deployment: Deployment, sandbox: boolean): Promise<Credentials> {
  const created = await deployment.merchants.createMerchant({ name: `Truth Shop (${sandbox ? "sandbox" : "live"})`, sandbox });
  return credentialsOf(created);
}

let sequence = 0;
async function deposit(deployment: Deployment, merchant: Credentials, bankCode: string, amount = 150_000) {
  const res = await signedFetch(deployment.gatewayUrl, merchant, "POST", "/v1/deposit", {
    processId: `truth-${deployment.name}-${++sequence}`,
    amount,
    bankCode,
    customer: testCustomer,
  });
  const data = res.json.data as { assignedAccount?: { bankName: string; iban: string } } | undefined;
  return { status: res.status, code: (res.json.error as { code?: string } | undefined)?.code, assignedAccount: data?.assignedAccount };
}

/** An amount inside the entry's limits. */
const inside = (entry: BankEntry) => Math.min(Math.max(150_000, entry.minAmount), entry.maxAmount);

/** The EFT codes of the listed banks, and FAST when listed. */
const codesOf = (entries: BankEntry[]) => entries.map((e) => e.code).sort();

/**
 * Every listed entry takes a deposit inside its limits, with an account of its bank (any bank
 * for FAST); every bank of the catalog left out refuses one. Returns the list.
 */
async function listIsTheTruth(t: ExecutionContext, deployment: Deployment, merchant: Credentials, what: string): Promise<BankEntry[]> {
  const entries = await offered(deployment.gatewayUrl, merchant);
  for (const entry of entries) {
    const made = await deposit(deployment, merchant, entry._id, inside(entry));
    t.is(made.status, 201, `${what}: ${entry.name} is listed, so a deposit there is accepted (got ${made.status} ${made.code ?? ""})`);
    t.truthy(made.assignedAccount, `${what}: ${entry.name}: the customer is told where to pay`);
    if (entry._id !== "FAST") t.is(made.assignedAccount?.bankName, entry.name, `${what}: a ${entry.name} deposit gets a ${entry.name} account`);
  }
  const listed = new Set(entries.map((e) => e._id));
  const all: Bank[] = (await deployment.catalog.listBanks({})).banks;
  for (const bank of all.filter((b) => !listed.has(b.id))) {
    const refused = await deposit(deployment, merchant, bank.id, 150_000);
    t.is(refused.status, 400, `${what}: ${bank.name} is not listed, so a deposit there is refused`);
    t.is(refused.code, "BANK_UNAVAILABLE", `${what}: ${bank.name} (active, not disabled) has no account of the merchant's kind`);
  }
  return entries;
}

/** Deactivates every active account of `kind` at the bank; returns when the change was sent. */
async function deactivateAccounts(deployment: Deployment, bankId: string, sandbox: boolean): Promise<{ sentAt: number; ids: string[] }> {
  const { accounts } = await deployment.catalog.listReceivingAccounts({ bankId, sandbox });
  const active = accounts.filter((a) => a.active);
  const sentAt = Date.now();
  for (const account of active) await deployment.catalog.updateReceivingAccount({ accountId: account.id, active: false });
  return { sentAt, ids: active.map((a) => a.id) };
}

async function walkAndRemove(t: ExecutionContext, deployment: Deployment): Promise<void> {
  const sandbox = await newMerchant(deployment, true);
  const live = await newMerchant(deployment, false);

  const sandboxList = await listIsTheTruth(t, deployment, sandbox, "sandbox merchant");
  const liveList = await listIsTheTruth(t, deployment, live, "live merchant");
  // The seed's 8 banks for sandbox; for live, their twins less Halk and Vakıflar, plus TEB.
  t.deepEqual(codesOf(sandboxList), ["0010", "0012", "0015", "0046", "0062", "0064", "0067", "0111", "FAST"]);
  t.deepEqual(codesOf(liveList), ["0010", "0032", "0046", "0062", "0064", "0067", "0111", "FAST"]);
  t.is(sandboxList.length, 9, "not the 20 banks of the catalog: only where a sandbox deposit has an account");

  // The last (only) live account of TEB goes: TEB leaves the live merchant's list, through the event.
  const teb = liveList.find((b) => b.code === CODES.teb)!;
  const removed = await deactivateAccounts(deployment, teb._id, false);
  t.is(removed.ids.length, 1);
  const gone = await eventuallyAt(async () => !(await offered(deployment.gatewayUrl, live)).some((b) => b._id === teb._id), "TEB to leave the live list", 5_000, 20);
  const refused = await eventuallyAt(async () => (await deposit(deployment, live, teb._id)).code === "BANK_UNAVAILABLE", "a deposit at TEB to be BANK_UNAVAILABLE", 5_000, 20);
  t.log(`${deployment.name}: TEB left the list ${gone - removed.sentAt} ms and refused deposits ${refused - removed.sentAt} ms after its last account was deactivated`);
  t.true(gone - removed.sentAt <= BOUND_MS, `TEB left the list within ${BOUND_MS} ms (took ${gone - removed.sentAt} ms)`);
  t.true(refused - removed.sentAt <= BOUND_MS, `a deposit at TEB is BANK_UNAVAILABLE within ${BOUND_MS} ms`);

  // Yapı Kredi's one sandbox account goes: it leaves the sandbox list and stays on the live one (its live twin).
  const yapiKredi = sandboxList.find((b) => b.code === CODES.yapiKredi)!;
  const sandboxRemoved = await deactivateAccounts(deployment, yapiKredi._id, true);
  t.is(sandboxRemoved.ids.length, 1);
  const sandboxGone = await eventuallyAt(async () => !(await offered(deployment.gatewayUrl, sandbox)).some((b) => b._id === yapiKredi._id), "Yapı Kredi to leave the sandbox list", 5_000, 20);
  t.true(sandboxGone - sandboxRemoved.sentAt <= BOUND_MS, `Yapı Kredi left the sandbox list within ${BOUND_MS} ms (took ${sandboxGone - sandboxRemoved.sentAt} ms)`);
  await eventuallyAt(async () => (await deposit(deployment, sandbox, yapiKredi._id)).code === "BANK_UNAVAILABLE", "a sandbox deposit at Yapı Kredi to be BANK_UNAVAILABLE", BOUND_MS, 20);
  t.true((await offered(deployment.gatewayUrl, live)).some((b) => b._id === yapiKredi._id), "the live merchant still has Yapı Kredi");

  // After both changes the lists are still exactly the truth.
  t.deepEqual(codesOf(await listIsTheTruth(t, deployment, sandbox, "sandbox merchant, after")), ["0010", "0012", "0015", "0046", "0062", "0064", "0111", "FAST"]);
  t.deepEqual(codesOf(await listIsTheTruth(t, deployment, live, "live merchant, after")), ["0010", "0046", "0062", "0064", "0067", "0111", "FAST"]);

  // Active again: both come back.
  for (const accountId of [...removed.ids, ...sandboxRemoved.ids]) await deployment.catalog.updateReceivingAccount({ accountId, active: true });
  await eventuallyAt(async () => (await offered(deployment.gatewayUrl, live)).some((b) => b._id === teb._id), "TEB back on the live list", BOUND_MS, 20);
  await eventuallyAt(async () => (await offered(deployment.gatewayUrl, sandbox)).some((b) => b._id === yapiKredi._id), "Yapı Kredi back on the sandbox list", BOUND_MS, 20);
}

test.serial("split mode (MySQL, JetStream): every bank listed to a sandbox or a live merchant takes its deposit, every other is refused, and a bank whose last account goes leaves the list within 1 s", async (t) => {
  await walkAndRemove(t, split);
});

test.serial("all-in-one (SQLite, in-process bus): every bank listed to a sandbox or a live merchant takes its deposit, every other is refused, and a bank whose last account goes leaves the list within 1 s", async (t) => {
  await walkAndRemove(t, local);
});

test.serial("a gateway that hears no event drops a bank whose last account went once CATALOG_CACHE_TTL (1 s) has passed", async (t) => {
  const live = await newMerchant(split, false);
  const teb = (await offered(deafGateway.url, live)).find((b) => b.code === CODES.teb);
  // The kept list was read before this moment, so it expires before this moment + 1 s.
  const keptBy = Date.now();
  t.truthy(teb, "TEB is listed to the live merchant");
  const removed = await deactivateAccounts(split, teb!._id, false);
  try {
    const probes: Array<{ sentAt: number; stale: boolean }> = [];
    await eventuallyAt(async () => {
      const sentAt = Date.now();
      const stale = (await offered(deafGateway.url, live)).some((b) => b._id === teb!._id);
      probes.push({ sentAt, stale });
      return !stale;
    }, "the TTL to expire", 3_000, 20);
    t.true(probes[0]!.stale, "after the change the deaf gateway first served its kept list");
    const lastStale = probes.filter((p) => p.stale).at(-1)!;
    t.log(`last stale answer to a request sent ${lastStale.sentAt - keptBy} ms after the list was kept`);
    t.true(lastStale.sentAt <= keptBy + 1_000, "nothing older than CATALOG_CACHE_TTL was served");
  } finally {
    for (const accountId of removed.ids) await split.catalog.updateReceivingAccount({ accountId, active: true });
  }
});
