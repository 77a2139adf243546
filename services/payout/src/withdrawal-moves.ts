import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { WITHDRAWAL_STATUS_TOPICS } from "@payments/contracts";
import { WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { applyStateMove, heldUnderLock, recordEvents, serviceError, type Clock, type StateEvent, type StateTable } from "@payments/kit";
import type { Knex } from "knex";
import { post, postMany, type LedgerPosting } from "./ledger.js";
import { getWithdrawalRow, rowApproval, rowStatus, statusToProto, withdrawalFromRow, type WithdrawalRow } from "./store.js";
import { approvalAfterCancel } from "./withdrawal-approval.js";
import { decideWithdrawalMove, type BalanceEffect, type WithdrawalMove, type WithdrawalMoveOutcome, type WithdrawalStatusName } from "./withdrawal-state.js";

/** The subject (under the bus prefix) a status change is published on (@payments/contracts' WITHDRAWAL_STATUS_TOPICS). No move leads to pending. */
export function withdrawalTopic(status: WithdrawalStatusName): string {
  if (status === "pending") throw new Error("no move leads a withdrawal to pending, so it has no topic");
  return WITHDRAWAL_STATUS_TOPICS[status];
}

export const WITHDRAWAL_TOPICS: string[] = Object.values(WITHDRAWAL_STATUS_TOPICS);

export interface WithdrawalMoveRequest {
  withdrawalId: string;
  move: WithdrawalMove;
  /** When set, a withdrawal of another merchant is not found. */
  merchantId?: string;
  /** fail: the reason code. */
  failureReason?: string;
  /** A repeat of a move that already happened returns the withdrawal instead of refusing (cancel). */
  idempotent?: boolean;
  /**
   * Extra columns to set with the move: the worker's bookkeeping, or the merchant's four-eyes
   * deciding (a rejection or an expiry is a cancel that also records the approval's end).
   */
  patch?: Partial<Pick<WithdrawalRow, "dispatched_at" | "dispatch_attempts" | "bank_reference" | "awaiting_operator" | "approval" | "approval_decided_by" | "approval_decided_at" | "approval_note">>;
  /** Who makes the move, in words, recorded on its ledger entry (a release or a settlement). */
  actor?: string;
}

export interface WithdrawalMoveResult {
  row: WithdrawalRow;
  moved: boolean;
}

/** The withdrawals table as the state-move helper sees it. */
const WITHDRAWALS: StateTable<WithdrawalRow, WithdrawalStatusName> = { name: "withdrawals", id: "id", status: "status", statusOf: rowStatus, sequence: "sequence" };

/**
 * Applies one move inside `trx`: lock the row, decide on its current status, a conditional
 * update, the balance effect as a ledger entry (release on fail/cancel, settle on
 * complete) and the status event in the outbox, all or nothing. A racing second move finds
 * the withdrawal moved and is refused with INVALID_TRANSACTION_STATE.
 */
export async function moveWithdrawal(trx: Knex.Transaction, clock: Clock, request: WithdrawalMoveRequest): Promise<WithdrawalMoveResult> {
  const current = await getWithdrawalRow(trx, { withdrawalId: request.withdrawalId, merchantId: request.merchantId }, { lock: true });
  return moveLockedWithdrawal(trx, clock, current, request);
}

/** `moveWithdrawal` for a row the caller has read under its lock in `trx` (and decided something on). */
export async function moveLockedWithdrawal(trx: Knex.Transaction, clock: Clock, current: WithdrawalRow, request: WithdrawalMoveRequest): Promise<WithdrawalMoveResult> {
  const result = await applyStateMove(trx, clock, {
    table: WITHDRAWALS,
    row: current,
    move: request.move,
    decide: (from, move) => decideWithdrawalMove(from, move, { idempotent: request.idempotent }),
    patch: (moved, now) => movePatch(current, request, moved, now),
    effects: async (_moved, { effect }) => {
      const posting = effectPosting(current, effect, request.actor);
      if (posting) await post(trx, clock, posting);
      return getWithdrawalRow(trx, { withdrawalId: current.id });
    },
    event: (row, moved, now) => moveEvent(row, moved, now),
  });
  const { row, moved } = heldUnderLock(result, WITHDRAWALS, current);
  return { row, moved };
}

type Moved = Extract<WithdrawalMoveOutcome, { kind: "moved" }>;

/**
 * The columns a move sets besides status and sequence. A cancel may carry a failure reason (the
 * merchant's four-eyes: APPROVAL_REJECTED, APPROVAL_EXPIRED); any other cancel of a withdrawal
 * whose approval waited ends that approval undecided.
 */
function movePatch(current: WithdrawalRow, request: WithdrawalMoveRequest, moved: Moved, now: number): Partial<WithdrawalRow> {
  const patch: Partial<WithdrawalRow> = { ...request.patch, updated_at: now };
  if (moved.to !== "processing") patch.completed_at = now;
  if (request.move === "fail") patch.failure_reason = request.failureReason || "FAILED";
  if (request.move === "cancel") {
    if (request.failureReason) patch.failure_reason = request.failureReason;
    const approval = rowApproval(current);
    if (patch.approval === undefined && approvalAfterCancel(approval) !== approval) patch.approval = approvalAfterCancel(approval);
  }
  return patch;
}

/** A move's balance effect as a ledger entry: release on fail/cancel, settle on complete, none on start. */
function effectPosting(row: WithdrawalRow, effect: BalanceEffect, actor: string | undefined): LedgerPosting | undefined {
  const amount = Number(row.amount);
  const base = { merchantId: row.merchant_id, currency: row.currency, transactionId: row.id, ...(actor ? { actor } : {}) };
  if (effect === "release") return { ...base, kind: "withdrawal_release", availableDelta: amount, heldDelta: -amount };
  if (effect === "settle") return { ...base, kind: "withdrawal_settle", availableDelta: 0, heldDelta: -amount };
  return undefined;
}

/** The status event of a move, with the withdrawal as the move left it. */
function moveEvent(row: WithdrawalRow, moved: Moved, now: number): StateEvent<typeof WithdrawalStatusChangedSchema> {
  return {
    topic: withdrawalTopic(moved.to),
    schema: WithdrawalStatusChangedSchema,
    init: { withdrawal: withdrawalFromRow(row), previousStatus: statusToProto(moved.from), occurredAt: timestampFromMs(now) },
  };
}

/** One withdrawal of `moveLockedWithdrawals`: its row as read under its lock, and the move to make. */
export interface LockedMove {
  row: WithdrawalRow;
  request: WithdrawalMoveRequest;
}

export type LockedMoveResult = WithdrawalMoveResult | { refused: Error };

/**
 * Several moves in the caller's transaction, each by `moveWithdrawal`'s rules, for rows the
 * caller has locked (FOR UPDATE, or claimed with SKIP LOCKED; on SQLite the transaction is the
 * one writer): each decided on the status it was read in by the same pure state machine, then
 * one conditional UPDATE (`WHERE id IN (…) AND status = <from>`, sequence + 1) per group of moves
 * that set the same columns to the same values (a claim of pending withdrawals: one for all),
 * the balance effects in one `postMany`, and the status events in one multi-row insert into the
 * outbox. A refused move is answered as such (nothing written for it) and does not stop the
 * others; anything else that fails throws, and the caller's transaction rolls back all of them.
 * Results in the order of `moves`; each withdrawal at most once.
 */
export async function moveLockedWithdrawals(trx: Knex.Transaction, clock: Clock, moves: readonly LockedMove[]): Promise<LockedMoveResult[]> {
  if (new Set(moves.map((m) => m.row.id)).size !== moves.length) throw new Error("moveLockedWithdrawals: a withdrawal may be moved once per call");
  const now = clock.now().getTime();
  const results: LockedMoveResult[] = [];
  const groups = new Map<string, { from: string; patch: Partial<WithdrawalRow>; ids: string[] }>();
  const moved: Array<{ row: WithdrawalRow; decision: Moved; before: WithdrawalRow; actor: string | undefined }> = [];
  for (const { row, request } of moves) {
    if (request.withdrawalId !== row.id || (request.merchantId !== undefined && request.merchantId !== row.merchant_id)) {
      throw new Error(`moveLockedWithdrawals: withdrawal ${row.id} was given a move of ${request.withdrawalId}`);
    }
    const decision = decideWithdrawalMove(rowStatus(row), request.move, { idempotent: request.idempotent });
    if (decision.kind === "unchanged") {
      results.push({ row, moved: false });
      continue;
    }
    if (decision.kind === "refused") {
      results.push({ refused: serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", decision.message, { details: { status: decision.status } }) });
      continue;
    }
    const patch: Partial<WithdrawalRow> = { ...movePatch(row, request, decision, now), status: decision.to };
    const key = JSON.stringify([row.status, Object.entries(patch).sort(([a], [b]) => (a < b ? -1 : 1))]);
    const group = groups.get(key) ?? { from: row.status, patch, ids: [] };
    group.ids.push(row.id);
    groups.set(key, group);
    const after: WithdrawalRow = { ...row, ...patch, sequence: Number(row.sequence) + 1 };
    moved.push({ row: after, decision, before: row, actor: request.actor });
    results.push({ row: after, moved: true });
  }
  for (const { from, patch, ids } of groups.values()) {
    const updated = await trx("withdrawals")
      .whereIn("id", ids)
      .where({ status: from })
      .update({ ...patch, sequence: trx.raw("sequence + 1") });
    if (updated !== ids.length) throw new Error(`withdrawals changed under their locks: ${updated} of ${ids.length} ${from} withdrawals updated`);
  }
  await postMany(
    trx,
    clock,
    moved.flatMap(({ before, decision, actor }) => effectPosting(before, decision.effect, actor) ?? []),
  );
  await recordEvents(
    trx,
    clock,
    moved.map(({ row, decision }) => moveEvent(row, decision, now)),
  );
  return results;
}

