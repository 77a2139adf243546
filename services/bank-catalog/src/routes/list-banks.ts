import type { BankCatalogContext } from "../context.js";
import { bankMessage, listBankRows } from "../store.js";
import type { Rpc } from "./index.js";

export function listBanks(ctx: BankCatalogContext): Rpc<"listBanks"> {
  return {
    async listBanks() {
      const rows = await listBankRows(ctx.db);
      return { banks: rows.map(bankMessage) };
    },
  };
}
