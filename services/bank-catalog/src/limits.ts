import { isValidIBAN } from "ibantools";

/**
 * The bank catalog's rules, free of storage and transport: which banks (and whether FAST)
 * a merchant sees and with which limits, the terms of a deposit through one of them, what
 * an amount may be, and what an IBAN is.
 * Amounts are integers in the smallest currency unit (kuruş); within the service they are
 * plain numbers, since every valid amount is at most Number.MAX_SAFE_INTEGER.
 */

/** The `_id` and `code` of the FAST option, and the bank_id of a merchant's FAST override. */
export const FAST_ID = "FAST";

export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

/** A positive integer no greater than Number.MAX_SAFE_INTEGER. */
export function isValidAmount(value: bigint | number): boolean {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 1;
  return value >= 1n && value <= BigInt(MAX_AMOUNT);
}

export function isValidRange(minAmount: number, maxAmount: number): boolean {
  return minAmount <= maxAmount;
}

export interface Limits {
  minAmount: number;
  maxAmount: number;
}

export interface CatalogBank extends Limits {
  id: string;
  name: string;
  code: string;
  logoUrl: string;
  active: boolean;
}

export interface FastConfig extends Limits {
  enabled: boolean;
}

/** A merchant's override for one bank or for FAST; null/undefined means "as the default". */
export interface LimitOverride {
  bankId: string;
  enabled?: boolean | null;
  minAmount?: number | null;
  maxAmount?: number | null;
}

export interface AvailableBankView extends Limits {
  id: string;
  name: string;
  code: string;
  logoUrl: string;
}

export interface AvailableCatalog {
  /** Ordered by name, Turkish collation. */
  banks: AvailableBankView[];
  /** Present only when FAST is available to this merchant; there is never more than one. */
  fast?: Limits;
}

export interface AvailabilityInput {
  banks: readonly CatalogBank[];
  fast: FastConfig;
  /** This merchant's overrides only. */
  overrides: readonly LimitOverride[];
  /** Whether at least one active, FAST-enabled receiving account exists. */
  hasFastAccount: boolean;
  /** `banks` are already in compareBankNames order (a snapshot sorted them once): keep it. */
  sorted?: boolean;
}

/** Each of min and max independently: the override when set, else the default. */
export function applyOverride(defaults: Limits, override: LimitOverride | undefined): Limits {
  return {
    minAmount: override?.minAmount ?? defaults.minAmount,
    maxAmount: override?.maxAmount ?? defaults.maxAmount,
  };
}

const turkish = new Intl.Collator("tr", { sensitivity: "variant", numeric: true });

/** Turkish order: "Şekerbank" after "QNB Bank", "İş" after "ING". Ties fall back to code, then id, so the order is stable. */
export function compareBankNames(a: { name: string; code: string; id: string }, b: { name: string; code: string; id: string }): number {
  return turkish.compare(a.name, b.name) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * What a merchant sees. A bank is listed when it is active and the merchant's override
 * does not disable it. FAST is offered when the FAST settings are enabled, the merchant's
 * FAST override does not disable it, and some active FAST-enabled account can receive the
 * money. An entry whose combined limits leave no valid amount (min above max, possible
 * when a default changes after an override was set) is left out: no deposit could pass.
 */
export function resolveAvailableCatalog(input: AvailabilityInput): AvailableCatalog {
  const overrides = new Map(input.overrides.map((o) => [o.bankId, o]));
  const banks: AvailableBankView[] = [];
  for (const bank of input.banks) {
    if (!bank.active) continue;
    const override = overrides.get(bank.id);
    if (override?.enabled === false) continue;
    const limits = applyOverride(bank, override);
    if (!isValidRange(limits.minAmount, limits.maxAmount)) continue;
    banks.push({ id: bank.id, name: bank.name, code: bank.code, logoUrl: bank.logoUrl, ...limits });
  }
  if (!input.sorted) banks.sort(compareBankNames);

  const fastOverride = overrides.get(FAST_ID);
  if (!input.fast.enabled || fastOverride?.enabled === false || !input.hasFastAccount) return { banks };
  const fast = applyOverride(input.fast, fastOverride);
  if (!isValidRange(fast.minAmount, fast.maxAmount)) return { banks };
  return { banks, fast };
}

/** What the deposit rules need to know of a receiving account. */
export interface CatalogAccount {
  id: string;
  bankId: string;
  active: boolean;
  fastEnabled: boolean;
}

export interface DepositTermsInput<A extends CatalogAccount> extends Omit<AvailabilityInput, "hasFastAccount"> {
  /** The receiving-account pool; inactive accounts are ignored, and FAST's availability follows it. */
  accounts: readonly A[];
}

export interface DepositTerms<A extends CatalogAccount> extends Limits {
  /** The bank id, FAST_ID, or "" when no bank was asked for. */
  bankId: string;
  /** The bank's name, FAST_ID, or "". */
  bankName: string;
  /** The active accounts that can receive the deposit, ordered by id. May be empty. */
  accounts: A[];
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The limits and receiving accounts of a deposit a merchant makes through `bankId` (a bank
 * id, FAST_ID, or "" for no particular bank), or undefined when that is not available to
 * the merchant. Availability and limits are exactly those of resolveAvailableCatalog, so a
 * deposit can be made through precisely what ListAvailableBanks shows.
 *
 * - A bank: its limits for this merchant and its own active accounts.
 * - FAST: the FAST limits for this merchant and every active FAST-enabled account, of any bank.
 * - No bank: the widest limits over everything available (smallest minimum, largest
 *   maximum, possibly of different entries) and every active account; undefined when
 *   nothing is available.
 */
export function resolveDepositTerms<A extends CatalogAccount>(input: DepositTermsInput<A>, bankId: string): DepositTerms<A> | undefined {
  const active = input.accounts.filter((a) => a.active);
  const catalog = resolveAvailableCatalog({
    banks: input.banks,
    fast: input.fast,
    overrides: input.overrides,
    hasFastAccount: active.some((a) => a.fastEnabled),
    sorted: input.sorted,
  });

  if (bankId === "") {
    const entries: Limits[] = catalog.fast ? [...catalog.banks, catalog.fast] : catalog.banks;
    const [first, ...rest] = entries;
    if (!first) return undefined;
    const widest = rest.reduce<Limits>(
      (acc, e) => ({ minAmount: Math.min(acc.minAmount, e.minAmount), maxAmount: Math.max(acc.maxAmount, e.maxAmount) }),
      { minAmount: first.minAmount, maxAmount: first.maxAmount },
    );
    // Accounts the merchant could be sent to through a bank it may use, or through FAST.
    const usable = new Set(catalog.banks.map((b) => b.id));
    const accounts = active.filter((a) => usable.has(a.bankId) || (catalog.fast !== undefined && a.fastEnabled));
    return { bankId: "", bankName: "", ...widest, accounts: accounts.sort(byId) };
  }

  if (bankId === FAST_ID) {
    if (!catalog.fast) return undefined;
    const { minAmount, maxAmount } = catalog.fast;
    return { bankId: FAST_ID, bankName: FAST_ID, minAmount, maxAmount, accounts: active.filter((a) => a.fastEnabled).sort(byId) };
  }

  const bank = catalog.banks.find((b) => b.id === bankId);
  if (!bank) return undefined;
  return {
    bankId: bank.id,
    bankName: bank.name,
    minAmount: bank.minAmount,
    maxAmount: bank.maxAmount,
    accounts: active.filter((a) => a.bankId === bank.id).sort(byId),
  };
}

export { normalizeIban } from "@payments/kit";

/** Why a normalised IBAN is not a valid Turkish IBAN, or undefined when it is one. */
export function turkishIbanProblem(iban: string): string | undefined {
  if (iban === "") return "is required";
  if (!iban.startsWith("TR")) return "must be a Turkish IBAN starting with TR";
  if (iban.length !== 26) return "must be 26 characters";
  if (!isValidIBAN(iban)) return "is not a valid IBAN (format or checksum)";
  return undefined;
}

/** The 5-digit bank code inside a Turkish IBAN (characters 5..9). */
export function ibanBankCode(iban: string): string {
  return iban.slice(4, 9);
}

/**
 * Whether a Turkish IBAN belongs to a bank with this EFT code. Codes that are not 1..5
 * digits (banks an operator added for testing) match any IBAN.
 */
export function ibanMatchesBankCode(iban: string, code: string): boolean {
  if (!/^\d{1,5}$/.test(code)) return true;
  return ibanBankCode(iban) === code.padStart(5, "0");
}
