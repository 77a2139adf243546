import { MerchantStatus, type MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput, type MerchantStatusName } from "../merchant.js";
import { changeMerchant } from "../store.js";

const statuses = new Map<number, MerchantStatusName>([
  [MerchantStatus.ACTIVE, "active"],
  [MerchantStatus.DISABLED, "disabled"],
]);

const setStatusInput = z.object({
  merchantId: merchantIdInput,
  status: z.number().transform((value, ctx) => {
    const status = statuses.get(value);
    if (!status) {
      ctx.addIssue({ code: "custom", message: "must be MERCHANT_STATUS_ACTIVE or MERCHANT_STATUS_DISABLED" });
      return z.NEVER;
    }
    return status;
  }),
});

export function setStatus(ctx: MerchantContext): Rpc<typeof MerchantService, "setStatus"> {
  return {
    async setStatus(req) {
      const { merchantId, status } = parseRequest(setStatusInput, req);
      const merchant = await changeMerchant(ctx, merchantId, "status", { status });
      return { merchant };
    },
  };
}
