import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { WITHDRAWAL_STATUS_TOPICS } from "@payments/contracts";
import { WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { applyStateMove, heldUnderLock, type Clock, type StateTable } from "@payments/kit";
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
  const result = await applyStateMove(trx, clock, {
    table: WITHDRAWALS,
    row: current,
    move: request.move,
    decide: (from, move) => decideWithdrawalMove(from, move, { idempotent: request.idempotent }),
    patch: (moved, now) => {
      const patch: Partial<WithdrawalRow> = { ...request.patch, updated_at: now };
      if (moved.to !== "processing") patch.completed_at = now;
      if (request.move === "fail") patch.failure_reason = request.failureReason || "FAILED";
      return patch;
    },
    effects: async (_moved, { effect }) => {
      const amount = Number(current.amount);
      if (effect === "release") {
        await post(trx, clock, { merchantId: current.merchant_id, currency: current.currency, kind: "withdrawal_release", availableDelta: amount, heldDelta: -amount, transactionId: current.id });
      } else if (effect === "settle") {
        await post(trx, clock, { merchantId: current.merchant_id, currency: current.currency, kind: "withdrawal_settle", availableDelta: 0, heldDelta: -amount, transactionId: current.id });
      }
      return getWithdrawalRow(trx, { withdrawalId: current.id });
    },
    event: (row, moved, now) => ({
      topic: withdrawalTopic(moved.to),
      schema: WithdrawalStatusChangedSchema,
      init: { withdrawal: withdrawalFromRow(row), previousStatus: statusToProto(moved.from), occurredAt: timestampFromMs(now) },
    }),
  });
  const { row, moved } = heldUnderLock(result, WITHDRAWALS, current);
  return { row, moved };
}
