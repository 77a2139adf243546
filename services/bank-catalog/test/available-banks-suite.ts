import type { ExecutionContext, TestFn } from "ava";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { errorInfo, type Env, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { bankIban, createServiceClient, manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { bankCatalogModule } from "../src/index.js";
import { FAST_ID } from "../src/limits.js";
import { SEED_ACCOUNTS, SEED_BANKS, seedBankId } from "../src/seed.js";

export interface Backend {
  /** The environment of one split-mode bank-catalog service (database, bus). */
  env(): Promise<Env>;
  cleanUp(): Promise<void>;
}

const AKBANK = seedBankId("0046");
const GARANTI = seedBankId("0062");
/** Türk Ekonomi Bankası: no sandbox account in the seed's plan. */
const TEB = seedBankId("0032");
const turkish = new Intl.Collator("tr");

/**
 * "The bank list is the truth", over a real server, registered once per backend (MySQL,
 * SQLite): ListAvailableBanks shows a bank (or FAST) exactly when GetDepositTerms gives a
 * deposit through it an account of the merchant's kind, which is what the deposit service
 * needs to accept it. Every test checks that agreement for every bank, not only the one it
 * changes.
 */
export function availableBanksSuite(test: TestFn, backend: Backend): void {
  let running: RunningServices | undefined;
  const clock = manualClock();
  const client = () => {
    if (!running) throw new Error("the service did not start");
    return createServiceClient(BankCatalogService, running.server.url, { clock });
  };
  let sequence = 0;
  const merchant = () => `mch_truth_${++sequence}`;

  test.before(async () => {
    // CATALOG_CACHE_TTL is irrelevant here: every change goes through this replica, which
    // drops its snapshot at once.
    running = await startServices([bankCatalogModule], { mode: "split", env: { LOG_LEVEL: "warn", ...(await backend.env()), GRPC_PORT: "0", ...TEST_OPERATOR_ENV }, clock });
    await client().seedSandboxAccounts({});
  });

  test.after.always(async () => {
    await running?.stop();
    await backend.cleanUp();
  });

  /** The ids a merchant is shown, banks in their order, then FAST when offered. */
  async function shown(merchantId: string, sandbox: boolean): Promise<string[]> {
    const res = await client().listAvailableBanks({ merchantId, sandbox });
    return [...res.banks.map((b) => b.id), ...(res.fast ? [FAST_ID] : [])];
  }

  /** What a deposit through `bankId` meets: refused as not available, refused for want of an account, or accepted. */
  async function depositThrough(merchantId: string, sandbox: boolean, bankId: string): Promise<"not available" | "no account" | "accepted"> {
    try {
      const terms = await client().getDepositTerms({ merchantId, bankId, sandbox });
      // The deposit service's rule: no account of the merchant's kind is BANK_UNAVAILABLE.
      return terms.accounts.length > 0 ? "accepted" : "no account";
    } catch (err) {
      if (errorInfo(err).reason === "BANK_NOT_AVAILABLE") return "not available";
      throw err;
    }
  }

  /** Every bank of the catalog, and FAST: listed exactly when a deposit through it is accepted, with the listed limits. */
  async function listAgreesWithDeposits(t: ExecutionContext, merchantId: string, sandbox: boolean): Promise<void> {
    const list = await client().listAvailableBanks({ merchantId, sandbox });
    const candidates = [...(await client().listBanks({})).banks.map((b) => b.id), FAST_ID];
    for (const bankId of candidates) {
      const entry = bankId === FAST_ID ? list.fast : list.banks.find((b) => b.id === bankId);
      const outcome = await depositThrough(merchantId, sandbox, bankId);
      t.is(outcome === "accepted", entry !== undefined, `${bankId} for a ${sandbox ? "sandbox" : "live"} merchant: listed ${entry !== undefined}, deposit ${outcome}`);
      if (entry) t.like(await client().getDepositTerms({ merchantId, bankId, sandbox }), { minAmount: entry.minAmount, maxAmount: entry.maxAmount });
    }
    const anyBank = await depositThrough(merchantId, sandbox, "");
    t.is(anyBank === "accepted", candidates.length > 0 && (list.banks.length > 0 || list.fast !== undefined), "without a bank: accepted exactly when something is listed");
  }

  test.serial("a bank with no receiving account of the merchant's kind is not listed: the sandbox seed lists its banks and FAST to sandbox merchants, nothing to live ones", async (t) => {
    const withAccounts = new Set(SEED_ACCOUNTS.map((a) => a.bankId));
    const expected = SEED_BANKS.filter((b) => withAccounts.has(b.id))
      .sort((a, b) => turkish.compare(a.name, b.name))
      .map((b) => b.id);
    t.true(expected.length < SEED_BANKS.length, "the seed leaves some banks without an account");
    t.deepEqual(await shown(merchant(), true), [...expected, FAST_ID]);
    t.deepEqual(await shown(merchant(), false), [], "no live account: no bank and no FAST for a live merchant");
    // A live merchant without a bank is refused for want of an account, not told it may use nothing.
    t.is(await depositThrough(merchant(), false, ""), "no account");
    t.is(await depositThrough(merchant(), true, TEB), "no account", "a bank without an account has terms, but no account: BANK_UNAVAILABLE at the deposit service");
    await listAgreesWithDeposits(t, merchant(), true);
    await listAgreesWithDeposits(t, merchant(), false);
  });

  test.serial("a bank whose accounts are all inactive is not listed; one active account brings it back", async (t) => {
    const mine = merchant();
    const akbankAccounts = SEED_ACCOUNTS.filter((a) => a.bankId === AKBANK);
    t.is(akbankAccounts.length, 2);
    const [first, second] = akbankAccounts;
    try {
      await client().updateReceivingAccount({ accountId: first!.id, active: false });
      t.true((await shown(mine, true)).includes(AKBANK), "one active account left: still listed");
      await client().updateReceivingAccount({ accountId: second!.id, active: false });
      t.false((await shown(mine, true)).includes(AKBANK), "the last account deactivated: no longer listed");
      t.is(await depositThrough(mine, true, AKBANK), "no account");
      await listAgreesWithDeposits(t, mine, true);
      await client().updateReceivingAccount({ accountId: second!.id, active: true });
      t.true((await shown(mine, true)).includes(AKBANK), "an account active again: listed again");
    } finally {
      for (const account of akbankAccounts) await client().updateReceivingAccount({ accountId: account.id, active: true });
    }
  });

  test.serial("a bank with accounts of the other kind only is listed to that kind only", async (t) => {
    const live = merchant();
    const sandbox = merchant();
    const { account } = await client().createReceivingAccount({ bankId: TEB, accountName: "Ödeme A.Ş.", iban: bankIban("0032", 1, "7"), fastEnabled: false, sandbox: false });
    try {
      t.deepEqual(await shown(live, false), [TEB], "a live merchant sees the one bank with a live account, and no FAST (that account takes none)");
      t.false((await shown(sandbox, true)).includes(TEB), "a sandbox merchant does not see a bank with only a live account");
      t.is(await depositThrough(sandbox, true, TEB), "no account");
      t.false((await shown(live, false)).includes(AKBANK), "nor a live merchant a bank with only sandbox accounts");
      await listAgreesWithDeposits(t, live, false);
      await listAgreesWithDeposits(t, sandbox, true);
    } finally {
      await client().updateReceivingAccount({ accountId: account!.id, active: false });
    }
    t.deepEqual(await shown(live, false), [], "the live account deactivated: nothing for live merchants again");
  });

  test.serial("FAST is listed only with an active FAST-enabled account of the merchant's kind; without one a FAST deposit has no account", async (t) => {
    const live = merchant();
    const { account } = await client().createReceivingAccount({ bankId: TEB, accountName: "Ödeme A.Ş.", iban: bankIban("0032", 2, "7"), fastEnabled: false, sandbox: false });
    const sandboxFast = SEED_ACCOUNTS.filter((a) => a.fastEnabled);
    try {
      t.false((await shown(live, false)).includes(FAST_ID), "sandbox FAST accounts do not offer FAST to live merchants");
      t.is(await depositThrough(live, false, FAST_ID), "no account");
      await client().updateReceivingAccount({ accountId: account!.id, fastEnabled: true });
      t.deepEqual(await shown(live, false), [TEB, FAST_ID], "a live FAST-enabled account offers FAST to live merchants");
      await listAgreesWithDeposits(t, live, false);

      for (const a of sandboxFast) await client().updateReceivingAccount({ accountId: a.id, fastEnabled: false });
      const sandbox = merchant();
      t.false((await shown(sandbox, true)).includes(FAST_ID), "no sandbox FAST account: no FAST for sandbox merchants");
      t.true((await shown(sandbox, true)).includes(AKBANK), "the banks stay listed: their accounts still take their own deposits");
      t.is(await depositThrough(sandbox, true, FAST_ID), "no account");
      t.true((await shown(live, false)).includes(FAST_ID), "live merchants keep FAST");
      await listAgreesWithDeposits(t, sandbox, true);
    } finally {
      for (const a of sandboxFast) await client().updateReceivingAccount({ accountId: a.id, fastEnabled: true });
      await client().updateReceivingAccount({ accountId: account!.id, active: false });
    }
    t.true((await shown(merchant(), true)).includes(FAST_ID));
  });

  test.serial("an inactive bank is not listed although it has active accounts", async (t) => {
    const mine = merchant();
    await client().updateBank({ bankId: GARANTI, active: false });
    try {
      t.false((await shown(mine, true)).includes(GARANTI));
      t.is(await depositThrough(mine, true, GARANTI), "not available");
      await listAgreesWithDeposits(t, mine, true);
    } finally {
      await client().updateBank({ bankId: GARANTI, active: true });
    }
    t.true((await shown(mine, true)).includes(GARANTI));
  });

  test.serial("a bank or FAST the merchant's override disables is not listed to that merchant although it has accounts; other merchants still see it", async (t) => {
    const mine = merchant();
    await client().setMerchantLimit({ limit: { merchantId: mine, bankId: GARANTI, enabled: false } });
    await client().setMerchantLimit({ limit: { merchantId: mine, bankId: FAST_ID, enabled: false } });
    await client().setMerchantLimit({ limit: { merchantId: mine, bankId: AKBANK, minAmount: 2_500n, maxAmount: 9_000n } });
    const list = await client().listAvailableBanks({ merchantId: mine, sandbox: true });
    t.false(list.banks.some((b) => b.id === GARANTI));
    t.is(list.fast, undefined);
    t.like(
      list.banks.find((b) => b.id === AKBANK),
      { minAmount: 2_500n, maxAmount: 9_000n },
      "a bank's listed limits are the merchant's",
    );
    t.is(await depositThrough(mine, true, GARANTI), "not available");
    await listAgreesWithDeposits(t, mine, true);
    const other = merchant();
    t.true((await shown(other, true)).includes(GARANTI));
    t.true((await shown(other, true)).includes(FAST_ID));
  });
}
