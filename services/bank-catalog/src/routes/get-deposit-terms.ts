import { Code } from "@connectrpc/connect";
import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import { parseRequest, serviceError, type Rpc } from "@payments/kit";
import { z } from "zod";
import { merchantCatalog } from "../catalog-snapshot.js";
import type { BankCatalogContext } from "../context.js";
import { resolveDepositTerms } from "../limits.js";
import { merchantId } from "../requests.js";

// bank_id may be empty (no particular bank), so it is not the shared required `bankId`.
const request = z.object({ merchantId, bankId: z.string().max(40, "must be at most 40 characters"), sandbox: z.boolean() });

function bankNotAvailable(bankId: string) {
  return bankId === ""
    ? serviceError(Code.FailedPrecondition, "BANK_NOT_AVAILABLE", "no bank is available to this merchant")
    : serviceError(Code.FailedPrecondition, "BANK_NOT_AVAILABLE", `bank ${bankId} is not available to this merchant`, { field: "bank_id" });
}

export function getDepositTerms(ctx: BankCatalogContext): Rpc<typeof BankCatalogService, "getDepositTerms"> {
  return {
    async getDepositTerms(req) {
      const input = parseRequest(request, req);
      const snapshot = await ctx.catalog.current();
      const terms = resolveDepositTerms(await merchantCatalog(snapshot, input.merchantId, input.sandbox), input.bankId);
      if (!terms) throw bankNotAvailable(input.bankId);
      return {
        bankId: terms.bankId,
        bankName: terms.bankName,
        minAmount: BigInt(terms.minAmount),
        maxAmount: BigInt(terms.maxAmount),
        accounts: terms.accounts.map((a) => a.message),
      };
    },
  };
}
