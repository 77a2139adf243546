import { Code } from "@connectrpc/connect";
import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { isUniqueViolation, newId, parseRequest, serviceError, validationError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { changeCatalog } from "../catalog-changed.js";
import type { BankCatalogContext } from "../context.js";
import { ibanBankCode, ibanMatchesBankCode } from "../limits.js";
import { bankId, iban, text } from "../requests.js";
import { getAccountRow, getBankRow, receivingAccountMessage, type ReceivingAccountRow } from "../store.js";

const request = z.object({
  bankId,
  accountName: text(200),
  iban,
  fastEnabled: z.boolean(),
  active: z.boolean().optional(),
  sandbox: z.boolean(),
});

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseCreateReceivingAccount(req: unknown): z.infer<typeof request> {
  return parseRequest(request, req);
}

export function createReceivingAccount(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "createReceivingAccount"> {
  return {
    async createReceivingAccount(req) {
      const input = parseCreateReceivingAccount(req);
      const bank = await getBankRow(ctx.db, input.bankId);
      // Customers are told "pay to <bank>, IBAN …": the two must agree.
      if (!ibanMatchesBankCode(input.iban, bank.code)) {
        throw validationError("iban", `iban belongs to bank code ${ibanBankCode(input.iban)}, not to ${bank.name} (${bank.code})`);
      }
      const now = ctx.clock.now().getTime();
      const row: ReceivingAccountRow = {
        id: newId("acc"),
        bank_id: bank.id,
        account_name: input.accountName,
        iban: input.iban,
        active: input.active ?? true,
        fast_enabled: input.fastEnabled,
        sandbox: input.sandbox,
        created_at: now,
        updated_at: now,
      };
      const created = await changeCatalog(ctx, "receiving_account_created", async (trx) => {
        try {
          await trx<ReceivingAccountRow>("receiving_accounts").insert(row);
        } catch (err) {
          if (isUniqueViolation(err)) throw serviceError(Code.AlreadyExists, "IBAN_TAKEN", "a receiving account with this IBAN already exists", { field: "iban" });
          throw err;
        }
        return { result: await getAccountRow(trx, row.id), changed: true };
      });
      return { account: receivingAccountMessage(created, created.bank_name) };
    },
  };
}
