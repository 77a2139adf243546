import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { allowedIpsInput, merchantIdInput } from "../merchant.js";
import { allowedIpsColumn, changeMerchant } from "../store.js";

const setAllowedIpsInput = z.object({ merchantId: merchantIdInput, allowedIps: allowedIpsInput });

export function setAllowedIps(ctx: MerchantContext): Rpc<typeof MerchantService, "setAllowedIps"> {
  return {
    async setAllowedIps(req) {
      const { merchantId, allowedIps } = parseRequest(setAllowedIpsInput, req);
      const merchant = await changeMerchant(ctx, merchantId, "allowed_ips", { allowed_ips: allowedIpsColumn(allowedIps) });
      return { merchant };
    },
  };
}
