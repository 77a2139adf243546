import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { isValidRange } from "../limits.js";
import { amount, bankId, logoUrl, rangeError, text } from "../requests.js";
import { bankMessage, getBankRow, type BankRow } from "../store.js";

const request = z.object({
  bankId,
  name: text(200).optional(),
  logoUrl: logoUrl.optional(),
  active: z.boolean().optional(),
  minAmount: amount.optional(),
  maxAmount: amount.optional(),
});

export function updateBank(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "updateBank"> {
  return {
    async updateBank(req) {
      const input = parseRequest(request, req);
      const row = await changeCatalog(ctx, "bank_updated", async (trx) => {
        // Locked, so two updates (one of min, one of max) cannot together leave min > max.
        const current = await getBankRow(trx, input.bankId, { forUpdate: true });
        const changes: Partial<BankRow> = {};
        if (input.name !== undefined) changes.name = input.name;
        if (input.logoUrl !== undefined) changes.logo_url = input.logoUrl;
        if (input.active !== undefined) changes.active = input.active;
        if (input.minAmount !== undefined) changes.min_amount = input.minAmount;
        if (input.maxAmount !== undefined) changes.max_amount = input.maxAmount;
        if (Object.keys(changes).length === 0) return { result: current, changed: false };
        const minAmount = Number(changes.min_amount ?? current.min_amount);
        const maxAmount = Number(changes.max_amount ?? current.max_amount);
        if (!isValidRange(minAmount, maxAmount)) throw rangeError({ minAmount, maxAmount }, input.minAmount !== undefined);
        await trx<BankRow>("banks")
          .where({ id: current.id })
          .update({ ...changes, updated_at: ctx.clock.now().getTime() });
        return { result: await getBankRow(trx, current.id), changed: true };
      });
      return { bank: bankMessage(row) };
    },
  };
}
