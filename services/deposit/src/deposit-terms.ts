import { Code } from "@connectrpc/connect";
import type { GetDepositTermsResponse } from "@payments/contracts/bank-catalog";
import { errorInfo, serviceError, validationError } from "@payments/kit";
import type { DepositContext } from "./context.js";

/** The bank-catalog's answer for one deposit, with amounts as numbers. */
export interface DepositTerms {
  bankId: string;
  bankName: string;
  minAmount: number;
  maxAmount: number;
  accounts: Array<{ id: string; bankId: string; bankName: string; accountName: string; iban: string }>;
}

/** Limits and candidate accounts from the bank catalog; a bank the merchant may not use is the caller's mistake. */
export async function fetchDepositTerms(ctx: DepositContext, merchantId: string, bankId: string, sandbox: boolean): Promise<DepositTerms> {
  let res: GetDepositTermsResponse;
  try {
    res = await ctx.bankCatalog.getDepositTerms({ merchantId, bankId, sandbox });
  } catch (err) {
    const info = errorInfo(err);
    if (info.reason === "BANK_NOT_AVAILABLE") {
      throw validationError(
        "bank_id",
        bankId === ""
          ? "bank_id: no bank is available to this merchant for deposits"
          : `bank_id: ${JSON.stringify(bankId)} is not one of this merchant's available banks (use a bank id or FAST from the bank list)`,
      );
    }
    throw err;
  }
  return {
    bankId: res.bankId,
    bankName: res.bankName,
    minAmount: Number(res.minAmount),
    maxAmount: Number(res.maxAmount),
    accounts: res.accounts.map((a) => ({ id: a.id, bankId: a.bankId, bankName: a.bankName, accountName: a.accountName, iban: a.iban })),
  };
}

/** AMOUNT_OUT_OF_RANGE unless amount is within the terms; the message states the range and currency. */
export function checkAmountInRange(amount: number, currency: string, terms: DepositTerms): void {
  if (amount >= terms.minAmount && amount <= terms.maxAmount) return;
  const where = terms.bankName === "" ? "this merchant's banks" : terms.bankName;
  throw serviceError(
    Code.InvalidArgument,
    "AMOUNT_OUT_OF_RANGE",
    `amount ${amount} is outside the limits of ${where}: ${terms.minAmount} to ${terms.maxAmount} ${currency} (in the smallest currency unit)`,
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
