import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { errorInfo, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { bankCatalogModule } from "../src/index.js";
import { SEED_ACCOUNTS, SEED_BANKS, seedBankId } from "../src/seed.js";

// The same service on an embedded SQLite file (no DATABASE_URL), as `pnpm start` runs it.
const dataDir = await mkdtemp(join(tmpdir(), "bank-catalog-"));
const clock = manualClock();
let running: RunningServices | undefined;
let client: ReturnType<typeof createServiceClient<typeof BankCatalogService>>;

test.before(async () => {
  running = await startServices([bankCatalogModule], {
    mode: "split",
    clock,
    env: { DATA_DIR: dataDir, GRPC_PORT: "0", LOG_LEVEL: "error", ...TEST_OPERATOR_ENV },
  });
  client = createServiceClient(BankCatalogService, running.server.url, { clock });
});

test.after.always(async () => {
  await running?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

test.serial("on SQLite a fresh database is seeded with banks only; the sandbox accounts come when asked for, and ListAvailableBanks gives the defaults and FAST", async (t) => {
  const { banks } = await client.listBanks({});
  t.deepEqual(banks.map((b) => b.id).sort(), SEED_BANKS.map((b) => b.id).sort());
  t.deepEqual((await client.listReceivingAccounts({})).accounts, []);
  t.is((await client.listAvailableBanks({ merchantId: "mch_sqlite_a", sandbox: true })).fast, undefined, "no FAST account, no FAST");
  t.is((await client.seedSandboxAccounts({})).added.length, SEED_ACCOUNTS.length);
  const { accounts } = await client.listReceivingAccounts({});
  t.is(accounts.length, SEED_ACCOUNTS.length);
  t.true(accounts.every((a) => a.sandbox));
  t.is((await client.listAvailableBanks({ merchantId: "mch_sqlite_a", sandbox: false })).fast, undefined, "sandbox FAST accounts do not offer FAST to live merchants");

  const available = await client.listAvailableBanks({ merchantId: "mch_sqlite_a", sandbox: true });
  // Only the banks the sandbox seed gave an account: a deposit at any other would be refused.
  t.deepEqual(available.banks.map((b) => b.id).sort(), [...new Set(SEED_ACCOUNTS.map((a) => a.bankId))].sort());
  t.true(available.banks.every((b) => b.minAmount === 1000n && b.maxAmount === 5_000_000n));
  t.like(available.fast, { minAmount: 100n, maxAmount: 10_000_000n });
});

test.serial("on SQLite a merchant's override changes only that merchant's limits and can hide FAST", async (t) => {
  const akbank = seedBankId("0046");
  await client.setMerchantLimit({ limit: { merchantId: "mch_sqlite_b", bankId: akbank, minAmount: 2000n, maxAmount: 3000n } });
  await client.setMerchantLimit({ limit: { merchantId: "mch_sqlite_b", bankId: "FAST", enabled: false } });
  // Setting again replaces the override rather than adding a second one.
  await client.setMerchantLimit({ limit: { merchantId: "mch_sqlite_b", bankId: akbank, minAmount: 2500n } });

  const mine = await client.listAvailableBanks({ merchantId: "mch_sqlite_b", sandbox: true });
  t.like(
    mine.banks.find((b) => b.id === akbank),
    { minAmount: 2500n, maxAmount: 5_000_000n },
  );
  t.is(mine.fast, undefined);
  t.is((await client.listMerchantLimits({ merchantId: "mch_sqlite_b" })).limits.length, 2);

  const other = await client.listAvailableBanks({ merchantId: "mch_sqlite_c", sandbox: true });
  t.like(
    other.banks.find((b) => b.id === akbank),
    { minAmount: 1000n, maxAmount: 5_000_000n },
  );
  t.truthy(other.fast);
});

test.serial("on SQLite GetDepositTerms gives a bank's limits and accounts, FAST's accounts, and the widest limits without a bank", async (t) => {
  const akbank = seedBankId("0046");
  const ids = (accounts: ReadonlyArray<{ id: string }>) => accounts.map((a) => a.id).sort();

  const bank = await client.getDepositTerms({ merchantId: "mch_sqlite_e", bankId: akbank, sandbox: true });
  t.like(bank, { bankId: akbank, bankName: "Akbank", minAmount: 1000n, maxAmount: 5_000_000n });
  t.deepEqual(
    bank.accounts.map((a) => a.id),
    ids(SEED_ACCOUNTS.filter((a) => a.bankId === akbank)),
  );

  const fast = await client.getDepositTerms({ merchantId: "mch_sqlite_e", bankId: "FAST", sandbox: true });
  t.like(fast, { bankId: "FAST", bankName: "FAST", minAmount: 100n, maxAmount: 10_000_000n });
  t.deepEqual(
    fast.accounts.map((a) => a.id),
    ids(SEED_ACCOUNTS.filter((a) => a.fastEnabled)),
  );

  const any = await client.getDepositTerms({ merchantId: "mch_sqlite_e", bankId: "", sandbox: true });
  t.like(any, { bankId: "", bankName: "", minAmount: 100n, maxAmount: 10_000_000n });
  t.deepEqual(
    any.accounts.map((a) => a.id),
    ids(SEED_ACCOUNTS),
  );

  // mch_sqlite_b has FAST disabled.
  t.like(errorInfo(await t.throwsAsync(client.getDepositTerms({ merchantId: "mch_sqlite_b", bankId: "FAST", sandbox: true }))), {
    code: Code.FailedPrecondition,
    reason: "BANK_NOT_AVAILABLE",
    field: "bank_id",
  });
});

test.serial("on SQLite banks and receiving accounts are created, duplicates refused, and FAST follows the FAST accounts", async (t) => {
  const { bank } = await client.createBank({ name: "Çağ Bank", code: "9903", logoUrl: "/assets/banks/9903.svg", minAmount: 100n, maxAmount: 200n });
  t.like(bank, { name: "Çağ Bank", active: true });
  t.like(errorInfo(await t.throwsAsync(client.createBank({ name: "Again", code: "9903", minAmount: 1n, maxAmount: 2n }))), {
    code: Code.AlreadyExists,
    reason: "BANK_CODE_TAKEN",
  });
  t.false((await client.listAvailableBanks({ merchantId: "mch_sqlite_d", sandbox: true })).banks.some((b) => b.id === bank!.id), "no account yet: not available");

  const { account } = await client.createReceivingAccount({ bankId: bank!.id, accountName: "Sandbox", iban: "tr71 0990 3000 0000 0000 0000 99", fastEnabled: false, sandbox: true });
  t.is(account?.iban, "TR710990300000000000000099");
  const names = (await client.listAvailableBanks({ merchantId: "mch_sqlite_d", sandbox: true })).banks.map((b) => b.name);
  // Turkish order: Ç right after C, so between Akbank and QNB Bank (byte order would put it after every ASCII name).
  t.true(names.indexOf("Akbank") >= 0 && names.indexOf("Akbank") < names.indexOf("Çağ Bank"));
  t.true(names.indexOf("Çağ Bank") < names.indexOf("QNB Bank"));
  t.like(errorInfo(await t.throwsAsync(client.createReceivingAccount({ bankId: bank!.id, accountName: "Dup", iban: account!.iban, fastEnabled: false }))), {
    code: Code.AlreadyExists,
    reason: "IBAN_TAKEN",
  });

  const fastAccounts = (await client.listReceivingAccounts({})).accounts.filter((a) => a.fastEnabled);
  for (const a of fastAccounts) await client.updateReceivingAccount({ accountId: a.id, fastEnabled: false });
  t.is((await client.listAvailableBanks({ merchantId: "mch_sqlite_d", sandbox: true })).fast, undefined);
  await client.updateReceivingAccount({ accountId: account!.id, fastEnabled: true });
  t.truthy((await client.listAvailableBanks({ merchantId: "mch_sqlite_d", sandbox: true })).fast);

  const invalid = errorInfo(await t.throwsAsync(client.listAvailableBanks({ merchantId: "", sandbox: true })));
  t.like(invalid, { reason: "VALIDATION_ERROR", field: "merchant_id" });
});
