import type { PayoutService } from "@payments/contracts/payout";
import { parseRequest, type Rpc } from "@payments/kit";
import { actingName } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { amount, currency, iban, identifier, text } from "../requests.js";
import { createReturnAttempt, returnRequestProblem, transferReturnFromRow } from "../transfer-returns.js";

function createTransferReturnRequest(ctx: PayoutContext) {
  return z.object({
    transferId: identifier(40),
    iban,
    recipientName: text(200),
    amount,
    currency: currency(ctx.config.SUPPORTED_CURRENCIES),
    sandbox: z.boolean(),
    reason: text(500),
    actor: z.string(),
    attempt: z.number().int().min(0, "must not be negative"),
  });
}

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseCreateTransferReturn(ctx: PayoutContext, req: unknown): z.infer<ReturnType<typeof createTransferReturnRequest>> {
  return parseRequest(createTransferReturnRequest(ctx), req);
}

/**
 * Creates a pending return of an incoming transfer's money to its sender; the worker sends
 * it (src/transfer-return-worker.ts). Nothing is posted to the ledger and no balance moves:
 * the money is in the deposit service's suspense, not a merchant's. The deposit service asks
 * through its outbox (TransferReturnRequested, src/transfer-return-requests.ts); this RPC is
 * the same creation for other callers.
 *
 * Idempotent: with `attempt` N the attempt N of the transfer is created once and answered
 * unchanged after; with 0, while the transfer's latest return is pending, processing or
 * completed, that return is answered (created false) and the request's other fields are
 * ignored, and only after the latest one FAILED does a call create a new attempt. The unique
 * (transfer_id, attempt) index settles two racing calls: the loser answers the winner's row.
 */
export function createTransferReturn(ctx: PayoutContext): Rpc<typeof PayoutService, "createTransferReturn"> {
  const request = createTransferReturnRequest(ctx);

  return {
    async createTransferReturn(req) {
      const input = { ...parseRequest(request, req), actor: actingName(req.actor).slice(0, 200) };
      const problem = returnRequestProblem(ctx, input);
      if (problem) throw problem.error;
      const { row, created } = await createReturnAttempt(ctx, input);
      return { transferReturn: transferReturnFromRow(row), created };
    },
  };
}
