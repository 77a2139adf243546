import { Code } from "@connectrpc/connect";
import type { GetDepositTermsResponse } from "@payments/contracts/bank-catalog";
import { dropOnCatalogChange, errorInfo, EventCache, formatMajor, majorUnits, serviceError, validationError, type BaseContext, type Subscription } from "@payments/kit";
import type { DepositContext } from "./context.js";

/** The bank-catalog's answer for one deposit, with amounts as numbers. */
export interface DepositTerms {
  bankId: string;
  bankName: string;
  minAmount: number;
  maxAmount: number;
  accounts: Array<{ id: string; bankId: string; bankName: string; accountName: string; iban: string }>;
}

/** The catalog's answer for one (merchant, bank, kind): the terms, or that the bank is not available to the merchant. */
export type DepositTermsAnswer = { terms: DepositTerms } | { notAvailable: true };

/** Merchants × banks asked for whose answers are kept; past it the least recently used goes. */
const MAX_TERMS = 20_000;

/**
 * GetDepositTerms answers by (merchant, bank, kind), "not available" included, kept until the
 * bank catalog announces a change (CatalogChanged, merchant limits included) or `ttlMs`
 * passes (the bound when an event is lost); 0 turns it off. A deposit then makes no call to
 * the catalog while nothing in it changes.
 */
export function createDepositTermsCache(base: Pick<BaseContext, "clock" | "logger">, ttlMs: number): EventCache<DepositTermsAnswer> {
  return new EventCache<DepositTermsAnswer>({ clock: base.clock, ttlMs, maxEntries: MAX_TERMS, name: "deposit-terms", logger: base.logger });
}

/** Drops every kept answer when the catalog changes. */
export function watchCatalogChanges(ctx: Pick<DepositContext, "bus" | "depositTermsCache">): Promise<Subscription> {
  return dropOnCatalogChange(ctx.depositTermsCache, ctx.bus);
}

async function askBankCatalog(ctx: DepositContext, merchantId: string, bankId: string, sandbox: boolean): Promise<DepositTermsAnswer> {
  let res: GetDepositTermsResponse;
  try {
    res = await ctx.bankCatalog.getDepositTerms({ merchantId, bankId, sandbox });
  } catch (err) {
    if (errorInfo(err).reason === "BANK_NOT_AVAILABLE") return { notAvailable: true };
    throw err;
  }
  return {
    terms: {
      bankId: res.bankId,
      bankName: res.bankName,
      minAmount: Number(res.minAmount),
      maxAmount: Number(res.maxAmount),
      accounts: res.accounts.map((a) => ({ id: a.id, bankId: a.bankId, bankName: a.bankName, accountName: a.accountName, iban: a.iban })),
    },
  };
}

/** Limits and candidate accounts from the bank catalog (through the cache); a bank the merchant may not use is the caller's mistake. */
export async function fetchDepositTerms(ctx: DepositContext, merchantId: string, bankId: string, sandbox: boolean): Promise<DepositTerms> {
  const answer = await ctx.depositTermsCache.get(JSON.stringify([merchantId, sandbox, bankId]), () => askBankCatalog(ctx, merchantId, bankId, sandbox));
  if ("notAvailable" in answer) {
    throw validationError(
      "bank_id",
      bankId === ""
        ? "bank_id: no bank is available to this merchant for deposits"
        : `bank_id: ${JSON.stringify(bankId)} is not one of this merchant's available banks (use a bank id or FAST from the bank list)`,
    );
  }
  return answer.terms;
}

/** AMOUNT_OUT_OF_RANGE unless amount is within the terms; the message states the range and currency. */
export function checkAmountInRange(amount: number, currency: string, terms: DepositTerms): void {
  if (amount >= terms.minAmount && amount <= terms.maxAmount) return;
  const where = terms.bankName === "" ? "this merchant's banks" : terms.bankName;
  throw serviceError(
    Code.InvalidArgument,
    "AMOUNT_OUT_OF_RANGE",
    // Merchants send kuruş and read lira: both, so neither has to convert.
    `amount ${amount} (${formatMajor(amount, currency)}) is outside the limits of ${where}: ${terms.minAmount} to ${terms.maxAmount} (${majorUnits(terms.minAmount, currency)} to ${formatMajor(terms.maxAmount, currency)}), in the smallest currency unit`,
    {
      field: "amount",
      details: { minAmount: String(terms.minAmount), maxAmount: String(terms.maxAmount), currency, ...(terms.bankId ? { bankCode: terms.bankId } : {}) },
    },
  );
}

/**
 * A deposit is taken only when its customer can be told where to pay: no receiving account
 * of the merchant's kind (sandbox or live) for this bank is BANK_UNAVAILABLE, before
 * anything is stored. A fresh install has no live account until an operator adds one.
 */
export function requireReceivingAccount(terms: DepositTerms, sandbox: boolean): void {
  if (terms.accounts.length > 0) return;
  throw serviceError(Code.FailedPrecondition, "BANK_UNAVAILABLE", "no receiving account is available for this bank", {
    field: "bank_id",
    details: { ...(terms.bankId ? { bankCode: terms.bankId } : {}), accountKind: sandbox ? "sandbox" : "live" },
  });
}
