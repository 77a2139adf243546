import { z } from "zod";
import type { BankCatalogContext } from "../context.js";
import { merchantId, parseRequest } from "../requests.js";
import { listMerchantLimitRows, merchantLimitMessage } from "../store.js";
import type { Rpc } from "./index.js";

const request = z.object({ merchantId });

export function listMerchantLimits(ctx: BankCatalogContext): Rpc<"listMerchantLimits"> {
  return {
    async listMerchantLimits(req) {
      const input = parseRequest(request, req);
      const rows = await listMerchantLimitRows(ctx.db, input.merchantId);
      return { limits: rows.map(merchantLimitMessage) };
    },
  };
}
