import { z } from "zod";
import type { BankCatalogContext } from "../context.js";
import { resolveAvailableCatalog } from "../limits.js";
import { merchantId, parseRequest } from "../requests.js";
import type { Rpc } from "./index.js";

const request = z.object({ merchantId, sandbox: z.boolean() });

export function listAvailableBanks(ctx: BankCatalogContext): Rpc<"listAvailableBanks"> {
  return {
    async listAvailableBanks(req) {
      const { merchantId, sandbox } = parseRequest(request, req);
      const snapshot = await ctx.catalog.current();
      const catalog = resolveAvailableCatalog({
        banks: snapshot.activeBanks,
        fast: snapshot.fast,
        overrides: await snapshot.overrides(merchantId),
        // FAST is offered only when an account of the merchant's kind takes it.
        hasFastAccount: (sandbox ? snapshot.pools.sandbox : snapshot.pools.live).hasFastAccount,
        sorted: true,
      });
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
