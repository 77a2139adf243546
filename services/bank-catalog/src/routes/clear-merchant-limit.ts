import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { bankId, merchantId } from "../requests.js";

const request = z.object({ merchantId, bankId });

export function clearMerchantLimit(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "clearMerchantLimit"> {
  return {
    // Clearing an override that does not exist succeeds: the defaults apply either way.
    async clearMerchantLimit(req) {
      const input = parseRequest(request, req);
      await changeCatalog(ctx, "merchant_limit_cleared", async (trx) => {
        const deleted = await trx("merchant_limits").where({ merchant_id: input.merchantId, bank_id: input.bankId }).delete();
        return { result: undefined, changed: deleted > 0 };
      });
      return {};
    },
  };
}
