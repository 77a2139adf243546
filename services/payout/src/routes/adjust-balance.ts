import type { PayoutService } from "@payments/contracts/payout";
import { newId, parseRequest, transactionWithRetry, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { balanceRow, post } from "../ledger.js";
import { requireMerchant } from "../merchants.js";
import { currency, merchantId, signedAmount, text } from "../requests.js";
import { balanceFromRow, ledgerEntryFromRow } from "../store.js";

/**
 * An operator's manual change of available, with its reason, as one ledger entry of its
 * own (`adj_…`, so the ledger's one-entry-per-kind-and-transaction rule holds for it too).
 * Taking out more than available is INSUFFICIENT_BALANCE and changes nothing.
 */
function adjustBalanceRequest(ctx: PayoutContext) {
  return z.object({
    merchantId,
    amount: signedAmount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    reason: text(500),
  });
}

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseAdjustBalance(ctx: PayoutContext, req: unknown): z.infer<ReturnType<typeof adjustBalanceRequest>> {
  return parseRequest(adjustBalanceRequest(ctx), req);
}

export function adjustBalance(ctx: PayoutContext): Rpc<typeof PayoutService, "adjustBalance"> {
  const request = adjustBalanceRequest(ctx);

  return {
    async adjustBalance(req) {
      const input = parseRequest(request, req);
      // An operator's typo must not open a balance for a merchant that does not exist.
      await requireMerchant(ctx, input.merchantId);
      // Who, in words: the operator (for a live merchant maker and approver) and the workload that carried them.
      const actor = callerAttribution("payout");
      const { entry, balance } = await transactionWithRetry(ctx.db, async (trx) => {
        const posted = await post(trx, ctx.clock, {
          merchantId: input.merchantId,
          currency: input.currency,
          kind: "adjustment",
          availableDelta: input.amount,
          heldDelta: 0,
          transactionId: newId("adj"),
          reason: input.reason,
          actor,
        });
        if (!posted) throw new Error("a fresh adjustment id was already posted");
        return { entry: posted, balance: await balanceRow(trx, input.merchantId, input.currency) };
      });
      ctx.logger.info({ merchantId: input.merchantId, currency: input.currency, amount: input.amount, entryId: entry.id, reason: input.reason }, "balance adjusted by an operator");
      return { balance: balanceFromRow(balance), entry: ledgerEntryFromRow(entry) };
    },
  };
}
