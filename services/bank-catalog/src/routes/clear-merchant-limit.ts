import { z } from "zod";
import type { BankCatalogContext } from "../context.js";
import { bankId, merchantId, parseRequest } from "../requests.js";
import type { Rpc } from "./index.js";

const request = z.object({ merchantId, bankId });

export function clearMerchantLimit(ctx: BankCatalogContext): Rpc<"clearMerchantLimit"> {
  return {
    // Clearing an override that does not exist succeeds: the defaults apply either way.
    async clearMerchantLimit(req) {
      const input = parseRequest(request, req);
      await ctx.db("merchant_limits").where({ merchant_id: input.merchantId, bank_id: input.bankId }).delete();
      return {};
    },
  };
}
