import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { balanceRows } from "../ledger.js";
import { merchantId } from "../requests.js";
import { balanceFromRow } from "../store.js";

const request = z.object({ merchantId });

/** One balance per currency the merchant has used, by currency; a merchant without any sees TRY at zero. */
export function getBalances(ctx: PayoutContext): Rpc<typeof PayoutService, "getBalances"> {
  return {
    async getBalances(req) {
      const input = parseRequest(request, req);
      const rows = await balanceRows(ctx.db, input.merchantId);
      if (rows.length === 0) return { balances: [balanceFromRow({ currency: "TRY", available: 0, held: 0 })] };
      return { balances: rows.map(balanceFromRow) };
    },
  };
}
