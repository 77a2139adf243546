import type { MerchantService } from "@payments/contracts/merchant";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { MerchantContext } from "../context.js";
import { merchantIdInput } from "../merchant.js";
import { toMerchantMessage } from "../merchant-message.js";
import { findMerchantWithSecrets, merchantNotFound } from "../store.js";

const getMerchantInput = z.object({ merchantId: merchantIdInput });

export function getMerchant(ctx: MerchantContext): Rpc<typeof MerchantService, "getMerchant"> {
  return {
    async getMerchant(req) {
      const { merchantId } = parseRequest(getMerchantInput, req);
      const found = await findMerchantWithSecrets(ctx.db, merchantId);
      if (!found) throw merchantNotFound(merchantId);
      return { merchant: toMerchantMessage(found.merchant, found.secrets, ctx.clock.now().getTime()) };
    },
  };
}
