import test from "ava";
import { Code } from "@connectrpc/connect";
import { isValidIBAN } from "ibantools";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock, rejectionOf, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";
import { bankCatalogModule } from "../src/index.js";
import { SEED_ACCOUNTS, SEED_BANKS, seedBankId } from "../src/seed.js";

// One server over MySQL and JetStream for the file. The tests change shared catalog state
// (FAST accounts, new banks), so they run one after another and undo what others would see.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let running: RunningServices | undefined;
let client: ReturnType<typeof createServiceClient<typeof BankCatalogService>>;

const AKBANK = seedBankId("0046");
const GARANTI = seedBankId("0062");
const ZIRAAT = seedBankId("0010");
/** A valid Akbank (00046) IBAN outside the sandbox plan's numbers (which start with 5). */
const LIVE_AKBANK_IBAN = "TR940004607000000000000001";

test.before(async () => {
  running = await startServices([bankCatalogModule], {
    mode: "split",
    clock,
    env: { DATABASE_URL: database.url, GRPC_PORT: "0", LOG_LEVEL: "warn", ...nats, ...TEST_OPERATOR_ENV },
  });
  client = createServiceClient(BankCatalogService, running.server.url, { clock });
});

test.after.always(async () => {
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

function merchant(): string {
  return `mch_${Math.random().toString(36).slice(2)}`;
}

test.serial("a fresh MySQL database is seeded with the Turkish banks under deterministic ids and valid sandbox IBANs", async (t) => {
  const { banks } = await client.listBanks({});
  t.is(banks.length, SEED_BANKS.length);
  for (const seeded of SEED_BANKS) {
    const bank = banks.find((b) => b.code === seeded.code);
    t.is(bank?.id, seeded.id);
    t.is(bank?.name, seeded.name);
    t.is(bank?.logoUrl, `/assets/banks/${seeded.code}.svg`);
    t.is(bank?.minAmount, 1000n);
    t.is(bank?.maxAmount, 5_000_000n);
  }
  const fast = await client.getFastSettings({});
  t.like(fast.settings, { enabled: true, minAmount: 100n, maxAmount: 10_000_000n });
  t.deepEqual((await client.listReceivingAccounts({})).accounts, [], "a split install starts with no receiving account: no made-up IBAN is ever handed out unasked");
});

test.serial("SeedSandboxAccounts adds the made-up accounts once, marked sandbox; a second call adds nothing", async (t) => {
  const { added } = await client.seedSandboxAccounts({});
  t.deepEqual(added.map((a) => a.iban).sort(), SEED_ACCOUNTS.map((a) => a.iban).sort());
  const { accounts } = await client.listReceivingAccounts({});
  t.deepEqual(accounts.map((a) => a.iban).sort(), SEED_ACCOUNTS.map((a) => a.iban).sort());
  t.true(accounts.every((a) => a.sandbox && isValidIBAN(a.iban) && a.bankName !== "" && a.accountName.startsWith("Sandbox")));
  t.deepEqual((await client.seedSandboxAccounts({})).added, []);
  t.deepEqual((await client.listReceivingAccounts({ sandbox: false })).accounts, [], "none of them is live");
});

test.serial("ListAvailableBanks gives every active bank with an account of the merchant's kind, with default limits in Turkish name order, and FAST with the FAST settings", async (t) => {
  const response = await client.listAvailableBanks({ merchantId: merchant(), sandbox: true });
  // The sandbox seed has accounts at some banks only: the others take no deposit, so they are not shown.
  t.deepEqual(response.banks.map((b) => b.id).sort(), [...new Set(SEED_ACCOUNTS.map((a) => a.bankId))].sort());
  t.true(response.banks.every((b) => b.minAmount === 1000n && b.maxAmount === 5_000_000n && b.logoUrl !== ""));
  const names = response.banks.map((b) => b.name);
  t.deepEqual(names, [...names].sort(new Intl.Collator("tr").compare));
  // Byte order would put "Türkiye İş Bankası" after "Türkiye Vakıflar Bankası".
  t.true(names.indexOf("Türkiye İş Bankası") >= 0 && names.indexOf("Türkiye İş Bankası") < names.indexOf("Türkiye Vakıflar Bankası"));
  t.deepEqual({ min: response.fast?.minAmount, max: response.fast?.maxAmount }, { min: 100n, max: 10_000_000n });
});

test.serial("a merchant's override changes the limits for that merchant only, and clearing it restores the defaults", async (t) => {
  const mine = merchant();
  const other = merchant();
  const set = await client.setMerchantLimit({ limit: { merchantId: mine, bankId: AKBANK, minAmount: 2500n } });
  t.like(set.limit, { merchantId: mine, bankId: AKBANK, minAmount: 2500n, maxAmount: undefined, enabled: undefined });
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: "FAST", maxAmount: 50_000n } });

  const forMe = await client.listAvailableBanks({ merchantId: mine, sandbox: true });
  t.like(
    forMe.banks.find((b) => b.id === AKBANK),
    { minAmount: 2500n, maxAmount: 5_000_000n },
  );
  t.like(
    forMe.banks.find((b) => b.id === GARANTI),
    { minAmount: 1000n, maxAmount: 5_000_000n },
  );
  t.like(forMe.fast, { minAmount: 100n, maxAmount: 50_000n });

  const forOther = await client.listAvailableBanks({ merchantId: other, sandbox: true });
  t.like(
    forOther.banks.find((b) => b.id === AKBANK),
    { minAmount: 1000n, maxAmount: 5_000_000n },
  );
  t.like(forOther.fast, { minAmount: 100n, maxAmount: 10_000_000n });

  const { limits } = await client.listMerchantLimits({ merchantId: mine });
  t.deepEqual(limits.map((l) => l.bankId).sort(), [AKBANK, "FAST"].sort());

  await client.clearMerchantLimit({ merchantId: mine, bankId: AKBANK });
  const cleared = await client.listAvailableBanks({ merchantId: mine, sandbox: true });
  t.like(
    cleared.banks.find((b) => b.id === AKBANK),
    { minAmount: 1000n, maxAmount: 5_000_000n },
  );
});

test.serial("a merchant's override with enabled=false hides that bank from that merchant only", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: GARANTI, enabled: false } });
  t.false((await client.listAvailableBanks({ merchantId: mine, sandbox: true })).banks.some((b) => b.id === GARANTI));
  t.true((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).banks.some((b) => b.id === GARANTI));
});

test.serial("disabling FAST for a merchant hides FAST from that merchant only", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: "FAST", enabled: false } });
  t.is((await client.listAvailableBanks({ merchantId: mine, sandbox: true })).fast, undefined);
  t.truthy((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).fast);
});

test.serial("deactivating every FAST-enabled receiving account hides FAST; one active FAST account brings it back", async (t) => {
  const { accounts } = await client.listReceivingAccounts({ sandbox: true });
  const fastAccounts = accounts.filter((a) => a.active && a.fastEnabled);
  t.true(fastAccounts.length >= 2);
  for (const account of fastAccounts) await client.updateReceivingAccount({ accountId: account.id, active: false });
  t.is((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).fast, undefined);

  const [first, ...rest] = fastAccounts;
  await client.updateReceivingAccount({ accountId: first!.id, active: true });
  t.truthy((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).fast);
  for (const account of rest) await client.updateReceivingAccount({ accountId: account.id, active: true });
});

test.serial("disabling FAST in the settings hides FAST for every merchant", async (t) => {
  const updated = await client.updateFastSettings({ enabled: false });
  t.like(updated.settings, { enabled: false, minAmount: 100n, maxAmount: 10_000_000n });
  t.is((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).fast, undefined);
  await client.updateFastSettings({ enabled: true });
  t.truthy((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).fast);
});

test.serial("a created bank gets an opaque id and the clock's time; UpdateBank changes only the fields set; inactive banks are not available", async (t) => {
  const { bank } = await client.createBank({ name: "Sandbox Katılım", code: "9901", logoUrl: "https://cdn.example.com/9901.svg", minAmount: 500n, maxAmount: 900n });
  t.regex(bank?.id ?? "", /^bnk_[A-Za-z0-9_-]{22}$/);
  t.like(bank, { name: "Sandbox Katılım", code: "9901", active: true, minAmount: 500n, maxAmount: 900n });
  t.is(timestampDate(bank!.createdAt!).toISOString(), "2026-11-22T10:00:00.000Z");
  t.false((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).banks.some((b) => b.id === bank!.id), "no account yet: not available");
  const { account } = await client.createReceivingAccount({ bankId: bank!.id, accountName: "Sandbox", iban: turkishIban("0990100000000000000099"), fastEnabled: false, sandbox: true });
  t.like(
    (await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).banks.find((b) => b.id === bank!.id),
    { minAmount: 500n, maxAmount: 900n },
  );

  clock.advance(60_000);
  const updated = await client.updateBank({ bankId: bank!.id, maxAmount: 1200n, active: false });
  t.like(updated.bank, { name: "Sandbox Katılım", logoUrl: "https://cdn.example.com/9901.svg", minAmount: 500n, maxAmount: 1200n, active: false });
  t.is(timestampDate(updated.bank!.updatedAt!).toISOString(), "2026-11-22T10:01:00.000Z");
  t.false((await client.listAvailableBanks({ merchantId: merchant(), sandbox: true })).banks.some((b) => b.id === bank!.id));
  t.true((await client.listBanks({})).banks.some((b) => b.id === bank!.id && !b.active));
  // The later tests count the sandbox accounts of the seed's banks only.
  await client.updateReceivingAccount({ accountId: account!.id, active: false });
});

test.serial("deposit terms and FAST never mix kinds: a live merchant gets only live accounts, a sandbox merchant only sandbox ones", async (t) => {
  const live = merchant();
  t.is((await client.listAvailableBanks({ merchantId: live, sandbox: false })).fast, undefined, "no live FAST account yet: no FAST for live merchants");
  t.deepEqual((await client.getDepositTerms({ merchantId: live, bankId: AKBANK, sandbox: false })).accounts, [], "the sandbox Akbank accounts are not offered");
  t.deepEqual((await client.getDepositTerms({ merchantId: live, bankId: "", sandbox: false })).accounts, []);

  const { account } = await client.createReceivingAccount({ bankId: AKBANK, accountName: "Ödeme A.Ş.", iban: LIVE_AKBANK_IBAN, fastEnabled: true, sandbox: false });
  try {
    t.false(account!.sandbox);
    const terms = await client.getDepositTerms({ merchantId: live, bankId: AKBANK, sandbox: false });
    t.deepEqual(
      terms.accounts.map((a) => a.id),
      [account!.id],
    );
    t.truthy((await client.listAvailableBanks({ merchantId: live, sandbox: false })).fast, "a live FAST account makes FAST available to live merchants");
    t.deepEqual(
      (await client.getDepositTerms({ merchantId: live, bankId: "FAST", sandbox: false })).accounts.map((a) => a.id),
      [account!.id],
    );
    const sandboxTerms = await client.getDepositTerms({ merchantId: merchant(), bankId: AKBANK, sandbox: true });
    t.false(sandboxTerms.accounts.some((a) => a.id === account!.id), "a sandbox merchant never gets the live account");
    t.true(sandboxTerms.accounts.length > 0 && sandboxTerms.accounts.every((a) => a.sandbox));
    t.deepEqual(
      (await client.listReceivingAccounts({ sandbox: false })).accounts.map((a) => a.id),
      [account!.id],
    );
  } finally {
    await client.updateReceivingAccount({ accountId: account!.id, active: false });
  }
});

test.serial("a receiving account's IBAN is stored normalised, with its bank's name", async (t) => {
  const { account } = await client.createReceivingAccount({
    bankId: ZIRAAT,
    accountName: "  Sandbox Ödeme Hizmetleri A.Ş.  ",
    iban: "tr36 0001 0000 0000 0000 0000 12",
    fastEnabled: true,
  });
  t.like(account, {
    bankId: ZIRAAT,
    bankName: "Türkiye Cumhuriyeti Ziraat Bankası",
    accountName: "Sandbox Ödeme Hizmetleri A.Ş.",
    iban: "TR360001000000000000000012",
    active: true,
    fastEnabled: true,
  });
  t.regex(account?.id ?? "", /^acc_/);
  const { accounts } = await client.listReceivingAccounts({ bankId: ZIRAAT });
  t.true(accounts.every((a) => a.bankId === ZIRAAT));
  t.true(accounts.some((a) => a.id === account!.id));
});

test.serial("bad input is VALIDATION_ERROR naming the proto field", async (t) => {
  const cases: Array<[string, () => Promise<unknown>]> = [
    ["merchant_id", () => client.listAvailableBanks({ merchantId: "" })],
    ["code", () => client.createBank({ name: "X Bank", code: "12-3", minAmount: 1n, maxAmount: 2n })],
    ["code", () => client.createBank({ name: "X Bank", code: "fast", minAmount: 1n, maxAmount: 2n })],
    ["name", () => client.createBank({ name: "   ", code: "9902", minAmount: 1n, maxAmount: 2n })],
    ["min_amount", () => client.createBank({ name: "X Bank", code: "9902", minAmount: 0n, maxAmount: 2n })],
    ["max_amount", () => client.createBank({ name: "X Bank", code: "9902", minAmount: 1n, maxAmount: BigInt(Number.MAX_SAFE_INTEGER) + 1n })],
    ["min_amount", () => client.createBank({ name: "X Bank", code: "9902", minAmount: 3n, maxAmount: 2n })],
    ["logo_url", () => client.createBank({ name: "X Bank", code: "9902", logoUrl: "ftp://x/logo.svg", minAmount: 1n, maxAmount: 2n })],
    ["logo_url", () => client.updateBank({ bankId: AKBANK, logoUrl: "//evil.example/logo.svg" })],
    ["max_amount", () => client.updateBank({ bankId: AKBANK, maxAmount: 10n })],
    ["min_amount", () => client.updateFastSettings({ minAmount: -1n })],
    ["max_amount", () => client.updateFastSettings({ maxAmount: 1n })],
    ["limit", () => client.setMerchantLimit({})],
    ["limit.merchant_id", () => client.setMerchantLimit({ limit: { bankId: AKBANK } })],
    ["limit.min_amount", () => client.setMerchantLimit({ limit: { merchantId: merchant(), bankId: AKBANK, minAmount: 6_000_000n } })],
    ["limit.max_amount", () => client.setMerchantLimit({ limit: { merchantId: merchant(), bankId: "FAST", maxAmount: 50n } })],
    ["limit.max_amount", () => client.setMerchantLimit({ limit: { merchantId: merchant(), bankId: AKBANK, maxAmount: 0n } })],
    ["merchant_id", () => client.listMerchantLimits({ merchantId: "" })],
    ["bank_id", () => client.clearMerchantLimit({ merchantId: merchant(), bankId: "" })],
    ["iban", () => client.createReceivingAccount({ bankId: AKBANK, accountName: "A", iban: "TR000046000000000000000001", fastEnabled: false })],
    ["iban", () => client.createReceivingAccount({ bankId: AKBANK, accountName: "A", iban: "DE89370400440532013000", fastEnabled: false })],
    // A valid IBAN of Ziraat (00010) offered as an Akbank account. Inactive: the bank is read only
    // when the request runs, and an active live account runs only once a second admin approves it.
    ["iban", () => client.createReceivingAccount({ bankId: AKBANK, accountName: "A", iban: "TR360001000000000000000012", fastEnabled: false, active: false })],
    ["account_name", () => client.createReceivingAccount({ bankId: AKBANK, accountName: "", iban: SEED_ACCOUNTS[0]!.iban, fastEnabled: false })],
    ["account_id", () => client.updateReceivingAccount({ accountId: "", active: false })],
    ["merchant_id", () => client.getDepositTerms({ merchantId: "", bankId: AKBANK })],
    ["merchant_id", () => client.getDepositTerms({ merchantId: "", bankId: "" })],
    ["bank_id", () => client.getDepositTerms({ merchantId: merchant(), bankId: "x".repeat(41), sandbox: true })],
  ];
  for (const [field, call] of cases) {
    const info = await rejectionOf(call());
    t.is(info.code, Code.InvalidArgument, field);
    t.is(info.reason, "VALIDATION_ERROR", field);
    t.is(info.field, field, info.message);
    t.true(info.message.startsWith(field), info.message);
  }
  // Nothing was written by the rejected calls.
  t.like((await client.listBanks({})).banks.find((b) => b.id === AKBANK), { minAmount: 1000n, maxAmount: 5_000_000n, logoUrl: "/assets/banks/0046.svg" });
});

test.serial("a taken bank code is BANK_CODE_TAKEN and a taken IBAN, however written, is IBAN_TAKEN", async (t) => {
  const bank = await rejectionOf(client.createBank({ name: "Another Akbank", code: "0046", minAmount: 1n, maxAmount: 2n }));
  t.like(bank, { code: Code.AlreadyExists, reason: "BANK_CODE_TAKEN" });

  const seeded = SEED_ACCOUNTS.find((a) => a.bankId === AKBANK)!;
  const written = seeded.iban.toLowerCase().replace(/(.{4})/g, "$1 ");
  const account = await rejectionOf(client.createReceivingAccount({ bankId: AKBANK, accountName: "Dup", iban: written, fastEnabled: false }));
  t.like(account, { code: Code.AlreadyExists, reason: "IBAN_TAKEN" });
});

test.serial("unknown bank and account ids are NOT_FOUND with BANK_NOT_FOUND / ACCOUNT_NOT_FOUND", async (t) => {
  const cases: Array<[string, () => Promise<unknown>]> = [
    ["BANK_NOT_FOUND", () => client.updateBank({ bankId: "bnk_missing", name: "X" })],
    ["BANK_NOT_FOUND", () => client.setMerchantLimit({ limit: { merchantId: merchant(), bankId: "bnk_missing", enabled: false } })],
    ["BANK_NOT_FOUND", () => client.listReceivingAccounts({ bankId: "bnk_missing" })],
    ["BANK_NOT_FOUND", () => client.createReceivingAccount({ bankId: "bnk_missing", accountName: "A", iban: "TR150001000000000000000099", fastEnabled: false })],
    ["ACCOUNT_NOT_FOUND", () => client.updateReceivingAccount({ accountId: "acc_missing", active: false })],
  ];
  for (const [reason, call] of cases) {
    const info = await rejectionOf(call());
    t.is(info.code, Code.NotFound, reason);
    t.is(info.reason, reason);
  }
});

const byId = (ids: string[]) => [...ids].sort();

async function activeAccountIds(filter: (a: { bankId: string; active: boolean; fastEnabled: boolean }) => boolean = () => true) {
  const { accounts } = await client.listReceivingAccounts({ sandbox: true });
  return byId(accounts.filter((a) => a.active && filter(a)).map((a) => a.id));
}

test.serial("GetDepositTerms for a bank gives its name, the default limits and only its active accounts, ordered by id", async (t) => {
  const seeded = SEED_ACCOUNTS.filter((a) => a.bankId === AKBANK);
  t.is(seeded.length, 2);
  const [kept, deactivated] = seeded;
  await client.updateReceivingAccount({ accountId: deactivated!.id, active: false });
  try {
    const terms = await client.getDepositTerms({ merchantId: merchant(), bankId: AKBANK, sandbox: true });
    t.like(terms, { bankId: AKBANK, bankName: "Akbank", minAmount: 1000n, maxAmount: 5_000_000n });
    t.deepEqual(
      terms.accounts.map((a) => a.id),
      [kept!.id],
    );
    t.like(terms.accounts[0], { bankId: AKBANK, bankName: "Akbank", iban: kept!.iban, active: true, accountName: SEED_ACCOUNTS[0]!.accountName });
  } finally {
    await client.updateReceivingAccount({ accountId: deactivated!.id, active: true });
  }
  const both = await client.getDepositTerms({ merchantId: merchant(), bankId: AKBANK, sandbox: true });
  t.deepEqual(
    both.accounts.map((a) => a.id),
    byId(seeded.map((a) => a.id)),
  );
});

test.serial("GetDepositTerms for a bank gives that merchant's override limits, and other merchants keep the defaults", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: GARANTI, minAmount: 2500n, maxAmount: 40_000n } });
  t.like(await client.getDepositTerms({ merchantId: mine, bankId: GARANTI, sandbox: true }), { bankId: GARANTI, minAmount: 2500n, maxAmount: 40_000n });
  t.like(await client.getDepositTerms({ merchantId: merchant(), bankId: GARANTI, sandbox: true }), { minAmount: 1000n, maxAmount: 5_000_000n });
});

test.serial("GetDepositTerms refuses a bank disabled for the merchant, an inactive bank and an unknown id with BANK_NOT_AVAILABLE naming bank_id", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: GARANTI, enabled: false } });
  const { bank: inactive } = await client.createBank({ name: "Kapalı Bank", code: "9905", minAmount: 100n, maxAmount: 200n, active: false });
  for (const bankId of [GARANTI, inactive!.id, "bnk_missing"]) {
    const info = await rejectionOf(client.getDepositTerms({ merchantId: mine, bankId }));
    t.like(info, { code: Code.FailedPrecondition, reason: "BANK_NOT_AVAILABLE", field: "bank_id", message: `bank ${bankId} is not available to this merchant` });
  }
  // The override disables Garanti for that merchant only.
  t.like(await client.getDepositTerms({ merchantId: merchant(), bankId: GARANTI, sandbox: true }), { bankId: GARANTI });
});

test.serial("GetDepositTerms for FAST gives the FAST limits with the merchant's override and every active FAST-enabled account of any bank", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: "FAST", maxAmount: 50_000n } });
  const terms = await client.getDepositTerms({ merchantId: mine, bankId: "FAST", sandbox: true });
  t.like(terms, { bankId: "FAST", bankName: "FAST", minAmount: 100n, maxAmount: 50_000n });
  const expected = await activeAccountIds((a) => a.fastEnabled);
  t.deepEqual(
    terms.accounts.map((a) => a.id),
    expected,
  );
  t.true(terms.accounts.every((a) => a.active && a.fastEnabled && a.bankName !== ""));
  t.true(new Set(terms.accounts.map((a) => a.bankId)).size > 1);
  // Seeded FAST accounts of several banks, and none that is not FAST-enabled.
  t.true(SEED_ACCOUNTS.filter((a) => a.fastEnabled).every((a) => expected.includes(a.id)));
  t.false(SEED_ACCOUNTS.filter((a) => !a.fastEnabled).some((a) => expected.includes(a.id)));
  t.like(await client.getDepositTerms({ merchantId: merchant(), bankId: "FAST", sandbox: true }), { minAmount: 100n, maxAmount: 10_000_000n });
});

test.serial("GetDepositTerms for FAST is BANK_NOT_AVAILABLE when the merchant's override or the FAST settings disable it", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: "FAST", enabled: false } });
  const forMe = await rejectionOf(client.getDepositTerms({ merchantId: mine, bankId: "FAST", sandbox: true }));
  t.like(forMe, { code: Code.FailedPrecondition, reason: "BANK_NOT_AVAILABLE", field: "bank_id", message: "bank FAST is not available to this merchant" });

  await client.updateFastSettings({ enabled: false });
  try {
    const forAnyone = await rejectionOf(client.getDepositTerms({ merchantId: merchant(), bankId: "FAST", sandbox: true }));
    t.like(forAnyone, { code: Code.FailedPrecondition, reason: "BANK_NOT_AVAILABLE", field: "bank_id" });
  } finally {
    await client.updateFastSettings({ enabled: true });
  }
});

test.serial("GetDepositTerms without a bank gives the merchant's widest limits over every available bank and FAST, and the accounts it can be sent to", async (t) => {
  const mine = merchant();
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: "FAST", maxAmount: 50_000n } });
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: AKBANK, maxAmount: 8_000_000n } });
  // A larger maximum that the merchant cannot use does not widen the range.
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: GARANTI, enabled: false, maxAmount: 9_000_000n } });
  const terms = await client.getDepositTerms({ merchantId: mine, bankId: "", sandbox: true });
  // The minimum is FAST's, the maximum Akbank's.
  t.like(terms, { bankId: "", bankName: "", minAmount: 100n, maxAmount: 8_000_000n });
  // Garanti is hidden from this merchant: its accounts come only through FAST.
  t.deepEqual(
    terms.accounts.map((a) => a.id),
    await activeAccountIds((a) => a.bankId !== GARANTI || a.fastEnabled),
  );
  t.true((await activeAccountIds((a) => a.bankId === GARANTI && !a.fastEnabled)).length > 0, "the seed has a Garanti account without FAST");

  const { accounts } = await client.listReceivingAccounts({ bankId: ZIRAAT });
  const [ziraat] = accounts;
  await client.updateReceivingAccount({ accountId: ziraat!.id, active: false });
  try {
    const without = await client.getDepositTerms({ merchantId: merchant(), bankId: "", sandbox: true });
    t.like(without, { minAmount: 100n, maxAmount: 10_000_000n });
    t.false(without.accounts.some((a) => a.id === ziraat!.id));
  } finally {
    await client.updateReceivingAccount({ accountId: ziraat!.id, active: true });
  }
});

test.serial("GetDepositTerms without a bank is BANK_NOT_AVAILABLE when nothing is available to the merchant", async (t) => {
  const mine = merchant();
  // Every bank, listed or not: one without an account is still a bank the merchant may name.
  const { banks } = await client.listBanks({});
  for (const bank of banks) await client.setMerchantLimit({ limit: { merchantId: mine, bankId: bank.id, enabled: false } });
  await client.setMerchantLimit({ limit: { merchantId: mine, bankId: "FAST", enabled: false } });
  const info = await rejectionOf(client.getDepositTerms({ merchantId: mine, bankId: "", sandbox: true }));
  t.like(info, { code: Code.FailedPrecondition, reason: "BANK_NOT_AVAILABLE", message: "no bank is available to this merchant" });
  t.is(info.field, undefined);
});

