import { formatMajor, majorUnits } from "@payments/kit";
import { amountRelation, type AmountRelation } from "./paid-amount-rules.js";
import { findReference, nameSimilarity } from "./turkish-text.js";

/**
 * A deposit an incoming transfer could pay: one assigned to the account the transfer arrived
 * on that is `pending`, or `expired` (a late payment must be recognised as such; what becomes
 * of it is the caller's and the merchant's rule's decision, not the matcher's).
 */
export interface MatchCandidate {
  id: string;
  reference: string;
  requestedAmount: number;
  currency: string;
  /** The customer's name given at deposit creation; empty or absent when unknown. */
  customerName?: string | null;
  /** Absent means `pending` (older callers only passed pending deposits). */
  status?: "pending" | "expired";
  createdAt: number;
}

export interface TransferFacts {
  amount: number;
  currency: string;
  /** The sender's name as the bank reports it; empty or absent when unknown. */
  senderName?: string | null;
  /** The transfer's free-text description, where the customer writes the reference. */
  description: string;
}

export type MatchBy = "reference" | "name_amount" | "amount";

/** A candidate put before an operator: its score ranks it, its reasons explain it. */
export interface RankedCandidate {
  depositId: string;
  score: number;
  reasons: string[];
}

export type MatchResult =
  | {
      kind: "matched";
      depositId: string;
      /** The deposit had expired: a late payment. */
      late: boolean;
      by: MatchBy;
      /** Confidence in [0,1]: 1 by reference, the name similarity by name and amount, AMOUNT_ONLY_SCORE by amount alone. */
      score: number;
      /** Operator-facing, concise and stable: ["reference exact", "name 0.94", "amount exact"]. */
      reasons: string[];
      /** The amount received against the amount requested, for the merchant's paid-amount rules. */
      amountRelation: AmountRelation;
    }
  | { kind: "review"; reason: string; candidates: RankedCandidate[] }
  | { kind: "unmatched"; reason: string };

/**
 * From this similarity up a sender name is evidence for the deposit's customer name. With the
 * metric of nameSimilarity: a reordered, case- or diacritic-changed name (1), a missing middle
 * name (0.9) or one typo (≈0.97) pass; a given name alone (0.83) or another surname (0.5) do not.
 */
export const NAME_MATCH_THRESHOLD = 0.85;

/**
 * Below this similarity a known sender name is evidence against a known customer name: an
 * amount-only match is then put to an operator instead (someone else may have paid the same
 * amount). Between the two thresholds the name is neither for nor against ("Ayşe Demir" paying
 * for "Ayşe Yılmaz": a spouse, a maiden name).
 */
export const NAME_AGAINST_THRESHOLD = 0.5;

/** The confidence reported for a match on the amount alone: a guess the rules may still review. */
export const AMOUNT_ONLY_SCORE = 0.5;

/** Amounts as operators read them: kuruş written in lira, exactly ("450.00 TRY"). */
const money = formatMajor;

/** A score shown to an operator, rounded down so "0.85" never stands for 0.846. */
function shownScore(score: number): string {
  return (Math.floor(score * 100 + 1e-9) / 100).toFixed(2);
}

function amountReason(paid: number, requested: number, currency: string): string {
  const relation = amountRelation(paid, requested);
  if (relation === "exact") return "amount exact";
  return `amount ${majorUnits(paid, currency)} of ${money(requested, currency)} (${relation === "under" ? "short" : "over"})`;
}

function hasText(value: string | null | undefined): value is string {
  return typeof value === "string" && value.trim() !== "";
}

function statusOf(c: MatchCandidate): "pending" | "expired" {
  return c.status === "expired" ? "expired" : "pending";
}

/** What is known about one candidate against this transfer. */
interface Evidence {
  candidate: MatchCandidate;
  reference: boolean;
  /** Name similarity, or null when either name is unknown. */
  name: number | null;
  relation: AmountRelation;
  expired: boolean;
}

function evidenceOf(transfer: TransferFacts, candidate: MatchCandidate): Evidence {
  const name = hasText(transfer.senderName) && hasText(candidate.customerName) ? nameSimilarity(transfer.senderName, candidate.customerName) : null;
  return {
    candidate,
    reference: findReference(transfer.description, candidate.reference),
    name,
    relation: amountRelation(transfer.amount, candidate.requestedAmount),
    expired: statusOf(candidate) === "expired",
  };
}

/** The reasons shown for a candidate, in a fixed order: reference, name, amount, status. */
function reasonsOf(transfer: TransferFacts, e: Evidence): string[] {
  const reasons: string[] = [];
  if (e.reference) reasons.push("reference exact");
  if (e.name !== null) reasons.push(`name ${shownScore(e.name)}`);
  reasons.push(amountReason(transfer.amount, e.candidate.requestedAmount, transfer.currency));
  if (e.expired) reasons.push("deposit expired");
  return reasons;
}

/**
 * A ranking score for the review queue only (it never decides a match): reference 0.4, name
 * similarity 0.3, amount 0.2 (exact, else shrinking with the relative difference), pending 0.1.
 */
function rankScore(transfer: TransferFacts, e: Evidence): number {
  const requested = e.candidate.requestedAmount;
  const amountFit = e.relation === "exact" ? 1 : requested > 0 ? Math.max(0, 1 - Math.abs(transfer.amount - requested) / requested) : 0;
  const score = (e.reference ? 0.4 : 0) + 0.3 * (e.name ?? 0) + 0.2 * amountFit + (e.expired ? 0 : 0.1);
  return Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000;
}

/** Best first: score, then pending before expired, then the newer deposit, then the id (stable). */
function ranked(transfer: TransferFacts, evidence: readonly Evidence[]): RankedCandidate[] {
  return evidence
    .map((e) => ({ e, score: rankScore(transfer, e) }))
    .sort(
      (p, q) =>
        q.score - p.score ||
        Number(p.e.expired) - Number(q.e.expired) ||
        q.e.candidate.createdAt - p.e.candidate.createdAt ||
        (p.e.candidate.id < q.e.candidate.id ? -1 : p.e.candidate.id > q.e.candidate.id ? 1 : 0),
    )
    .map(({ e, score }) => ({ depositId: e.candidate.id, score, reasons: reasonsOf(transfer, e) }));
}

function matched(transfer: TransferFacts, e: Evidence, by: MatchBy, score: number, extra: string[] = []): MatchResult {
  return {
    kind: "matched",
    depositId: e.candidate.id,
    late: e.expired,
    by,
    score,
    reasons: [...reasonsOf(transfer, e), ...extra],
    amountRelation: e.relation,
  };
}

function count(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? "" : "s"}`;
}

/**
 * Which deposit an incoming transfer pays, with the evidence, or why no deposit can be named.
 * Pure. Only candidates in the transfer's currency are ever considered. In order:
 *
 * a) Reference: the description carries exactly one candidate's reference → that deposit,
 *    whatever the amount or the name (both reported). Several → review.
 * b) Sender name (≥ NAME_MATCH_THRESHOLD) together with the exact amount. One qualifies → that
 *    deposit. Several: a pending one is preferred to expired ones (a customer whose deposit
 *    expired makes a new one for the same amount and pays that; the one the checkout shows is
 *    the pending one) when exactly one pending qualifies; otherwise review.
 * c) The amount alone, when exactly one PENDING deposit awaits it (an expired deposit is never
 *    matched on the amount alone: too weak for a late payment) and the names, when both known,
 *    are not against it (< NAME_AGAINST_THRESHOLD → review). Several pending → review.
 * d) Otherwise, deposits whose customer name fits but whose amount differs go to review (an
 *    underpayment without a reference is still most likely theirs); with none, unmatched.
 *
 * Never guesses: every ambiguity is a review, with the candidates ranked best first.
 */
export function matchTransfer(transfer: TransferFacts, candidates: readonly MatchCandidate[]): MatchResult {
  if (candidates.length === 0) return { kind: "unmatched", reason: "no pending deposit is assigned to this account" };
  const currency = transfer.currency.trim().toUpperCase();
  const sameCurrency = candidates.filter((c) => c.currency.trim().toUpperCase() === currency);
  const elsewhere = candidates.filter((c) => c.currency.trim().toUpperCase() !== currency && findReference(transfer.description, c.reference));
  if (sameCurrency.length === 0) {
    const note = elsewhere.length > 0 ? `; the description carries the reference of a ${elsewhere[0]!.currency} deposit` : "";
    return { kind: "unmatched", reason: `no deposit on this account is in ${transfer.currency}${note}` };
  }
  const evidence = sameCurrency.map((c) => evidenceOf(transfer, c));

  // a) Reference.
  const byReference = evidence.filter((e) => e.reference);
  if (byReference.length === 1) return matched(transfer, byReference[0]!, "reference", 1);
  if (byReference.length > 1) {
    return { kind: "review", reason: `the description carries the references of ${count(byReference.length, "deposit")}`, candidates: ranked(transfer, byReference) };
  }

  // b) Sender name with the exact amount.
  const byName = evidence.filter((e) => e.relation === "exact" && e.name !== null && e.name >= NAME_MATCH_THRESHOLD);
  if (byName.length === 1) return matched(transfer, byName[0]!, "name_amount", byName[0]!.name!);
  if (byName.length > 1) {
    const pending = byName.filter((e) => !e.expired);
    if (pending.length === 1) {
      const passedOver = byName.length - 1;
      return matched(transfer, pending[0]!, "name_amount", pending[0]!.name!, [`preferred to ${count(passedOver, "expired deposit")}`]);
    }
    const which = pending.length === 0 ? "expired deposits" : "pending deposits";
    return { kind: "review", reason: `the sender name and amount fit ${byName.length} ${which}`, candidates: ranked(transfer, byName) };
  }

  // c) The amount alone, pending deposits only.
  const byAmount = evidence.filter((e) => e.relation === "exact" && !e.expired);
  const expiredSameAmount = evidence.filter((e) => e.relation === "exact" && e.expired).length;
  if (byAmount.length === 1) {
    const only = byAmount[0]!;
    if (only.name !== null && only.name < NAME_AGAINST_THRESHOLD) {
      return {
        kind: "review",
        reason: `the amount fits one pending deposit but the sender name does not (${shownScore(only.name)})`,
        candidates: ranked(transfer, [only]),
      };
    }
    const extra = expiredSameAmount > 0 ? [`${count(expiredSameAmount, "expired deposit")} of this amount ignored`] : [];
    return matched(transfer, only, "amount", AMOUNT_ONLY_SCORE, extra);
  }
  if (byAmount.length > 1) {
    return {
      kind: "review",
      reason: `${byAmount.length} pending deposits await ${money(transfer.amount, transfer.currency)}; no reference or matching sender name`,
      candidates: ranked(transfer, byAmount),
    };
  }

  // d) A fitting name with another amount is worth an operator's look; nothing else is.
  const nameOnly = evidence.filter((e) => e.name !== null && e.name >= NAME_MATCH_THRESHOLD);
  if (nameOnly.length > 0) {
    return { kind: "review", reason: "the sender name fits but the amount differs; no reference in the description", candidates: ranked(transfer, nameOnly) };
  }
  const expiredNote = expiredSameAmount > 0 ? `; ${count(expiredSameAmount, "expired deposit")} of this amount` : "";
  return {
    kind: "unmatched",
    reason: `no reference or matching sender name, and no pending deposit of this amount (${money(transfer.amount, transfer.currency)}) on this account${expiredNote}`,
  };
}
