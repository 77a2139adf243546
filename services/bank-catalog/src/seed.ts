import { createHash } from "node:crypto";
import { composeIBAN } from "ibantools";
import type { Knex } from "knex";
import { recordCatalogChanged } from "./catalog-changed.js";

/**
 * What an install starts with: the main Turkish banks (real names and EFT codes, public
 * facts) and FAST enabled, on every install. The SANDBOX receiving accounts are separate and
 * never seeded by a migration: only the all-in-one `pnpm start` and an operator's explicit
 * `cli account seed-sandbox` add them, and they are marked sandbox, so only sandbox
 * merchants' deposits are ever sent to them. Everything here is deterministic, so every
 * install (and every replica, and the tests) agrees on ids and IBANs.
 *
 * The sandbox IBANs are made up: they pass the ISO 13616 checksum and carry the bank's code,
 * but nobody checked that they belong to no one, which is why no live merchant's customer is
 * ever told to pay into one.
 */

/** Default limits of a seeded bank, in kuruş: 10.00 TRY .. 50,000.00 TRY. */
export const SEED_BANK_LIMITS = { minAmount: 1_000, maxAmount: 5_000_000 } as const;

/** Seeded FAST settings, in kuruş: 1.00 TRY .. 100,000.00 TRY. */
export const SEED_FAST_SETTINGS = { enabled: true, minAmount: 100, maxAmount: 10_000_000 } as const;

export const SANDBOX_ACCOUNT_NAME = "Sandbox Ödeme Hizmetleri A.Ş.";

/** Display names and EFT codes (the bank code inside every Turkish IBAN). */
export const SEED_BANK_LIST: ReadonlyArray<{ code: string; name: string }> = [
  { code: "0010", name: "Türkiye Cumhuriyeti Ziraat Bankası" },
  { code: "0012", name: "Türkiye Halk Bankası" },
  { code: "0015", name: "Türkiye Vakıflar Bankası" },
  { code: "0032", name: "Türk Ekonomi Bankası" },
  { code: "0046", name: "Akbank" },
  { code: "0059", name: "Şekerbank" },
  { code: "0062", name: "Türkiye Garanti Bankası" },
  { code: "0064", name: "Türkiye İş Bankası" },
  { code: "0067", name: "Yapı ve Kredi Bankası" },
  { code: "0099", name: "ING Bank" },
  { code: "0103", name: "Fibabanka" },
  { code: "0111", name: "QNB Bank" },
  { code: "0123", name: "HSBC Bank" },
  { code: "0134", name: "DenizBank" },
  { code: "0146", name: "Odeabank" },
  { code: "0203", name: "Albaraka Türk Katılım Bankası" },
  { code: "0205", name: "Kuveyt Türk Katılım Bankası" },
  { code: "0206", name: "Türkiye Finans Katılım Bankası" },
  { code: "0209", name: "Ziraat Katılım Bankası" },
  { code: "0210", name: "Vakıf Katılım Bankası" },
];

/** Sandbox receiving accounts: bank code, how many accounts, and which of them take FAST. */
const SANDBOX_ACCOUNT_PLAN: ReadonlyArray<{ code: string; count: number; fast: readonly number[] }> = [
  { code: "0010", count: 2, fast: [1] },
  { code: "0012", count: 1, fast: [] },
  { code: "0015", count: 1, fast: [] },
  { code: "0046", count: 2, fast: [1] },
  { code: "0062", count: 2, fast: [1] },
  { code: "0064", count: 2, fast: [1] },
  { code: "0067", count: 1, fast: [] },
  { code: "0111", count: 1, fast: [1] },
];

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url").slice(0, 22);
}

/** The id of a seeded bank: the same on every install. */
export function seedBankId(code: string): string {
  return `bnk_${digest(`bank:${code}`)}`;
}

/** The id of a seeded receiving account: the same on every install. */
export function seedAccountId(iban: string): string {
  return `acc_${digest(`account:${iban}`)}`;
}

export function bankLogoPath(code: string): string {
  return `/assets/banks/${code}.svg`;
}

/**
 * bban = 5-digit bank code + reserved "0" + 16-digit account number. The account number
 * starts with 5, then the bank code, then a sequence, which keeps the sandbox accounts
 * apart from the payout sandbox's recipient IBANs (TR..0006200000000000000001 and so on).
 */
export function sandboxIban(code: string, sequence: number): string {
  const bankCode = code.padStart(5, "0");
  const accountNumber = `5${bankCode}${String(sequence).padStart(10, "0")}`;
  const iban = composeIBAN({ countryCode: "TR", bban: `${bankCode}0${accountNumber}` });
  if (!iban) throw new Error(`cannot compose a sandbox IBAN for bank ${code}`);
  return iban;
}

export interface SeedBank {
  id: string;
  name: string;
  code: string;
  logoUrl: string;
  active: boolean;
  minAmount: number;
  maxAmount: number;
}

export interface SeedAccount {
  id: string;
  bankId: string;
  accountName: string;
  iban: string;
  active: boolean;
  fastEnabled: boolean;
}

export const SEED_BANKS: readonly SeedBank[] = SEED_BANK_LIST.map(({ code, name }) => ({
  id: seedBankId(code),
  name,
  code,
  logoUrl: bankLogoPath(code),
  active: true,
  ...SEED_BANK_LIMITS,
}));

export const SEED_ACCOUNTS: readonly SeedAccount[] = SANDBOX_ACCOUNT_PLAN.flatMap(({ code, count, fast }) =>
  Array.from({ length: count }, (_, index) => {
    const sequence = index + 1;
    const iban = sandboxIban(code, sequence);
    return {
      id: seedAccountId(iban),
      bankId: seedBankId(code),
      accountName: SANDBOX_ACCOUNT_NAME,
      iban,
      active: true,
      fastEnabled: fast.includes(sequence),
    };
  }),
);

/**
 * Writes the banks and FAST settings into empty catalog tables. Run by the seed migration,
 * inside the migration's own transaction (a nested one would be a savepoint, which MySQL
 * loses to the implicit commit of the DDL migrated in the same batch).
 */
export async function seedCatalog(db: Knex, nowMs: number): Promise<void> {
  const times = { created_at: nowMs, updated_at: nowMs };
  await db("banks").insert(
    SEED_BANKS.map((b) => ({
      id: b.id,
      name: b.name,
      code: b.code,
      logo_url: b.logoUrl,
      active: b.active,
      min_amount: b.minAmount,
      max_amount: b.maxAmount,
      ...times,
    })),
  );
  await db("fast_settings").where({ id: 1 }).update({
    enabled: SEED_FAST_SETTINGS.enabled,
    min_amount: SEED_FAST_SETTINGS.minAmount,
    max_amount: SEED_FAST_SETTINGS.maxAmount,
    updated_at: nowMs,
  });
}

/**
 * Adds the sandbox receiving accounts that are missing, marked sandbox; accounts already
 * there (by id or IBAN), whatever an operator made of them since, are left alone. Returns
 * the ids added. Safe to run on every start and from several processes at once. When it adds
 * any, a CatalogChanged event is recorded in the same transaction.
 */
export async function seedSandboxAccounts(db: Knex, nowMs: number): Promise<string[]> {
  return db.transaction(async (trx) => {
    const added = await insertMissingSandboxAccounts(trx, nowMs);
    // Recorded with the accounts, whoever seeds (the RPC, or the all-in-one at start).
    if (added.length > 0) await recordCatalogChanged(trx, { now: () => new Date(nowMs) }, "sandbox_accounts_seeded");
    return added;
  });
}

async function insertMissingSandboxAccounts(db: Knex.Transaction, nowMs: number): Promise<string[]> {
  const existing = await db("receiving_accounts")
    .whereIn(
      "iban",
      SEED_ACCOUNTS.map((a) => a.iban),
    )
    .pluck("iban");
  const have = new Set<string>(existing as string[]);
  const missing = SEED_ACCOUNTS.filter((a) => !have.has(a.iban));
  if (missing.length === 0) return [];
  await db("receiving_accounts")
    .insert(
      missing.map((a) => ({
        id: a.id,
        bank_id: a.bankId,
        account_name: a.accountName,
        iban: a.iban,
        active: a.active,
        fast_enabled: a.fastEnabled,
        sandbox: true,
        created_at: nowMs,
        updated_at: nowMs,
      })),
    )
    .onConflict("iban")
    .ignore();
  return missing.map((a) => a.id);
}
