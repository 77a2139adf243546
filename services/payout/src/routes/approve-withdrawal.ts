import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, transactionWithRetry, type Rpc } from "@payments/kit";
import { callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { merchantId, withdrawalId } from "../requests.js";
import { withdrawalFromRow } from "../store.js";
import { decideWithdrawalApproval } from "../withdrawal-approval-moves.js";

const request = z.object({ merchantId, withdrawalId });

/**
 * A person of the merchant (owner or finance: access.ts) approves an API key's withdrawal that
 * waits for the merchant's four-eyes: awaiting → approved under the row's lock, with its outbox
 * event; the withdrawal stays pending and the worker sends it. A lock conflict (deadlock) is run
 * again here, never answered as a fault; a second approver finds it decided.
 */
export function approveWithdrawal(ctx: PayoutContext): Rpc<typeof PayoutService, "approveWithdrawal"> {
  return {
    async approveWithdrawal(req) {
      const input = parseRequest(request, req);
      const by = callerAttribution("payout");
      const row = await transactionWithRetry(ctx.db, (trx) => decideWithdrawalApproval(trx, ctx.clock, { ...input, decision: "approve", by }));
      ctx.outbox.nudge();
      ctx.logger.info({ withdrawalId: row.id, merchantId: row.merchant_id, amount: Number(row.amount), approvedBy: by }, "withdrawal approved by a second person of the merchant; the worker may send it");
      return { withdrawal: withdrawalFromRow(row) };
    },
  };
}
