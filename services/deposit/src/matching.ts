import { descriptionHasReference } from "./reference.js";

/** A pending deposit assigned to the account a transfer arrived on. */
export interface MatchCandidate {
  id: string;
  reference: string;
  requestedAmount: number;
  currency: string;
  createdAt: number;
}

export interface TransferFacts {
  amount: number;
  currency: string;
  /** The transfer description. */
  reference: string;
}

export type MatchResult = { kind: "matched"; depositId: string; by: "reference" | "amount" } | { kind: "unmatched"; reason: string };

/**
 * Which pending deposit an incoming transfer pays. By reference first: the description
 * carries exactly one candidate's reference (whatever the amount: the deposit completes
 * with the amount received). Else by amount: exactly one candidate awaits this amount in
 * this currency. Anything ambiguous is left to an operator rather than guessed.
 */
export function matchTransfer(transfer: TransferFacts, candidates: readonly MatchCandidate[]): MatchResult {
  const sameCurrency = candidates.filter((c) => c.currency === transfer.currency);
  if (candidates.length === 0) return { kind: "unmatched", reason: "no pending deposit is assigned to this account" };
  const byReference = sameCurrency.filter((c) => descriptionHasReference(transfer.reference, c.reference));
  if (byReference.length === 1) return { kind: "matched", depositId: byReference[0]!.id, by: "reference" };
  if (byReference.length > 1) return { kind: "unmatched", reason: "the description carries the reference of several pending deposits" };
  const byAmount = sameCurrency.filter((c) => c.requestedAmount === transfer.amount);
  if (byAmount.length === 1) return { kind: "matched", depositId: byAmount[0]!.id, by: "amount" };
  if (byAmount.length > 1) return { kind: "unmatched", reason: `several pending deposits on this account await ${transfer.amount} ${transfer.currency}; no reference in the description` };
  return { kind: "unmatched", reason: "no reference in the description and no pending deposit of this amount on this account" };
}
