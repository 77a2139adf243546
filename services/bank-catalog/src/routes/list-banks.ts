import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import type { Rpc } from "@payments/kit";
import type { BankCatalogContext } from "../context.js";

export function listBanks(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "listBanks"> {
  return {
    async listBanks() {
      return { banks: [...(await ctx.catalog.current()).banks] };
    },
  };
}
