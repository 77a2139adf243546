import { turkishIbanBankCode, turkishIbanProblem as ibanProblem, type TurkishIbanProblem } from "@payments/kit";

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
  /** Present only when a FAST deposit would be accepted; there is never more than one. */
  fast?: Limits;
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

/** What the deposit rules need to know of a receiving account. */
export interface CatalogAccount {
  id: string;
  bankId: string;
  active: boolean;
  fastEnabled: boolean;
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The receiving accounts one kind of merchant (sandbox or live) can be sent to, indexed
 * once so that each request costs a look-up per bank, not a pass over every account.
 */
export interface AccountPool<A extends CatalogAccount> {
  /** The active accounts, ordered by id. */
  accounts: readonly A[];
  /** The active accounts of each bank, ordered by id; a bank without one is absent. */
  byBank: ReadonlyMap<string, readonly A[]>;
  /** The active FAST-enabled accounts, of any bank, ordered by id. */
  fast: readonly A[];
}

/** The pool of these accounts: inactive ones are dropped (they can take no deposit). */
export function accountPool<A extends CatalogAccount>(accounts: readonly A[]): AccountPool<A> {
  const active = accounts.filter((a) => a.active).sort(byId);
  const byBank = new Map<string, A[]>();
  for (const account of active) {
    const list = byBank.get(account.bankId);
    if (list) list.push(account);
    else byBank.set(account.bankId, [account]);
  }
  return { accounts: active, byBank, fast: active.filter((a) => a.fastEnabled) };
}

export interface CatalogInput<A extends CatalogAccount> {
  banks: readonly CatalogBank[];
  fast: FastConfig;
  /** This merchant's overrides only. */
  overrides: readonly LimitOverride[];
  /** The accounts of the merchant's kind: sandbox and live never mix. */
  pool: AccountPool<A>;
  /** `banks` are already in compareBankNames order (a snapshot sorted them once): keep it. */
  sorted?: boolean;
}

/** A bank the merchant may name as bankCode, with its limits and the accounts that can receive the money. */
export interface BankOption<A extends CatalogAccount> extends AvailableBankView {
  /** Ordered by id; empty when the bank has no active account of the merchant's kind. */
  accounts: readonly A[];
}

/** FAST as the merchant may name it. */
export interface FastOption<A extends CatalogAccount> extends Limits {
  /** Every active FAST-enabled account of the merchant's kind, of any bank, ordered by id; may be empty. */
  accounts: readonly A[];
}

export interface DepositOptions<A extends CatalogAccount> {
  /** Ordered by name, Turkish collation. */
  banks: BankOption<A>[];
  fast?: FastOption<A>;
}

/**
 * What a merchant may name as a deposit's bankCode, with limits and candidate accounts: the
 * one decision behind both ListAvailableBanks (what is shown) and GetDepositTerms (what a
 * deposit is made with), so the two cannot drift apart.
 *
 * A bank is an option when it is active, the merchant's override does not disable it, and
 * its limits (the override's, else the bank's, each of min and max on its own) leave some
 * amount (min above max is possible when a default changes after an override was set).
 * FAST is an option when the FAST settings are enabled, the merchant's FAST override does
 * not disable it, and its limits leave some amount. An option may have no account: a
 * deposit through it is then refused as BANK_UNAVAILABLE (see takesDeposits).
 */
export function resolveDepositOptions<A extends CatalogAccount>(input: CatalogInput<A>): DepositOptions<A> {
  const overrides = new Map(input.overrides.map((o) => [o.bankId, o]));
  const banks: BankOption<A>[] = [];
  for (const bank of input.banks) {
    if (!bank.active) continue;
    const override = overrides.get(bank.id);
    if (override?.enabled === false) continue;
    const limits = applyOverride(bank, override);
    if (!isValidRange(limits.minAmount, limits.maxAmount)) continue;
    banks.push({ id: bank.id, name: bank.name, code: bank.code, logoUrl: bank.logoUrl, ...limits, accounts: input.pool.byBank.get(bank.id) ?? [] });
  }
  if (!input.sorted) banks.sort(compareBankNames);

  const fastOverride = overrides.get(FAST_ID);
  if (!input.fast.enabled || fastOverride?.enabled === false) return { banks };
  const fast = applyOverride(input.fast, fastOverride);
  if (!isValidRange(fast.minAmount, fast.maxAmount)) return { banks };
  return { banks, fast: { ...fast, accounts: input.pool.fast } };
}

/**
 * Whether a deposit through this option, for an amount within its limits, is accepted: it
 * needs an account to tell the customer to pay into (the deposit service refuses one
 * without as BANK_UNAVAILABLE).
 */
export function takesDeposits(option: { accounts: readonly unknown[] }): boolean {
  return option.accounts.length > 0;
}

/**
 * What a merchant sees: the options through which a deposit would be accepted now, and
 * nothing else. A listed bank or FAST therefore never answers BANK_UNAVAILABLE (bar a race
 * with an operator's change); one without an account of the merchant's kind is left out.
 */
export function resolveAvailableCatalog<A extends CatalogAccount>(input: CatalogInput<A>): AvailableCatalog {
  const options = resolveDepositOptions(input);
  const banks = options.banks.filter(takesDeposits).map(({ id, name, code, logoUrl, minAmount, maxAmount }) => ({ id, name, code, logoUrl, minAmount, maxAmount }));
  if (!options.fast || !takesDeposits(options.fast)) return { banks };
  return { banks, fast: { minAmount: options.fast.minAmount, maxAmount: options.fast.maxAmount } };
}

export interface DepositTerms<A extends CatalogAccount> extends Limits {
  /** The bank id, FAST_ID, or "" when no bank was asked for. */
  bankId: string;
  /** The bank's name, FAST_ID, or "". */
  bankName: string;
  /** The active accounts that can receive the deposit, ordered by id. May be empty. */
  accounts: A[];
}

function widest(entries: readonly [Limits, ...Limits[]]): Limits {
  const [first, ...rest] = entries;
  return rest.reduce<Limits>(
    (acc, e) => ({ minAmount: Math.min(acc.minAmount, e.minAmount), maxAmount: Math.max(acc.maxAmount, e.maxAmount) }),
    { minAmount: first.minAmount, maxAmount: first.maxAmount },
  );
}

/**
 * The limits and receiving accounts of a deposit a merchant makes through `bankId` (a bank
 * id, FAST_ID, or "" for no particular bank), or undefined when that is not an option for
 * the merchant. Built on resolveDepositOptions, like resolveAvailableCatalog: terms with
 * accounts are exactly what the merchant is shown.
 *
 * - A bank: its limits for this merchant and its own active accounts (maybe none).
 * - FAST: the FAST limits for this merchant and every active FAST-enabled account, of any
 *   bank (maybe none).
 * - No bank: the widest limits (smallest minimum, largest maximum, possibly of different
 *   entries) over what the merchant is shown, and the accounts of those entries. When
 *   nothing is shown but something is an option, its widest limits and no account (the
 *   deposit is BANK_UNAVAILABLE); undefined when nothing is an option at all.
 */
export function resolveDepositTerms<A extends CatalogAccount>(input: CatalogInput<A>, bankId: string): DepositTerms<A> | undefined {
  const options = resolveDepositOptions(input);

  if (bankId === "") {
    const all: Array<BankOption<A> | FastOption<A>> = options.fast ? [...options.banks, options.fast] : [...options.banks];
    const shown = all.filter(takesDeposits);
    const [first, ...rest] = shown.length > 0 ? shown : all;
    if (!first) return undefined;
    // An account can be both a shown bank's and FAST's: listed once.
    const accounts = new Map<string, A>();
    for (const option of shown) for (const account of option.accounts) accounts.set(account.id, account);
    return { bankId: "", bankName: "", ...widest([first, ...rest]), accounts: [...accounts.values()].sort(byId) };
  }

  if (bankId === FAST_ID) {
    if (!options.fast) return undefined;
    const { minAmount, maxAmount, accounts } = options.fast;
    return { bankId: FAST_ID, bankName: FAST_ID, minAmount, maxAmount, accounts: [...accounts] };
  }

  const bank = options.banks.find((b) => b.id === bankId);
  if (!bank) return undefined;
  return { bankId: bank.id, bankName: bank.name, minAmount: bank.minAmount, maxAmount: bank.maxAmount, accounts: [...bank.accounts] };
}

export { normalizeIban } from "@payments/kit";

/** The catalog's words for what is wrong with an IBAN (the rule itself is kit's turkishIbanProblem). */
const IBAN_PROBLEMS: Record<TurkishIbanProblem, string> = {
  empty: "is required",
  country: "must be a Turkish IBAN starting with TR",
  length: "must be 26 characters",
  characters: "is not a valid IBAN (format or checksum)",
  checksum: "is not a valid IBAN (format or checksum)",
};

/** Why a normalised IBAN is not a valid Turkish IBAN, or undefined when it is one. */
export function turkishIbanProblem(iban: string): string | undefined {
  const problem = ibanProblem(iban);
  return problem && IBAN_PROBLEMS[problem];
}

/** The 5-digit bank code inside a Turkish IBAN (characters 5..9). */
export const ibanBankCode = turkishIbanBankCode;

/**
 * Whether a Turkish IBAN belongs to a bank with this EFT code. Codes that are not 1..5
 * digits (banks an operator added for testing) match any IBAN.
 */
export function ibanMatchesBankCode(iban: string, code: string): boolean {
  if (!/^\d{1,5}$/.test(code)) return true;
  return turkishIbanBankCode(iban) === code.padStart(5, "0");
}
