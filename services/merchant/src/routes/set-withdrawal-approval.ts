import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { changeMerchant } from "../store.js";

/** Kuruş, within what a number holds exactly (90 trillion TRY: far above any withdrawal). */
const threshold = z
  .bigint()
  .refine((v) => v > 0n, "must be more than 0 kuruş (leave it unset to clear it)")
  .refine((v) => v <= BigInt(Number.MAX_SAFE_INTEGER), `must be at most ${Number.MAX_SAFE_INTEGER} kuruş`)
  .transform(Number)
  .optional();

const setWithdrawalApprovalInput = z.object({ merchantId: merchantIdInput, threshold });

/**
 * Sets the amount above which a withdrawal the merchant's own users create waits for a
 * second user of the merchant (four-eyes), or clears it (no threshold given). The change and
 * its MerchantChanged event (`withdrawal_approval`) are one transaction.
 */
export function setWithdrawalApproval(ctx: MerchantContext): Rpc<typeof MerchantService, "setWithdrawalApproval"> {
  return {
    async setWithdrawalApproval(req) {
      const input = parseRequest(setWithdrawalApprovalInput, req);
      const merchant = await changeMerchant(ctx, input.merchantId, "withdrawal_approval", { withdrawal_approval_threshold: input.threshold ?? null });
      return { merchant };
    },
  };
}
