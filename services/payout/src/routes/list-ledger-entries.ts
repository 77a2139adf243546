import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { decodeSeqCursor, encodeSeqCursor } from "../cursor.js";
import type { LedgerEntryRow } from "../ledger.js";
import { currencyFilter, cursor, merchantScope, pageLimit, scopeFields } from "../requests.js";
import { ledgerEntryFromRow } from "../store.js";

const request = z.object({
  ...scopeFields,
  currency: currencyFilter,
  limit: pageLimit(100, 500),
  cursor: cursor(decodeSeqCursor),
});

/**
 * Newest first by seq (the order entries were posted); the cursor is the last entry's seq.
 * One merchant's ledger, or the whole ledger when an operator sets all_merchants.
 */
export function listLedgerEntries(ctx: PayoutContext): Rpc<typeof PayoutService, "listLedgerEntries"> {
  return {
    async listLedgerEntries(req) {
      const input = parseRequest(request, req);
      const merchantId = merchantScope(input);
      const read = async (currency: string) => {
        const query = ctx.db("ledger_entries").orderBy("seq", "desc");
        if (merchantId !== undefined) query.where({ merchant_id: merchantId });
        if (currency !== "") query.where({ currency });
        if (input.cursor !== undefined) query.where("seq", "<", input.cursor);
        return (await query.limit(input.limit + 1)) as Array<LedgerEntryRow & { seq: number }>;
      };
      let rows: Array<LedgerEntryRow & { seq: number }>;
      if (merchantId !== undefined && input.currency === "") {
        // One read per currency the merchant has used (each posting upserts its balance row),
        // each in the order of the (merchant_id, currency, seq) index, merged: ordering the
        // merchant's rows by seq in one read sorts all of them, or walks the whole ledger
        // backwards to find a quiet merchant's.
        const currencies = (await ctx.db("balances").where({ merchant_id: merchantId }).pluck("currency")) as string[];
        rows = (await Promise.all(currencies.map(read))).flat().sort((a, b) => Number(b.seq) - Number(a.seq));
      } else {
        rows = await read(input.currency);
      }
      const page = rows.slice(0, input.limit);
      const last = page.at(-1);
      return {
        entries: page.map(ledgerEntryFromRow),
        nextCursor: rows.length > input.limit && last ? encodeSeqCursor(Number(last.seq)) : "",
      };
    },
  };
}
