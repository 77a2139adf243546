import test from "ava";
import { seededRandom } from "@payments/testing";
import {
  FAST_ID,
  accountPool,
  isValidAmount,
  isValidRange,
  ibanMatchesBankCode,
  normalizeIban,
  resolveAvailableCatalog,
  resolveDepositOptions,
  resolveDepositTerms,
  turkishIbanProblem,
  type CatalogAccount,
  type CatalogBank,
  type CatalogInput,
  type LimitOverride,
} from "../src/limits.js";

function bank(id: string, name: string, extra: Partial<CatalogBank> = {}): CatalogBank {
  return { id, name, code: id.toUpperCase(), logoUrl: `/assets/banks/${id}.svg`, active: true, minAmount: 1000, maxAmount: 5000, ...extra };
}

function account(id: string, bankId: string, extra: Partial<CatalogAccount> = {}): CatalogAccount {
  return { id, bankId, active: true, fastEnabled: false, ...extra };
}

/** One active account at each of these banks, the first of them FAST-enabled. */
function accountsAt(...bankIds: string[]): CatalogAccount[] {
  return bankIds.map((bankId, i) => account(`acc_${bankId}`, bankId, { fastEnabled: i === 0 }));
}

type Input = Omit<CatalogInput<CatalogAccount>, "pool"> & { accounts: CatalogAccount[] };

/** Two banks, FAST on, and the given accounts (by default one at each bank, Akbank's FAST-enabled). */
function input(extra: Partial<Input> = {}): CatalogInput<CatalogAccount> {
  const { accounts, ...rest }: Input = {
    banks: [bank("akb", "Akbank"), bank("grn", "Türkiye Garanti Bankası")],
    fast: { enabled: true, minAmount: 100, maxAmount: 9000 },
    overrides: [],
    accounts: accountsAt("akb", "grn"),
    ...extra,
  };
  return { ...rest, pool: accountPool(accounts) };
}

const listed = (catalogInput: CatalogInput<CatalogAccount>) => resolveAvailableCatalog(catalogInput).banks.map((b) => b.id);

test("without overrides every active bank with an account is listed with its default limits", (t) => {
  const result = resolveAvailableCatalog(input());
  t.deepEqual(
    result.banks.map((b) => [b.id, b.minAmount, b.maxAmount]),
    [
      ["akb", 1000, 5000],
      ["grn", 1000, 5000],
    ],
  );
});

test("an override's min and max each replace the default independently", (t) => {
  const result = resolveAvailableCatalog(
    input({
      overrides: [
        { bankId: "akb", minAmount: 2000 },
        { bankId: "grn", maxAmount: 3000, minAmount: null },
      ],
    }),
  );
  t.deepEqual(
    result.banks.map((b) => [b.id, b.minAmount, b.maxAmount]),
    [
      ["akb", 2000, 5000],
      ["grn", 1000, 3000],
    ],
  );
});

test("a bank the merchant's override disables is hidden; enabled=true changes nothing", (t) => {
  t.deepEqual(listed(input({ overrides: [{ bankId: "akb", enabled: false }] })), ["grn"]);
  t.deepEqual(listed(input({ overrides: [{ bankId: "akb", enabled: true }] })), ["akb", "grn"]);
});

test("an inactive bank is hidden even when the merchant's override enables it and it has an active account", (t) => {
  t.deepEqual(listed(input({ banks: [bank("akb", "Akbank", { active: false }), bank("grn", "Garanti")], overrides: [{ bankId: "akb", enabled: true }] })), ["grn"]);
});

test("a bank whose combined limits leave no valid amount is left out", (t) => {
  t.deepEqual(listed(input({ overrides: [{ bankId: "akb", minAmount: 6000 }] })), ["grn"]);
});

test("a bank without any receiving account is not listed", (t) => {
  t.deepEqual(listed(input({ accounts: accountsAt("grn") })), ["grn"]);
  t.deepEqual(resolveAvailableCatalog(input({ accounts: [] })), { banks: [] }, "no account at all: nothing is listed, FAST included");
});

test("a bank whose only accounts are inactive is not listed", (t) => {
  const accounts = [account("acc_1", "akb", { active: false }), account("acc_2", "akb", { active: false, fastEnabled: true }), account("acc_3", "grn")];
  t.deepEqual(listed(input({ accounts })), ["grn"]);
});

test("a bank whose only account is FAST-enabled is listed: a bank's deposits take any of its active accounts", (t) => {
  t.deepEqual(listed(input({ accounts: [account("acc_1", "akb", { fastEnabled: true }), account("acc_2", "grn")] })), ["akb", "grn"]);
});

test("banks are ordered by name with Turkish collation", (t) => {
  const banks = [
    bank("isb", "Türkiye İş Bankası"),
    bank("seker", "Şekerbank"),
    bank("qnb", "QNB Bank"),
    bank("ing", "ING Bank"),
    bank("hsbc", "HSBC Bank"),
    bank("teb", "Türk Ekonomi Bankası"),
    bank("halk", "Türkiye Halk Bankası"),
    bank("sa", "Sandbox Bank"),
  ];
  const result = resolveAvailableCatalog(input({ banks, accounts: accountsAt(...banks.map((b) => b.id)) }));
  t.deepEqual(
    result.banks.map((b) => b.name),
    ["HSBC Bank", "ING Bank", "QNB Bank", "Sandbox Bank", "Şekerbank", "Türk Ekonomi Bankası", "Türkiye Halk Bankası", "Türkiye İş Bankası"],
  );
});

test("FAST is offered with the FAST settings' limits when enabled and a FAST account exists", (t) => {
  t.deepEqual(resolveAvailableCatalog(input()).fast, { minAmount: 100, maxAmount: 9000 });
});

test("FAST limits take the merchant's FAST override over the settings", (t) => {
  const result = resolveAvailableCatalog(input({ overrides: [{ bankId: FAST_ID, maxAmount: 500 }] }));
  t.deepEqual(result.fast, { minAmount: 100, maxAmount: 500 });
});

test("FAST is absent when the FAST settings are disabled, even if the merchant's override enables it", (t) => {
  const result = resolveAvailableCatalog(input({ fast: { enabled: false, minAmount: 100, maxAmount: 9000 }, overrides: [{ bankId: FAST_ID, enabled: true }] }));
  t.is(result.fast, undefined);
});

test("FAST is absent when the merchant's FAST override disables it", (t) => {
  t.is(resolveAvailableCatalog(input({ overrides: [{ bankId: FAST_ID, enabled: false }] })).fast, undefined);
});

test("FAST is absent when no active FAST-enabled receiving account exists, while the banks with accounts stay listed", (t) => {
  const result = resolveAvailableCatalog(input({ accounts: [account("acc_1", "akb"), account("acc_2", "grn", { fastEnabled: true, active: false })] }));
  t.is(result.fast, undefined);
  t.deepEqual(
    result.banks.map((b) => b.id),
    ["akb"],
  );
});

test("FAST is offered through a FAST-enabled account of a bank the merchant cannot use, as GetDepositTerms would take it", (t) => {
  const catalogInput = input({ overrides: [{ bankId: "akb", enabled: false }], accounts: [account("acc_1", "akb", { fastEnabled: true })] });
  const result = resolveAvailableCatalog(catalogInput);
  t.deepEqual(result, { banks: [], fast: { minAmount: 100, maxAmount: 9000 } });
  t.deepEqual(ids(resolveDepositTerms(catalogInput, FAST_ID)?.accounts ?? []), ["acc_1"]);
});

test("FAST is a single option and never appears among the banks, even with a FAST override and a bank named FAST-like", (t) => {
  const result = resolveAvailableCatalog(
    input({ banks: [bank("akb", "Akbank"), bank("fastpay", "FAST Pay")], accounts: accountsAt("akb", "fastpay"), overrides: [{ bankId: FAST_ID, minAmount: 200 }] }),
  );
  t.false(result.banks.some((b) => b.id === FAST_ID || b.code === FAST_ID));
  t.deepEqual(result.fast, { minAmount: 200, maxAmount: 9000 });
});

/** Two Akbank accounts (one FAST), an inactive FAST one there, and a FAST one at Garanti, given out of id order. */
function termsInput(extra: Partial<Input> = {}): CatalogInput<CatalogAccount> {
  return input({
    accounts: [
      account("acc_4", "grn", { fastEnabled: true }),
      account("acc_2", "akb"),
      account("acc_3", "akb", { active: false, fastEnabled: true }),
      account("acc_1", "akb", { fastEnabled: true }),
    ],
    ...extra,
  });
}

const ids = (accounts: readonly CatalogAccount[]) => accounts.map((a) => a.id);

test("deposit terms for a bank: its name, its default limits and only its active accounts, ordered by id", (t) => {
  const terms = resolveDepositTerms(termsInput(), "akb");
  t.like(terms, { bankId: "akb", bankName: "Akbank", minAmount: 1000, maxAmount: 5000 });
  t.deepEqual(ids(terms?.accounts ?? []), ["acc_1", "acc_2"]);
});

test("deposit terms for a bank take the merchant's override, each of min and max independently", (t) => {
  const terms = resolveDepositTerms(termsInput({ overrides: [{ bankId: "akb", maxAmount: 3000 }] }), "akb");
  t.like(terms, { minAmount: 1000, maxAmount: 3000 });
});

test("a bank that is inactive, disabled for the merchant, unknown, or left with no valid amount has no deposit terms", (t) => {
  t.is(resolveDepositTerms(termsInput({ banks: [bank("akb", "Akbank", { active: false })] }), "akb"), undefined);
  t.is(resolveDepositTerms(termsInput({ overrides: [{ bankId: "akb", enabled: false }] }), "akb"), undefined);
  t.is(resolveDepositTerms(termsInput(), "bnk_unknown"), undefined);
  t.is(resolveDepositTerms(termsInput({ overrides: [{ bankId: "akb", minAmount: 6000 }] }), "akb"), undefined);
  // Disabling one bank leaves the others as they were.
  t.truthy(resolveDepositTerms(termsInput({ overrides: [{ bankId: "akb", enabled: false }] }), "grn"));
});

test("a bank without an active account still has deposit terms, with no accounts (the deposit service answers BANK_UNAVAILABLE), and is not listed", (t) => {
  const catalogInput = termsInput({ accounts: [account("acc_1", "akb", { active: false })] });
  const terms = resolveDepositTerms(catalogInput, "akb");
  t.like(terms, { bankId: "akb", minAmount: 1000, maxAmount: 5000 });
  t.deepEqual(terms?.accounts, []);
  t.false(listed(catalogInput).includes("akb"));
});

test("deposit terms for FAST: the merchant's FAST limits and every active FAST-enabled account of any bank", (t) => {
  const terms = resolveDepositTerms(termsInput({ overrides: [{ bankId: FAST_ID, minAmount: 200 }] }), FAST_ID);
  t.like(terms, { bankId: FAST_ID, bankName: FAST_ID, minAmount: 200, maxAmount: 9000 });
  t.deepEqual(ids(terms?.accounts ?? []), ["acc_1", "acc_4"]);
});

test("FAST has no deposit terms when its settings are off, the merchant's override disables it, or its range is empty", (t) => {
  t.is(resolveDepositTerms(termsInput({ fast: { enabled: false, minAmount: 100, maxAmount: 9000 } }), FAST_ID), undefined);
  t.is(resolveDepositTerms(termsInput({ overrides: [{ bankId: FAST_ID, enabled: false }] }), FAST_ID), undefined);
  t.is(resolveDepositTerms(termsInput({ overrides: [{ bankId: FAST_ID, minAmount: 9500 }] }), FAST_ID), undefined);
});

test("FAST without an active FAST-enabled account has deposit terms with no accounts, like a bank without one, and is not listed", (t) => {
  const catalogInput = termsInput({ accounts: [account("acc_1", "akb"), account("acc_3", "akb", { active: false, fastEnabled: true })] });
  const terms = resolveDepositTerms(catalogInput, FAST_ID);
  t.like(terms, { bankId: FAST_ID, minAmount: 100, maxAmount: 9000 });
  t.deepEqual(terms?.accounts, []);
  t.is(resolveAvailableCatalog(catalogInput).fast, undefined);
});

test("deposit terms without a bank: the smallest minimum and largest maximum over the listed banks and FAST, and the active accounts of those", (t) => {
  const terms = resolveDepositTerms(
    termsInput({
      overrides: [
        { bankId: "akb", maxAmount: 20_000 },
        { bankId: FAST_ID, minAmount: 500 },
      ],
    }),
    "",
  );
  // 500 from FAST, 20,000 from Akbank: the widest range, not one entry's.
  t.like(terms, { bankId: "", bankName: "", minAmount: 500, maxAmount: 20_000 });
  t.deepEqual(ids(terms?.accounts ?? []), ["acc_1", "acc_2", "acc_4"]);
});

test("deposit terms without a bank leave out what the merchant cannot use: a disabled bank's limits and accounts, and FAST when it is off", (t) => {
  const terms = resolveDepositTerms(
    termsInput({
      banks: [bank("akb", "Akbank", { maxAmount: 50_000 }), bank("grn", "Garanti", { minAmount: 2000, maxAmount: 4000 })],
      overrides: [
        { bankId: "akb", enabled: false },
        { bankId: FAST_ID, enabled: false },
      ],
    }),
    "",
  );
  t.like(terms, { minAmount: 2000, maxAmount: 4000 });
  // Akbank's accounts, FAST-enabled or not, cannot be reached: only Garanti's remain.
  t.deepEqual(ids(terms?.accounts ?? []), ["acc_4"]);
});

test("deposit terms without a bank take no limits from a bank or FAST that is not listed for want of an account", (t) => {
  const terms = resolveDepositTerms(
    termsInput({
      banks: [bank("akb", "Akbank", { minAmount: 10, maxAmount: 90_000 }), bank("grn", "Garanti", { minAmount: 2000, maxAmount: 4000 })],
      fast: { enabled: true, minAmount: 1, maxAmount: 100_000 },
      accounts: [account("acc_4", "grn")],
    }),
    "",
  );
  t.like(terms, { minAmount: 2000, maxAmount: 4000 });
  t.deepEqual(ids(terms?.accounts ?? []), ["acc_4"]);
});

test("deposit terms without a bank, when banks are usable but none has an account: their widest limits and no accounts (BANK_UNAVAILABLE)", (t) => {
  const terms = resolveDepositTerms(termsInput({ accounts: [] }), "");
  t.like(terms, { bankId: "", minAmount: 100, maxAmount: 9000 });
  t.deepEqual(terms?.accounts, []);
});

test("without a bank and with nothing available to the merchant there are no deposit terms", (t) => {
  const terms = resolveDepositTerms(
    termsInput({
      overrides: [
        { bankId: "akb", enabled: false },
        { bankId: "grn", enabled: false },
        { bankId: FAST_ID, enabled: false },
      ],
    }),
    "",
  );
  t.is(terms, undefined);
});


test("over 2,000 generated catalogs, the list and the deposit terms agree: a listed entry's deposit gets an account within the listed limits; anything else is refused", (t) => {
  const next = seededRandom(19);
  const pick = <T>(...values: T[]): T => values[Math.floor(next() * values.length)]!;
  let listedSeen = 0;
  let refusedSeen = 0;
  for (let n = 0; n < 2000; n++) {
    const banks = ["b1", "b2", "b3", "b4"].map((id) => bank(id, `Bank ${id}`, { active: next() < 0.8, minAmount: pick(100, 1000), maxAmount: pick(500, 5000) }));
    const accounts = Array.from({ length: Math.floor(next() * 6) }, (_, i) =>
      account(`acc_${i}`, pick("b1", "b2", "b3", "b4", "b_gone"), { active: next() < 0.7, fastEnabled: next() < 0.4 }),
    );
    const overrides: LimitOverride[] = [...banks.map((b) => b.id), FAST_ID].flatMap((bankId) =>
      next() < 0.3 ? [{ bankId, enabled: pick(true, false, null), minAmount: pick(null, 50, 2000, 6000), maxAmount: pick(null, 400, 3000) }] : [],
    );
    const catalogInput = input({ banks, accounts, overrides, fast: { enabled: next() < 0.8, minAmount: 100, maxAmount: pick(50, 9000) } });
    const shown = resolveAvailableCatalog(catalogInput);
    const entries = [...shown.banks, ...(shown.fast ? [{ id: FAST_ID, ...shown.fast }] : [])];
    for (const entry of entries) {
      const terms = resolveDepositTerms(catalogInput, entry.id);
      t.truthy(terms, `${entry.id} is listed, so it has terms`);
      t.true((terms?.accounts.length ?? 0) > 0, `${entry.id} is listed, so a deposit through it gets an account`);
      t.deepEqual([terms?.minAmount, terms?.maxAmount], [entry.minAmount, entry.maxAmount], `${entry.id}: the listed limits are the deposit's`);
      t.true(entry.minAmount <= entry.maxAmount);
      listedSeen++;
    }
    const shownIds = new Set(entries.map((e) => e.id));
    for (const id of [...banks.map((b) => b.id), FAST_ID].filter((id) => !shownIds.has(id))) {
      const terms = resolveDepositTerms(catalogInput, id);
      t.true(terms === undefined || terms.accounts.length === 0, `${id} is not listed, so a deposit through it is refused`);
      refusedSeen++;
    }
    // Without a bank: accepted exactly when something is listed.
    t.is((resolveDepositTerms(catalogInput, "")?.accounts.length ?? 0) > 0, entries.length > 0);
  }
  t.true(listedSeen > 1000 && refusedSeen > 1000, `both sides exercised (${listedSeen} listed, ${refusedSeen} refused)`);
});

test("the deposit options carry their accounts: a bank's own active ones and FAST's FAST-enabled ones", (t) => {
  const options = resolveDepositOptions(termsInput());
  t.deepEqual(
    options.banks.map((b) => [b.id, ids(b.accounts)]),
    [
      ["akb", ["acc_1", "acc_2"]],
      ["grn", ["acc_4"]],
    ],
  );
  t.deepEqual(ids(options.fast?.accounts ?? []), ["acc_1", "acc_4"]);
});

test("an amount is a positive integer no greater than Number.MAX_SAFE_INTEGER", (t) => {
  t.true(isValidAmount(1n));
  t.true(isValidAmount(BigInt(Number.MAX_SAFE_INTEGER)));
  t.false(isValidAmount(0n));
  t.false(isValidAmount(-5n));
  t.false(isValidAmount(BigInt(Number.MAX_SAFE_INTEGER) + 1n));
  t.true(isValidAmount(150));
  t.false(isValidAmount(150.5));
  t.false(isValidAmount(Number.NaN));
  t.false(isValidAmount(0));
  t.true(isValidRange(100, 100));
  t.false(isValidRange(101, 100));
});

test("an IBAN is normalised (spaces removed, upper-cased) and must be a 26-character TR IBAN with a valid checksum", (t) => {
  const iban = normalizeIban(" tr33 0006 1005 1978 6457 8413 26 ");
  t.is(iban, "TR330006100519786457841326");
  t.is(turkishIbanProblem(iban), undefined);
  t.regex(turkishIbanProblem("TR330006100519786457841327") ?? "", /checksum/);
  t.regex(turkishIbanProblem("DE89370400440532013000") ?? "", /TR/);
  t.regex(turkishIbanProblem("TR33000610051978645784132") ?? "", /26/);
  t.regex(turkishIbanProblem("") ?? "", /required/);
});

test("an IBAN matches a bank when its 5-digit bank code is the bank's EFT code", (t) => {
  t.true(ibanMatchesBankCode("TR330006100519786457841326", "0061"));
  t.false(ibanMatchesBankCode("TR330006100519786457841326", "0062"));
  t.true(ibanMatchesBankCode("TR330006100519786457841326", "SANDBOX1"));
});
