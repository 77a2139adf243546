import type { BankCatalogContext } from "../context.js";
import type { Rpc } from "./index.js";

export function listBanks(ctx: BankCatalogContext): Rpc<"listBanks"> {
  return {
    async listBanks() {
      return { banks: [...(await ctx.catalog.current()).banks] };
    },
  };
}
