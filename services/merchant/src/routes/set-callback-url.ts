import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { requireCallableCallbackUrl } from "../callback-url-policy.js";
import type { MerchantContext } from "../context.js";
import { callbackUrlInput, merchantIdInput } from "../merchant.js";
import { changeMerchant } from "../store.js";

const setCallbackUrlInput = z.object({ merchantId: merchantIdInput, callbackUrl: callbackUrlInput });

export function setCallbackUrl(ctx: MerchantContext): Rpc<typeof MerchantService, "setCallbackUrl"> {
  return {
    async setCallbackUrl(req) {
      const { merchantId, callbackUrl } = parseRequest(setCallbackUrlInput, req);
      await requireCallableCallbackUrl(ctx, callbackUrl);
      const merchant = await changeMerchant(ctx, merchantId, "callback_url", { callback_url: callbackUrl });
      return { merchant };
    },
  };
}
