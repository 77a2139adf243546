import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, transactionWithRetry, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { merchantId, withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { decideWithdrawalApproval } from "../withdrawal-approval-moves.js";

const request = z.object({ merchantId, withdrawalId, reason: z.string().trim().max(500, "must be at most 500 characters") });

/**
 * A person of the merchant (owner or finance: access.ts) rejects an API key's withdrawal that
 * waits for the merchant's four-eyes: cancelled with APPROVAL_REJECTED, the hold released and
 * the `withdrawal.cancelled` callback, in one transaction; the reason stays with the approval.
 */
export function rejectWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "rejectWithdrawal"> {
  return {
    async rejectWithdrawal(req) {
      const input = parseRequest(request, req);
      const by = callerAttribution("payout");
      const row = await transactionWithRetry(ctx.db, (trx) =>
        decideWithdrawalApproval(trx, ctx.clock, { withdrawalId: input.withdrawalId, merchantId: input.merchantId, decision: "reject", by, note: input.reason }),
      );
      ctx.outbox.nudge();
      ctx.logger.info({ withdrawalId: row.id, merchantId: row.merchant_id, amount: Number(row.amount), rejectedBy: by }, "withdrawal rejected by a person of the merchant: cancelled, its amount released");
      return { withdrawal: withdrawalFromRow(row) };
    },
  };
}
