import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { WITHDRAWAL_STATUS_TOPICS } from "@payments/contracts";
import { WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { recordEvent, serviceError, type Clock } from "@payments/kit";
import type { Knex } from "knex";
import { post } from "./ledger.js";
import { getWithdrawalRow, rowStatus, statusToProto, withdrawalFromRow, type WithdrawalRow } from "./store.js";
import { decideWithdrawalMove, type WithdrawalMove, type WithdrawalStatusName } from "./withdrawal-state.js";

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
  /** Extra columns to set with the move (the worker's bookkeeping). */
  patch?: Partial<Pick<WithdrawalRow, "dispatched_at" | "dispatch_attempts" | "bank_reference" | "awaiting_operator">>;
}

export interface WithdrawalMoveResult {
  row: WithdrawalRow;
  moved: boolean;
}

/**
 * Applies one move inside `trx`: lock the row, decide on its current status, a conditional
 * update, the balance effect as a ledger entry (release on fail/cancel, settle on
 * complete) and the status event in the outbox, all or nothing. A racing second move finds
 * the withdrawal moved and is refused with INVALID_TRANSACTION_STATE.
 */
export async function moveWithdrawal(trx: Knex.Transaction, clock: Clock, request: WithdrawalMoveRequest): Promise<WithdrawalMoveResult> {
  const current = await getWithdrawalRow(trx, { withdrawalId: request.withdrawalId, merchantId: request.merchantId }, { lock: true });
  const outcome = decideWithdrawalMove(rowStatus(current), request.move, { idempotent: request.idempotent });
  if (outcome.kind === "unchanged") return { row: current, moved: false };
  if (outcome.kind === "refused") {
    throw serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", outcome.message, { details: { status: outcome.status } });
  }
  const now = clock.now().getTime();
  const patch: Partial<WithdrawalRow> = { ...request.patch, status: outcome.to, updated_at: now };
  if (outcome.to !== "processing") patch.completed_at = now;
  if (request.move === "fail") patch.failure_reason = request.failureReason || "FAILED";
  const updated = await trx("withdrawals")
    .where({ id: current.id, status: outcome.from })
    .update({ ...patch, sequence: trx.raw("sequence + 1") });
  if (updated !== 1) throw new Error(`withdrawal ${current.id} changed under its lock`);

  const amount = Number(current.amount);
  if (outcome.effect === "release") {
    await post(trx, clock, { merchantId: current.merchant_id, currency: current.currency, kind: "withdrawal_release", availableDelta: amount, heldDelta: -amount, transactionId: current.id });
  } else if (outcome.effect === "settle") {
    await post(trx, clock, { merchantId: current.merchant_id, currency: current.currency, kind: "withdrawal_settle", availableDelta: 0, heldDelta: -amount, transactionId: current.id });
  }

  const row = await getWithdrawalRow(trx, { withdrawalId: current.id });
  await recordEvent(trx, clock, withdrawalTopic(outcome.to), WithdrawalStatusChangedSchema, {
    withdrawal: withdrawalFromRow(row),
    previousStatus: statusToProto(outcome.from),
    occurredAt: timestampFromMs(now),
  });
  return { row, moved: true };
}
