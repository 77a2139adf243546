/**
 * The paid-amount rules (issue 14, decided there), per merchant:
 * - `underpayment`: `review` (default) or `complete`, for a transfer below the requested amount;
 * - `overpayment`: `complete` (default) or `review`, for one above it;
 * - `latePayment`: `review` (default), `complete` or `return`, for one that matches an
 *   `expired` deposit.
 * `review` keeps the transfer in the review queue attached to its deposit, which stays as it
 * is until an operator decides; `complete` completes the deposit with the amount received
 * (`requestedAmount` unchanged); `return` sends the money back to the sender.
 * Pure: what to do with a matched transfer, given the match and the merchant's rules.
 */

export type UnderpaymentRule = "review" | "complete";
export type OverpaymentRule = "complete" | "review";
export type LatePaymentRule = "review" | "complete" | "return";

export interface PaidAmountRules {
  underpayment: UnderpaymentRule;
  overpayment: OverpaymentRule;
  latePayment: LatePaymentRule;
}

export const DEFAULT_RULES: PaidAmountRules = { underpayment: "review", overpayment: "complete", latePayment: "review" };

export type AmountRelation = "exact" | "under" | "over";

export function amountRelation(received: number, requested: number): AmountRelation {
  return received === requested ? "exact" : received < requested ? "under" : "over";
}

/** What becomes of a transfer matched to one deposit. */
export type TransferDecision =
  | { action: "complete"; late: boolean }
  | { action: "review"; late: boolean; reason: string }
  | { action: "return"; reason: string };

/**
 * The decision for a transfer matched to one deposit. A late payment follows the late rule
 * first (a late transfer the rule completes is still held to the amount rules: completing an
 * expired deposit with a short payment needs both to say so); then the amount rules.
 */
export function decideMatchedTransfer(match: { late: boolean; relation: AmountRelation }, rules: PaidAmountRules): TransferDecision {
  if (match.late) {
    if (rules.latePayment === "return") return { action: "return", reason: "late payment: the merchant's rule returns it to the sender" };
    if (rules.latePayment === "review") return { action: "review", late: true, reason: "late payment: the deposit had expired" };
  }
  if (match.relation === "under" && rules.underpayment === "review") {
    return { action: "review", late: match.late, reason: "underpayment: less than the requested amount arrived" };
  }
  if (match.relation === "over" && rules.overpayment === "review") {
    return { action: "review", late: match.late, reason: "overpayment: more than the requested amount arrived" };
  }
  return { action: "complete", late: match.late };
}
