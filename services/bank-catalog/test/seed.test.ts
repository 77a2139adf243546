import { createHash } from "node:crypto";
import test from "ava";
import { isValidIBAN } from "ibantools";
import { ibanMatchesBankCode } from "../src/limits.js";
import { SANDBOX_ACCOUNT_NAME, SEED_ACCOUNTS, SEED_BANKS, SEED_FAST_SETTINGS, seedBankId } from "../src/seed.js";

test("every seeded receiving-account IBAN is a valid 26-character TR IBAN of its own bank", (t) => {
  t.true(SEED_ACCOUNTS.length >= 8);
  for (const account of SEED_ACCOUNTS) {
    t.true(isValidIBAN(account.iban), account.iban);
    t.regex(account.iban, /^TR\d{24}$/);
    const bank = SEED_BANKS.find((b) => b.id === account.bankId);
    t.truthy(bank, account.iban);
    t.true(ibanMatchesBankCode(account.iban, bank?.code ?? ""), account.iban);
  }
  t.is(new Set(SEED_ACCOUNTS.map((a) => a.iban)).size, SEED_ACCOUNTS.length);
});

test("seeded accounts span about eight banks, are named as sandbox accounts and several take FAST", (t) => {
  t.true(new Set(SEED_ACCOUNTS.map((a) => a.bankId)).size >= 8);
  t.true(SEED_ACCOUNTS.every((a) => a.accountName === SANDBOX_ACCOUNT_NAME && a.active));
  t.true(SEED_ACCOUNTS.filter((a) => a.fastEnabled).length >= 3);
});

test("seeded bank ids are deterministic: bnk_ + base64url(sha256('bank:' + code)) cut to 22", (t) => {
  for (const bank of SEED_BANKS) {
    const expected = `bnk_${createHash("sha256").update(`bank:${bank.code}`).digest("base64url").slice(0, 22)}`;
    t.is(bank.id, expected);
    t.is(seedBankId(bank.code), expected);
  }
  t.is(seedBankId("0064"), seedBankId("0064"));
  t.is(new Set(SEED_BANKS.map((b) => b.id)).size, SEED_BANKS.length);
});

test("seeded banks have real names, unique 4-digit EFT codes, logo paths and the default limits", (t) => {
  t.true(SEED_BANKS.length >= 20);
  t.is(new Set(SEED_BANKS.map((b) => b.code)).size, SEED_BANKS.length);
  for (const bank of SEED_BANKS) {
    t.true(bank.name.length > 0);
    t.regex(bank.code, /^\d{4}$/);
    t.is(bank.logoUrl, `/assets/banks/${bank.code}.svg`);
    t.true(bank.active);
    t.deepEqual([bank.minAmount, bank.maxAmount], [1000, 5_000_000]);
  }
  const byCode = new Map(SEED_BANKS.map((b) => [b.code, b.name]));
  t.is(byCode.get("0010"), "Türkiye Cumhuriyeti Ziraat Bankası");
  t.is(byCode.get("0064"), "Türkiye İş Bankası");
  t.is(byCode.get("0046"), "Akbank");
  t.deepEqual(SEED_FAST_SETTINGS, { enabled: true, minAmount: 100, maxAmount: 10_000_000 });
});
