import { Code } from "@connectrpc/connect";
import { LatePaymentRule, MerchantStatus, OverpaymentRule, UnderpaymentRule, type Merchant } from "@payments/contracts/merchant";
import { MerchantCache, merchantNotFoundAsValidation, serviceError, type BaseContext } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { DEFAULT_RULES, type PaidAmountRules } from "./paid-amount-rules.js";

/** The facts about a merchant a deposit needs, asked of the merchant service. */
export interface MerchantFacts {
  id: string;
  active: boolean;
  sandbox: boolean;
  /** What an under-, over- or late payment does (src/paid-amount-rules.ts). */
  rules: PaidAmountRules;
  /** Whom the customer pays, as the checkout page names it (the merchant's name when it set none). */
  displayName: string;
}

/** The merchant's rules; a value this service does not know reads as the default, which holds the money for review. */
export function rulesOf(merchant: Pick<Merchant, "underpayment" | "overpayment" | "latePayment">): PaidAmountRules {
  return {
    underpayment: merchant.underpayment === UnderpaymentRule.COMPLETE ? "complete" : DEFAULT_RULES.underpayment,
    overpayment: merchant.overpayment === OverpaymentRule.REVIEW ? "review" : DEFAULT_RULES.overpayment,
    latePayment: merchant.latePayment === LatePaymentRule.COMPLETE ? "complete" : merchant.latePayment === LatePaymentRule.RETURN ? "return" : DEFAULT_RULES.latePayment,
  };
}

/** Merchant facts by merchant id, dropped on MerchantChanged or after `ttlMs` (kit's MerchantCache); 0 turns it off. */
export function createMerchantCache(base: Pick<BaseContext, "clock" | "logger">, ttlMs: number): MerchantCache<MerchantFacts> {
  return new MerchantCache<MerchantFacts>(base, ttlMs, "deposit-merchants");
}

async function askMerchantService(ctx: DepositContext, merchantId: string): Promise<MerchantFacts> {
  try {
    const { merchant } = await ctx.merchants.getMerchant({ merchantId });
    if (!merchant) throw new Error("GetMerchant answered without a merchant");
    return {
      id: merchant.id,
      active: merchant.status === MerchantStatus.ACTIVE,
      sandbox: merchant.sandbox,
      rules: rulesOf(merchant),
      // A merchant service older than display names answers none: its name is what it would show.
      displayName: merchant.displayName || merchant.name,
    };
  } catch (err) {
    throw merchantNotFoundAsValidation(err, merchantId);
  }
}

/**
 * The merchant's facts, from the cache unless `fresh`. An unknown merchant is a
 * VALIDATION_ERROR on merchant_id and is not remembered.
 */
export function lookupMerchant(ctx: DepositContext, merchantId: string, options: { fresh?: boolean } = {}): Promise<MerchantFacts> {
  if (options.fresh) return askMerchantService(ctx, merchantId);
  return ctx.merchantCache.get(merchantId, () => askMerchantService(ctx, merchantId));
}

/** Deposits are taken for active merchants only (the gateway already refuses disabled ones; internal callers may not). */
export function requireActive(merchant: MerchantFacts): void {
  if (!merchant.active) throw serviceError(Code.FailedPrecondition, "MERCHANT_DISABLED", `merchant ${merchant.id} is disabled`);
}
