import type { Merchant } from "@payments/contracts/merchant";
import { MerchantCache, merchantNotFoundAsValidation, type BaseContext } from "@payments/kit";
import type { PayoutContext } from "./context.js";

/**
 * GetMerchant answers by merchant id, dropped on MerchantChanged or after `ttlMs` (kit's
 * MerchantCache); 0 turns it off. Withdrawals, adjustments and the deposit-credit check share it.
 */
export function createMerchantCache(base: Pick<BaseContext, "clock" | "logger">, ttlMs: number): MerchantCache<Merchant> {
  return new MerchantCache<Merchant>(base, ttlMs, "payout-merchants");
}

/** The merchant as the merchant service describes it, through the cache; its errors as they came (NOT_FOUND included), and never kept. */
export function merchantOf(ctx: PayoutContext, merchantId: string, options: { fresh?: boolean } = {}): Promise<Merchant> {
  const ask = async () => {
    const { merchant } = await ctx.merchants.getMerchant({ merchantId });
    if (!merchant) throw new Error(`the merchant service answered without merchant ${merchantId}`);
    return merchant;
  };
  return options.fresh ? ask() : ctx.merchantCache.get(merchantId, ask);
}

/**
 * The merchant a withdrawal or an adjustment is for, from the merchant service (through the
 * cache unless `fresh`). One it does not know is VALIDATION_ERROR on merchant_id: an
 * operator's typo must not open a balance, and a withdrawal needs its merchant's kind
 * (sandbox or live) to know where it goes. A withdrawal's insert checks the kind it read
 * against the merchant's mode fence (kit src/mode-fence.ts), which asks afresh when the
 * cached kind may be stale; and a merchant switches kinds only with every balance at zero,
 * so a withdrawal racing the switch has nothing to hold either.
 */
export async function requireMerchant(ctx: PayoutContext, merchantId: string, options: { fresh?: boolean } = {}): Promise<Merchant> {
  return merchantOf(ctx, merchantId, options).catch((err: unknown) => {
    throw merchantNotFoundAsValidation(err, merchantId);
  });
}
