import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { checkRateLimit, merchantIdInput } from "../merchant.js";
import { changeMerchant } from "../store.js";

const setRateLimitInput = z
  .object({
    merchantId: merchantIdInput,
    requestsPerSecond: z.number().optional(),
    burst: z.number().optional(),
  })
  .transform((input, ctx) => {
    const checked = checkRateLimit(input.requestsPerSecond, input.burst);
    if (!checked.ok) {
      ctx.addIssue({ code: "custom", message: checked.message, path: [checked.field === "burst" ? "burst" : "requestsPerSecond"] });
      return z.NEVER;
    }
    return { merchantId: input.merchantId, rateLimit: checked.value };
  });

export function setRateLimit(ctx: MerchantContext): Rpc<typeof MerchantService, "setRateLimit"> {
  return {
    async setRateLimit(req) {
      const { merchantId, rateLimit } = parseRequest(setRateLimitInput, req);
      const merchant = await changeMerchant(ctx, merchantId, "rate_limit", {
        rate_limit_per_second: rateLimit.perSecond,
        rate_limit_burst: rateLimit.burst,
      });
      return { merchant };
    },
  };
}
