/**
 * The merchant's own four-eyes on its API keys' withdrawals, free of storage (issue 32). A
 * merchant's owner may set a withdrawal approval threshold; a withdrawal a person of the
 * merchant creates above it waits as an approval in the access layer before it exists at all.
 * One its API key asks for through the gateway must keep the public API's answer (201, status
 * pending), so it is created, its amount held, and it waits here instead: pending, never sent by
 * the worker, until a second person of the merchant approves it (then the worker sends it) or
 * rejects it, or its time runs out (both: cancelled, the hold released). A key its owner marked
 * trusted for automatic payouts skips the wait, and the withdrawal says so.
 *
 * The withdrawal's `approval` column holds where it stands; null means none was needed.
 */

import type { WithdrawalStatusName } from "./withdrawal-state.js";

export const APPROVAL_STATES = ["awaiting", "approved", "rejected", "expired", "cancelled", "trusted_key"] as const;
export type ApprovalStateName = (typeof APPROVAL_STATES)[number];
/** What the column stores: a state, or null when no approval was needed. */
export type ApprovalColumn = ApprovalStateName | null;

export function isApprovalState(value: unknown): value is ApprovalStateName {
  return (APPROVAL_STATES as readonly unknown[]).includes(value);
}

/** The failure reasons of a withdrawal the merchant's four-eyes cancelled (its `withdrawal.cancelled` callback carries them). */
export const APPROVAL_REJECTED = "APPROVAL_REJECTED";
export const APPROVAL_EXPIRED = "APPROVAL_EXPIRED";

/** The key the gateway verified, as far as the threshold cares. */
export interface AskingKey {
  trusted: boolean;
}

/**
 * What a new withdrawal's approval is: null unless an API key asked (a person's withdrawal went
 * through the access layer's own four-eyes before it was created; an operator's needs none), and
 * null at or under the threshold or without one; above it, "awaiting", or "trusted_key" when the
 * owner trusted the key for automatic payouts. Amounts in the smallest unit, like the threshold.
 */
export function approvalAtCreation(input: { key: AskingKey | undefined; threshold: bigint | number | undefined; amount: number }): ApprovalColumn {
  if (!input.key || input.threshold === undefined) return null;
  if (BigInt(input.amount) <= BigInt(input.threshold)) return null;
  return input.key.trusted ? "trusted_key" : "awaiting";
}

/** Whether the worker may send a pending withdrawal with this approval: anything but one that waits. */
export function isSendable(approval: ApprovalColumn): boolean {
  return approval !== "awaiting";
}

/** A person's decision, or the expiry job's. */
export type ApprovalDecision = "approve" | "reject" | "expire";

/** What the decision rests on, read under the withdrawal's lock. */
export interface ApprovalFacts {
  status: WithdrawalStatusName;
  approval: ApprovalColumn;
  /** Epoch ms when an awaiting approval lapses. */
  expiresAt: number | null;
}

export type ApprovalRefusal = "APPROVAL_NOT_PENDING" | "APPROVAL_EXPIRED" | "APPROVAL_NOT_DUE" | "INVALID_TRANSACTION_STATE";

export type ApprovalOutcome =
  /** The approval moves to approved; the withdrawal stays pending, sendable from now on. */
  | { kind: "approve"; to: "approved" }
  /** The withdrawal is cancelled with this failure reason (its hold released); the approval moves to `to`. */
  | { kind: "cancel"; to: "rejected" | "expired"; failureReason: typeof APPROVAL_REJECTED | typeof APPROVAL_EXPIRED }
  | { kind: "refused"; reason: ApprovalRefusal; message: string };

function refused(reason: ApprovalRefusal, message: string): ApprovalOutcome {
  return { kind: "refused", reason, message };
}

/**
 * The one rule for every decision on a withdrawal's approval. Only an awaiting approval of a
 * pending withdrawal is decided. A person decides before its expiry (at or after it, the
 * approval has lapsed: APPROVAL_EXPIRED, and the expiry job cancels it); the expiry job only at
 * or after it. So of an approval, a rejection and the expiry racing on one withdrawal exactly
 * one applies, whatever the order the lock lets them in: the others find it decided.
 */
export function decideApproval(facts: ApprovalFacts, decision: ApprovalDecision, now: number): ApprovalOutcome {
  if (facts.approval !== "awaiting") {
    const state = facts.approval === null ? "none was needed" : `it was ${facts.approval.replace("_", " ")}`;
    return refused("APPROVAL_NOT_PENDING", `the withdrawal waits for no approval (${state})`);
  }
  if (facts.status !== "pending") return refused("INVALID_TRANSACTION_STATE", `the withdrawal is ${facts.status}; only a pending withdrawal's approval can be decided`);
  // An awaiting approval always has its expiry; one without is treated as lapsed rather than kept forever.
  const lapsed = facts.expiresAt === null || now >= facts.expiresAt;
  if (decision === "expire") return lapsed ? { kind: "cancel", to: "expired", failureReason: APPROVAL_EXPIRED } : refused("APPROVAL_NOT_DUE", "the approval has not lapsed yet");
  if (lapsed) return refused("APPROVAL_EXPIRED", "the approval has lapsed: nobody decided it in time, and the withdrawal is being cancelled");
  return decision === "approve" ? { kind: "approve", to: "approved" } : { kind: "cancel", to: "rejected", failureReason: APPROVAL_REJECTED };
}

/** The approval after the withdrawal is cancelled some other way (by the merchant or an operator): one that waited was never decided. */
export function approvalAfterCancel(approval: ApprovalColumn): ApprovalColumn {
  return approval === "awaiting" ? "cancelled" : approval;
}
