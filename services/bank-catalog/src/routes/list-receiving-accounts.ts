import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { BankCatalogContext } from "../context.js";
import { getBankRow, listAccountRows, receivingAccountMessage } from "../store.js";

const request = z.object({ bankId: z.string().max(40, "must be at most 40 characters"), sandbox: z.boolean().optional() });

export function listReceivingAccounts(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "listReceivingAccounts"> {
  return {
    async listReceivingAccounts(req) {
      const input = parseRequest(request, req);
      if (input.bankId !== "") await getBankRow(ctx.db, input.bankId);
      const rows = await listAccountRows(ctx.db, { bankId: input.bankId || undefined, sandbox: input.sandbox });
      return { accounts: rows.map((row) => receivingAccountMessage(row, row.bank_name)) };
    },
  };
}
