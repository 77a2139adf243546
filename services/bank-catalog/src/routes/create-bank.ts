import { Code } from "@connectrpc/connect";
import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { isUniqueViolation, newId, parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { isValidRange } from "../limits.js";
import { amount, bankCode, logoUrl, rangeError, text } from "../requests.js";
import { bankMessage, getBankRow, type BankRow } from "../store.js";

const request = z.object({
  name: text(200),
  code: bankCode,
  logoUrl,
  minAmount: amount,
  maxAmount: amount,
  active: z.boolean().optional(),
});

export function createBank(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "createBank"> {
  return {
    async createBank(req) {
      const input = parseRequest(request, req);
      if (!isValidRange(input.minAmount, input.maxAmount)) {
        throw rangeError(input, true);
      }
      const now = ctx.clock.now().getTime();
      const row: BankRow = {
        id: newId("bnk"),
        name: input.name,
        code: input.code,
        logo_url: input.logoUrl,
        active: input.active ?? true,
        min_amount: input.minAmount,
        max_amount: input.maxAmount,
        created_at: now,
        updated_at: now,
      };
      const created = await changeCatalog(ctx, "bank_created", async (trx) => {
        try {
          await trx<BankRow>("banks").insert(row);
        } catch (err) {
          if (isUniqueViolation(err)) throw serviceError(Code.AlreadyExists, "BANK_CODE_TAKEN", `a bank with code "${input.code}" already exists`, { field: "code" });
          throw err;
        }
        return { result: await getBankRow(trx, row.id), changed: true };
      });
      return { bank: bankMessage(created) };
    },
  };
}
