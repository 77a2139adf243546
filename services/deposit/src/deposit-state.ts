/**
 * The deposit state machine, free of storage: which statuses exist, which moves exist,
 * and what a move does from a given status. Storage applies a move as a conditional
 * update (`… WHERE status = <from>`), so a move that no longer applies changes nothing.
 */

import type { DepositStatusName } from "@payments/contracts/statuses";

// The statuses (and the text the `status` column stores) are @payments/contracts/statuses'.
export { DEPOSIT_STATUSES, isDepositStatusName as isDepositStatus, type DepositStatusName } from "@payments/contracts/statuses";

/**
 * Who or what moves a deposit: a matched transfer or an operator, an operator, the expiry
 * job, the merchant; and `complete_late`, the one move out of `expired`: a transfer that
 * arrived after the deposit expired completes it, by the merchant's late-payment rule or an
 * operator's decision on that transfer (decisions.md, "Late payment").
 */
export type DepositMove = "complete" | "complete_late" | "fail" | "expire" | "cancel";

const MOVES: Readonly<Record<DepositMove, { from: DepositStatusName; to: DepositStatusName }>> = {
  complete: { from: "pending", to: "completed" },
  complete_late: { from: "expired", to: "completed" },
  fail: { from: "pending", to: "failed" },
  expire: { from: "pending", to: "expired" },
  cancel: { from: "pending", to: "cancelled" },
};

/** Every status but pending is final: nothing moves a deposit out of it but a late payment (expired → completed). */
export function isFinal(status: DepositStatusName): boolean {
  return status !== "pending";
}

export type MoveOutcome =
  | { kind: "moved"; from: DepositStatusName; to: DepositStatusName }
  /** The deposit is already where this move leads (a retried cancel): nothing to do, not an error. */
  | { kind: "unchanged"; status: DepositStatusName }
  | { kind: "refused"; status: DepositStatusName; message: string };

const VERB: Readonly<Record<DepositMove, string>> = {
  complete: "completed",
  complete_late: "completed late",
  fail: "rejected",
  expire: "expired",
  cancel: "cancelled",
};

/**
 * What `move` does to a deposit in `status`. `idempotent` moves (cancel) answer
 * "unchanged" when repeated; the others are refused, since a repeat could carry a
 * different amount or reason than the move that happened.
 */
export function decideMove(status: DepositStatusName, move: DepositMove, options: { idempotent?: boolean } = {}): MoveOutcome {
  const { from, to } = MOVES[move];
  if (status === from) return { kind: "moved", from, to };
  if (status === to && options.idempotent) return { kind: "unchanged", status };
  return {
    kind: "refused",
    status,
    message: `the deposit is ${status}; only ${/^[aeiou]/.test(from) ? "an" : "a"} ${from} deposit can be ${VERB[move]}`,
  };
}

/** Whether a deposit in `status` can still be paid through its checkout page. */
export function acceptsPayment(status: DepositStatusName): boolean {
  return status === "pending";
}
