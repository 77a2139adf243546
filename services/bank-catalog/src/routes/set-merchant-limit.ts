import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { applyOverride, FAST_ID, isValidRange, type Limits } from "../limits.js";
import { amount, bankId, merchantId, rangeError } from "../requests.js";
import { bankFromRow, fastFromRow, getBankRow, getFastSettingsRow, merchantLimitMessage, type MerchantLimitRow } from "../store.js";

const request = z.object({
  limit: z.object(
    {
      merchantId,
      bankId,
      enabled: z.boolean().optional(),
      minAmount: amount.optional(),
      maxAmount: amount.optional(),
    },
    { error: "is required" },
  ),
});

export function setMerchantLimit(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "setMerchantLimit"> {
  return {
    async setMerchantLimit(req) {
      const { limit } = parseRequest(request, req);
      const defaults: Limits = limit.bankId === FAST_ID ? fastFromRow(await getFastSettingsRow(ctx.db)) : bankFromRow(await getBankRow(ctx.db, limit.bankId));
      const combined = applyOverride(defaults, limit);
      if (!isValidRange(combined.minAmount, combined.maxAmount)) {
        throw rangeError(combined, limit.minAmount !== undefined, "limit.", " once combined with the defaults");
      }
      const now = ctx.clock.now().getTime();
      const values = { enabled: limit.enabled ?? null, min_amount: limit.minAmount ?? null, max_amount: limit.maxAmount ?? null, updated_at: now };
      const row = await changeCatalog(ctx, "merchant_limit_set", async (trx) => {
        // Setting replaces the whole override: a field left unset goes back to the default.
        await trx<MerchantLimitRow>("merchant_limits")
          .insert({ merchant_id: limit.merchantId, bank_id: limit.bankId, ...values, created_at: now })
          .onConflict(["merchant_id", "bank_id"])
          .merge(values);
        const stored = await trx<MerchantLimitRow>("merchant_limits").where({ merchant_id: limit.merchantId, bank_id: limit.bankId }).first();
        if (!stored) throw new Error("merchant limit vanished after upsert");
        return { result: stored, changed: true };
      });
      return { limit: merchantLimitMessage(row) };
    },
  };
}
