import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { isValidRange } from "../limits.js";
import { amount, rangeError } from "../requests.js";
import { fastSettingsMessage, getFastSettingsRow, type FastSettingsRow } from "../store.js";

const request = z.object({
  enabled: z.boolean().optional(),
  minAmount: amount.optional(),
  maxAmount: amount.optional(),
});

export function updateFastSettings(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "updateFastSettings"> {
  return {
    async updateFastSettings(req) {
      const input = parseRequest(request, req);
      const row = await changeCatalog(ctx, "fast_settings_updated", async (trx) => {
        const current = await getFastSettingsRow(trx, { forUpdate: true });
        const changes: Partial<FastSettingsRow> = {};
        if (input.enabled !== undefined) changes.enabled = input.enabled;
        if (input.minAmount !== undefined) changes.min_amount = input.minAmount;
        if (input.maxAmount !== undefined) changes.max_amount = input.maxAmount;
        if (Object.keys(changes).length === 0) return { result: current, changed: false };
        const minAmount = Number(changes.min_amount ?? current.min_amount);
        const maxAmount = Number(changes.max_amount ?? current.max_amount);
        if (!isValidRange(minAmount, maxAmount)) throw rangeError({ minAmount, maxAmount }, input.minAmount !== undefined);
        await trx<FastSettingsRow>("fast_settings")
          .where({ id: 1 })
          .update({ ...changes, updated_at: ctx.clock.now().getTime() });
        return { result: await getFastSettingsRow(trx), changed: true };
      });
      return { settings: fastSettingsMessage(row) };
    },
  };
}
