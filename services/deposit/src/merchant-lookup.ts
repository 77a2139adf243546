import { Code } from "@connectrpc/connect";
import { MerchantStatus } from "@payments/contracts/merchant";
import { errorInfo, serviceError, validationError } from "@payments/kit";
import type { DepositContext } from "./context.js";

/** The facts about a merchant a deposit needs, asked of the merchant service. */
export interface MerchantFacts {
  id: string;
  active: boolean;
  sandbox: boolean;
}

export async function lookupMerchant(ctx: DepositContext, merchantId: string): Promise<MerchantFacts> {
  try {
    const { merchant } = await ctx.merchants.getMerchant({ merchantId });
    if (!merchant) throw new Error("GetMerchant answered without a merchant");
    return { id: merchant.id, active: merchant.status === MerchantStatus.ACTIVE, sandbox: merchant.sandbox };
  } catch (err) {
    if (errorInfo(err).code === Code.NotFound) throw validationError("merchant_id", `merchant_id: merchant ${JSON.stringify(merchantId)} does not exist`);
    throw err;
  }
}

/** Deposits are taken for active merchants only (the gateway already refuses disabled ones; internal callers may not). */
export function requireActive(merchant: MerchantFacts): void {
  if (!merchant.active) throw serviceError(Code.FailedPrecondition, "MERCHANT_DISABLED", `merchant ${merchant.id} is disabled`);
}
