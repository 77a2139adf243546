/**
 * The incoming transfer's state machine, free of storage: which statuses a transfer has,
 * every move between them, and what each move writes beside the status: the suspense entry
 * (money entering or leaving the account's suspense), the action record (who did what, why)
 * and whether it asks the payout service for a return. transfer-moves.ts applies a move in
 * one transaction; nothing else changes a transfer's status.
 *
 *   (arrival) ──record_matched──▶ matched
 *   (arrival) ──record_review───▶ review    ─┬─ match | complete ─▶ matched
 *   (arrival) ──record_unmatched▶ unmatched ─┤  refuse (review) ──▶ unmatched
 *                                            └─ request_return ──▶ returning ─┬─ return_completed ▶ returned
 *                                                                              └─ return_failed ───▶ unmatched
 *
 * Suspense holds exactly the money of transfers that are `review` or `unmatched`: a move into
 * one of them from outside adds the amount, a move out of them takes it away. That is what
 * reconciliation checks per account (received = credited + suspense + returned).
 */

import type { TransferStatusName } from "@payments/contracts/statuses";

// The statuses (and the text the `status` column stores) are @payments/contracts/statuses'.
export { TRANSFER_STATUSES, isTransferStatusName as isTransferStatus, type TransferStatusName } from "@payments/contracts/statuses";

/** The statuses whose money is in suspense: what an operator still has to resolve. */
export const OPEN_TRANSFER_STATUSES: readonly TransferStatusName[] = ["unmatched", "review"];

export type SuspenseKind = "received" | "released" | "returned" | "return_failed";

/** +amount into suspense, -amount out of it. */
export const SUSPENSE_SIGN: Readonly<Record<SuspenseKind, 1 | -1>> = { received: 1, released: -1, returned: -1, return_failed: 1 };

/** What the action record says was done (transfer_actions.action). */
export type TransferActionName = "matched" | "completed" | "refused" | "return_requested" | "returned" | "return_failed";

export type TransferMove =
  /** Arrival: it completed its deposit at once. */
  | "record_matched"
  /** Arrival: it waits for an operator (ambiguous, or under-, over- or late paid under the merchant's rules). */
  | "record_review"
  /** Arrival: no deposit takes it. */
  | "record_unmatched"
  /** An operator gives it to a deposit they name. */
  | "match"
  /** An operator completes the deposit it waits on in review. */
  | "complete"
  /** An operator refuses the deposit it waits on: it stays in suspense, unmatched. */
  | "refuse"
  /** An operator or the merchant's rule sends it back to the sender (through the outbox). */
  | "request_return"
  /** The payout service paid it back. */
  | "return_completed"
  /** The payout service could not pay it back: open again, in suspense. */
  | "return_failed";

export const TRANSFER_MOVES: readonly TransferMove[] = [
  "record_matched",
  "record_review",
  "record_unmatched",
  "match",
  "complete",
  "refuse",
  "request_return",
  "return_completed",
  "return_failed",
];

export interface TransferMoveSpec {
  /** The statuses it may start from; `null` is a transfer not recorded yet (an arrival). */
  from: readonly (TransferStatusName | null)[];
  to: TransferStatusName;
  /** The suspense entry it writes, if any. */
  suspense?: SuspenseKind;
  /** The action record it writes, if any (arrivals write none: the transfer row says it all). */
  action?: TransferActionName;
  /** It asks the payout service for a return: a TransferReturnRequested event in the outbox. */
  requestsReturn?: true;
}

const MOVES: Readonly<Record<TransferMove, TransferMoveSpec>> = {
  record_matched: { from: [null], to: "matched" },
  record_review: { from: [null], to: "review", suspense: "received" },
  record_unmatched: { from: [null], to: "unmatched", suspense: "received" },
  match: { from: ["unmatched", "review"], to: "matched", suspense: "released", action: "matched" },
  complete: { from: ["review"], to: "matched", suspense: "released", action: "completed" },
  refuse: { from: ["review"], to: "unmatched", action: "refused" },
  request_return: { from: ["unmatched", "review"], to: "returning", suspense: "returned", action: "return_requested", requestsReturn: true },
  return_completed: { from: ["returning"], to: "returned", action: "returned" },
  return_failed: { from: ["returning"], to: "unmatched", suspense: "return_failed", action: "return_failed" },
};

export function transferMoveSpec(move: TransferMove): TransferMoveSpec {
  return MOVES[move];
}

/** Whether a transfer in `status` still waits for an operator's decision (its money is in suspense). */
export function isOpen(status: TransferStatusName): boolean {
  return OPEN_TRANSFER_STATUSES.includes(status);
}

export type TransferMoveOutcome =
  | { kind: "moved"; from: TransferStatusName | null; to: TransferStatusName; spec: TransferMoveSpec }
  | { kind: "refused"; status: TransferStatusName | null; message: string };

const VERB: Readonly<Record<TransferMove, string>> = {
  record_matched: "recorded",
  record_review: "recorded",
  record_unmatched: "recorded",
  match: "matched to a deposit",
  complete: "completed",
  refuse: "refused",
  request_return: "returned",
  return_completed: "marked returned",
  return_failed: "marked as a failed return",
};

/** "an unmatched or in-review", "a returning": the statuses a move starts from, in words. */
function listed(statuses: readonly (TransferStatusName | null)[]): string {
  const names = statuses.map((s) => (s === null ? "new" : s === "review" ? "in-review" : s));
  const words = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  return `${/^[aeiou]/.test(words) ? "an" : "a"} ${words}`;
}

/**
 * What `move` does to a transfer in `status` (null: not recorded yet). Refused when the move
 * does not start there: a transfer is resolved once, and a late answer (a second operator, a
 * repeated event) changes nothing.
 */
export function decideTransferMove(status: TransferStatusName | null, move: TransferMove): TransferMoveOutcome {
  const spec = MOVES[move];
  if (spec.from.includes(status)) return { kind: "moved", from: status, to: spec.to, spec };
  const now = status === null ? "not recorded" : status === "review" ? "in review" : status;
  return { kind: "refused", status, message: `the transfer is ${now}; only ${listed(spec.from)} transfer can be ${VERB[move]}` };
}

/** The suspense balance a transfer in `status` holds, as a multiple of its amount (0 or 1). */
export function suspenseHeldIn(status: TransferStatusName): 0 | 1 {
  return isOpen(status) ? 1 : 0;
}
