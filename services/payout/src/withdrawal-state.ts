/**
 * The withdrawal state machine, free of storage: statuses, moves, and what each move does
 * to the merchant's balance. Storage applies a move as a conditional update
 * (`… WHERE status = <from>`), so a move that no longer applies changes nothing.
 */

import type { WithdrawalStatusName } from "@payments/contracts/statuses";

// The statuses (and the text the `status` column stores) are @payments/contracts/statuses'.
export { WITHDRAWAL_STATUSES, isWithdrawalStatusName as isWithdrawalStatus, type WithdrawalStatusName } from "@payments/contracts/statuses";

/** start: the worker takes it; complete/fail: the bank's answer or an operator; cancel: the merchant or an operator. */
export type WithdrawalMove = "start" | "complete" | "fail" | "cancel";

/** What a move does to the balance: hold was done at creation; release gives it back, settle pays it out. */
export type BalanceEffect = "none" | "release" | "settle";

const MOVES: Readonly<Record<WithdrawalMove, { from: WithdrawalStatusName; to: WithdrawalStatusName; effect: BalanceEffect }>> = {
  start: { from: "pending", to: "processing", effect: "none" },
  complete: { from: "processing", to: "completed", effect: "settle" },
  fail: { from: "processing", to: "failed", effect: "release" },
  cancel: { from: "pending", to: "cancelled", effect: "release" },
};

export function isFinal(status: WithdrawalStatusName): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

export type WithdrawalMoveOutcome =
  | { kind: "moved"; from: WithdrawalStatusName; to: WithdrawalStatusName; effect: BalanceEffect }
  | { kind: "unchanged"; status: WithdrawalStatusName }
  | { kind: "refused"; status: WithdrawalStatusName; message: string };

const VERB: Readonly<Record<WithdrawalMove, string>> = { start: "processed", complete: "completed", fail: "failed", cancel: "cancelled" };

/** What `move` does to a withdrawal in `status`; `idempotent` moves answer "unchanged" when repeated on their own result. */
export function decideWithdrawalMove(status: WithdrawalStatusName, move: WithdrawalMove, options: { idempotent?: boolean } = {}): WithdrawalMoveOutcome {
  const { from, to, effect } = MOVES[move];
  if (status === from) return { kind: "moved", from, to, effect };
  if (status === to && options.idempotent) return { kind: "unchanged", status };
  return { kind: "refused", status, message: `the withdrawal is ${status}; only a ${from} withdrawal can be ${VERB[move]}` };
}
