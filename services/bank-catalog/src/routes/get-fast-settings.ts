import type { BankCatalogContext } from "../context.js";
import { fastSettingsMessage, getFastSettingsRow } from "../store.js";
import type { Rpc } from "./index.js";

export function getFastSettings(ctx: BankCatalogContext): Rpc<"getFastSettings"> {
  return {
    async getFastSettings() {
      return { settings: fastSettingsMessage(await getFastSettingsRow(ctx.db)) };
    },
  };
}
