import { Code } from "@connectrpc/connect";
import type { Merchant } from "@payments/contracts/merchant";
import { errorInfo, validationError } from "@payments/kit";
import type { PayoutContext } from "./context.js";

/**
 * The merchant a withdrawal or an adjustment is for, from the merchant service. One it does
 * not know is VALIDATION_ERROR on merchant_id: an operator's typo must not open a balance,
 * and a withdrawal needs its merchant's kind (sandbox or live) to know where it goes.
 */
export async function requireMerchant(ctx: PayoutContext, merchantId: string): Promise<Merchant> {
  const { merchant } = await ctx.merchants.getMerchant({ merchantId }).catch((err: unknown) => {
    if (errorInfo(err).code === Code.NotFound) throw validationError("merchant_id", `merchant_id: merchant ${JSON.stringify(merchantId)} does not exist`);
    throw err;
  });
  if (!merchant) throw new Error(`the merchant service answered without merchant ${merchantId}`);
  return merchant;
}
