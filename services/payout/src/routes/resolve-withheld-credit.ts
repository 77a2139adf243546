import type { PayoutService, ResolveWithheldCreditRequest } from "@payments/contracts/payout";
import { parseRequest, type Rpc, transactionWithRetry, validationError } from "@payments/kit";
import { actingName, callerAttribution } from "@payments/access";
import { z } from "zod";
import type { PayoutContext } from "../context.js";
import { identifier, text } from "../requests.js";
import { resolveWithheld, withheldCreditFromRow, type WithheldDecision } from "../withheld-credits.js";

const request = z.object({
  id: identifier(40),
  /** Ignored when an operator's assertion says who acts (always, for this operator-only RPC). */
  actor: z.string(),
  reason: text(500),
});

/** The one decision the request carries: credit or dismiss, set to true. */
function decisionOf(req: ResolveWithheldCreditRequest): WithheldDecision {
  const d = req.decision;
  switch (d.case) {
    case "credit":
    case "dismiss":
      if (!d.value) throw validationError(d.case, `${d.case}: must be true`);
      return d.case;
    default:
      throw validationError("decision", "decision: one of credit or dismiss is required");
  }
}

/** The request checked, as the handler takes it: also what four-eyes checks before it stores one (access.ts). */
export function parseResolveWithheldCredit(req: ResolveWithheldCreditRequest): { input: z.infer<typeof request>; decision: WithheldDecision } {
  return { input: parseRequest(request, req), decision: decisionOf(req) };
}

/**
 * An operator's decision on an open withheld credit, recorded with who and why: credit posts
 * the deposit's ledger credit in the same transaction as open → credited (allowed for a live
 * merchant: the decision is the operator's assertion that the money was real); dismiss moves
 * open → dismissed and posts nothing. A decided record is refused (INVALID_TRANSACTION_STATE).
 */
export function resolveWithheldCredit(ctx: PayoutContext): Rpc<typeof PayoutService, "resolveWithheldCredit"> {
  return {
    async resolveWithheldCredit(req) {
      const { input, decision } = parseResolveWithheldCredit(req);
      const actor = actingName(input.actor).slice(0, 100);
      const row = await transactionWithRetry(ctx.db, (trx) => resolveWithheld(trx, ctx.clock, { id: input.id, decision, actor, reason: input.reason, attribution: callerAttribution(actor) }));
      ctx.logger.info(
        { withheldCreditId: row.id, depositId: row.deposit_id, merchantId: row.merchant_id, amount: Number(row.amount), decision, actor },
        decision === "credit" ? "withheld credit credited by an operator" : "withheld credit dismissed by an operator",
      );
      return { credit: withheldCreditFromRow(row) };
    },
  };
}
