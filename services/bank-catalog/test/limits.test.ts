import test from "ava";
import {
  FAST_ID,
  isValidAmount,
  isValidRange,
  ibanMatchesBankCode,
  normalizeIban,
  resolveAvailableCatalog,
  resolveDepositTerms,
  turkishIbanProblem,
  type AvailabilityInput,
  type CatalogAccount,
  type CatalogBank,
  type DepositTermsInput,
} from "../src/limits.js";

function bank(id: string, name: string, extra: Partial<CatalogBank> = {}): CatalogBank {
  return { id, name, code: id.toUpperCase(), logoUrl: `/assets/banks/${id}.svg`, active: true, minAmount: 1000, maxAmount: 5000, ...extra };
}

function input(extra: Partial<AvailabilityInput> = {}): AvailabilityInput {
  return {
    banks: [bank("akb", "Akbank"), bank("grn", "Türkiye Garanti Bankası")],
    fast: { enabled: true, minAmount: 100, maxAmount: 9000 },
    overrides: [],
    hasFastAccount: true,
    ...extra,
  };
}

test("without overrides every active bank is listed with its default limits", (t) => {
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
  const hidden = resolveAvailableCatalog(input({ overrides: [{ bankId: "akb", enabled: false }] }));
  t.deepEqual(
    hidden.banks.map((b) => b.id),
    ["grn"],
  );
  const shown = resolveAvailableCatalog(input({ overrides: [{ bankId: "akb", enabled: true }] }));
  t.deepEqual(
    shown.banks.map((b) => b.id),
    ["akb", "grn"],
  );
});

test("an inactive bank is hidden even when the merchant's override enables it", (t) => {
  const result = resolveAvailableCatalog(
    input({ banks: [bank("akb", "Akbank", { active: false }), bank("grn", "Garanti")], overrides: [{ bankId: "akb", enabled: true }] }),
  );
  t.deepEqual(
    result.banks.map((b) => b.id),
    ["grn"],
  );
});

test("a bank whose combined limits leave no valid amount is left out", (t) => {
  const result = resolveAvailableCatalog(input({ overrides: [{ bankId: "akb", minAmount: 6000 }] }));
  t.deepEqual(
    result.banks.map((b) => b.id),
    ["grn"],
  );
});

test("banks are ordered by name with Turkish collation", (t) => {
  const result = resolveAvailableCatalog(
    input({
      banks: [
        bank("isb", "Türkiye İş Bankası"),
        bank("seker", "Şekerbank"),
        bank("qnb", "QNB Bank"),
        bank("ing", "ING Bank"),
        bank("hsbc", "HSBC Bank"),
        bank("teb", "Türk Ekonomi Bankası"),
        bank("halk", "Türkiye Halk Bankası"),
        bank("sa", "Sandbox Bank"),
      ],
    }),
  );
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
  const result = resolveAvailableCatalog(
    input({ fast: { enabled: false, minAmount: 100, maxAmount: 9000 }, overrides: [{ bankId: FAST_ID, enabled: true }] }),
  );
  t.is(result.fast, undefined);
});

test("FAST is absent when the merchant's FAST override disables it", (t) => {
  t.is(resolveAvailableCatalog(input({ overrides: [{ bankId: FAST_ID, enabled: false }] })).fast, undefined);
});

test("FAST is absent when no active FAST-enabled receiving account exists", (t) => {
  t.is(resolveAvailableCatalog(input({ hasFastAccount: false })).fast, undefined);
});

test("FAST is a single option and never appears among the banks, even with a FAST override and a bank named FAST-like", (t) => {
  const result = resolveAvailableCatalog(
    input({ banks: [bank("akb", "Akbank"), bank("fastpay", "FAST Pay")], overrides: [{ bankId: FAST_ID, minAmount: 200 }] }),
  );
  t.false(result.banks.some((b) => b.id === FAST_ID || b.code === FAST_ID));
  t.deepEqual(result.fast, { minAmount: 200, maxAmount: 9000 });
});

function account(id: string, bankId: string, extra: Partial<CatalogAccount> = {}): CatalogAccount {
  return { id, bankId, active: true, fastEnabled: false, ...extra };
}

function termsInput(extra: Partial<DepositTermsInput<CatalogAccount>> = {}): DepositTermsInput<CatalogAccount> {
  const { hasFastAccount: _, ...catalog } = input();
  return {
    ...catalog,
    // Given out of id order, so the tests see the terms sort them.
    accounts: [
      account("acc_4", "grn", { fastEnabled: true }),
      account("acc_2", "akb"),
      account("acc_3", "akb", { active: false, fastEnabled: true }),
      account("acc_1", "akb", { fastEnabled: true }),
    ],
    ...extra,
  };
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

test("a bank without an active account still has deposit terms, with no accounts", (t) => {
  const terms = resolveDepositTerms(termsInput({ accounts: [account("acc_1", "akb", { active: false })] }), "akb");
  t.like(terms, { bankId: "akb", minAmount: 1000, maxAmount: 5000 });
  t.deepEqual(terms?.accounts, []);
});

test("deposit terms for FAST: the merchant's FAST limits and every active FAST-enabled account of any bank", (t) => {
  const terms = resolveDepositTerms(termsInput({ overrides: [{ bankId: FAST_ID, minAmount: 200 }] }), FAST_ID);
  t.like(terms, { bankId: FAST_ID, bankName: FAST_ID, minAmount: 200, maxAmount: 9000 });
  t.deepEqual(ids(terms?.accounts ?? []), ["acc_1", "acc_4"]);
});

test("FAST has no deposit terms when its settings are off, the merchant's override disables it, no active FAST account exists, or its range is empty", (t) => {
  t.is(resolveDepositTerms(termsInput({ fast: { enabled: false, minAmount: 100, maxAmount: 9000 } }), FAST_ID), undefined);
  t.is(resolveDepositTerms(termsInput({ overrides: [{ bankId: FAST_ID, enabled: false }] }), FAST_ID), undefined);
  t.is(resolveDepositTerms(termsInput({ accounts: [account("acc_1", "akb"), account("acc_3", "akb", { active: false, fastEnabled: true })] }), FAST_ID), undefined);
  t.is(resolveDepositTerms(termsInput({ overrides: [{ bankId: FAST_ID, minAmount: 9500 }] }), FAST_ID), undefined);
});

test("deposit terms without a bank: the smallest minimum and largest maximum over the available banks and FAST, and the active accounts of those", (t) => {
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
