import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { merchantCatalog } from "../catalog-snapshot.js";
import type { BankCatalogContext } from "../context.js";
import { resolveAvailableCatalog } from "../limits.js";
import { merchantId } from "../requests.js";

const request = z.object({ merchantId, sandbox: z.boolean() });

export function listAvailableBanks(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "listAvailableBanks"> {
  return {
    async listAvailableBanks(req) {
      const { merchantId, sandbox } = parseRequest(request, req);
      const snapshot = await ctx.catalog.current();
      // Only what a deposit would be accepted through: a bank or FAST without an active
      // account of the merchant's kind (sandbox or live) is left out.
      const catalog = resolveAvailableCatalog(await merchantCatalog(snapshot, merchantId, sandbox));
      return {
        banks: catalog.banks.map((b) => ({
          id: b.id,
          name: b.name,
          code: b.code,
          logoUrl: b.logoUrl,
          minAmount: BigInt(b.minAmount),
          maxAmount: BigInt(b.maxAmount),
        })),
        fast: catalog.fast && { minAmount: BigInt(catalog.fast.minAmount), maxAmount: BigInt(catalog.fast.maxAmount) },
      };
    },
  };
}
