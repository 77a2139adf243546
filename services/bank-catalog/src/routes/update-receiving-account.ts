import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { identifier, text } from "../requests.js";
import { getAccountRow, receivingAccountMessage, type ReceivingAccountRow } from "../store.js";

const request = z.object({
  accountId: identifier(40),
  accountName: text(200).optional(),
  active: z.boolean().optional(),
  fastEnabled: z.boolean().optional(),
});

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseUpdateReceivingAccount(req: unknown): z.infer<typeof request> {
  return parseRequest(request, req);
}

export function updateReceivingAccount(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "updateReceivingAccount"> {
  return {
    async updateReceivingAccount(req) {
      const input = parseUpdateReceivingAccount(req);
      const changes: Partial<ReceivingAccountRow> = {};
      if (input.accountName !== undefined) changes.account_name = input.accountName;
      if (input.active !== undefined) changes.active = input.active;
      if (input.fastEnabled !== undefined) changes.fast_enabled = input.fastEnabled;
      const row = await changeCatalog(ctx, "receiving_account_updated", async (trx) => {
        if (Object.keys(changes).length === 0) return { result: await getAccountRow(trx, input.accountId), changed: false };
        await trx<ReceivingAccountRow>("receiving_accounts")
          .where({ id: input.accountId })
          .update({ ...changes, updated_at: ctx.clock.now().getTime() });
        // An unknown id updated nothing and is ACCOUNT_NOT_FOUND here: rolled back, no event.
        return { result: await getAccountRow(trx, input.accountId), changed: true };
      });
      return { account: receivingAccountMessage(row, row.bank_name) };
    },
  };
}
