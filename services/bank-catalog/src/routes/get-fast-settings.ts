import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import type { Rpc } from "@payments/kit";
import type { BankCatalogContext } from "../context.js";
import { fastSettingsMessage, getFastSettingsRow } from "../store.js";

export function getFastSettings(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "getFastSettings"> {
  return {
    async getFastSettings() {
      return { settings: fastSettingsMessage(await getFastSettingsRow(ctx.db)) };
    },
  };
}
