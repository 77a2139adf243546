import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { BankCatalogContext } from "../context.js";
import { merchantId } from "../requests.js";
import { listMerchantLimitRows, merchantLimitMessage } from "../store.js";

const request = z.object({ merchantId });

export function listMerchantLimits(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "listMerchantLimits"> {
  return {
    async listMerchantLimits(req) {
      const input = parseRequest(request, req);
      const rows = await listMerchantLimitRows(ctx.db, input.merchantId);
      return { limits: rows.map(merchantLimitMessage) };
    },
  };
}
