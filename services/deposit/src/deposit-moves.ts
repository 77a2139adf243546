import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DEPOSIT_STATUS_TOPICS } from "@payments/contracts";
import { DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { applyStateMove, heldUnderLock, type Clock, type StateTable } from "@payments/kit";
import type { Knex } from "knex";
import { decideMove, type DepositMove, type DepositStatusName } from "./deposit-state.js";
import { depositFromRow, getDepositRow, rowStatus, statusToProto, type DepositRow } from "./store.js";

/** The subject (under the bus prefix) a status change is published on (@payments/contracts' DEPOSIT_STATUS_TOPICS). No move leads to pending. */
export function depositTopic(status: DepositStatusName): string {
  if (status === "pending") throw new Error("no move leads a deposit to pending, so it has no topic");
  return DEPOSIT_STATUS_TOPICS[status];
}

export const DEPOSIT_TOPICS: string[] = Object.values(DEPOSIT_STATUS_TOPICS);

export interface MoveRequest {
  depositId: string;
  move: DepositMove;
  /** When set, a deposit of another merchant is not found. */
  merchantId?: string;
  /** complete: the amount actually received (default: the requested amount). */
  amount?: number;
  /** fail: the reason. */
  failureReason?: string;
  /** complete: the incoming transfer that paid it. */
  transferId?: string;
  /** complete: how that transfer was matched (kept with the deposit for operators). */
  match?: { by: string; score: number; reasons: readonly string[] };
  /** complete: who completed it, in words (the paying transfer's reporter, or the operator). */
  completedBy?: string;
  /** A repeat of a move that already happened returns the deposit instead of refusing (cancel). */
  idempotent?: boolean;
}

export interface MoveResult {
  row: DepositRow;
  /** False when nothing changed (an idempotent repeat). */
  moved: boolean;
  eventId?: string;
}

/**
 * Applies one move of the state machine inside `trx`: the row is locked, the move decided
 * on its current status, then applied as a conditional update together with its event in
 * the outbox. Two racing moves serialise on the row; the second finds the deposit final
 * and is refused (INVALID_TRANSACTION_STATE), so a deposit reaches one final state and
 * publishes one event. The caller commits and nudges the outbox.
 */
export async function moveDeposit(trx: Knex.Transaction, clock: Clock, request: MoveRequest): Promise<MoveResult> {
  const current = await getDepositRow(trx, { depositId: request.depositId, merchantId: request.merchantId }, { lock: true });
  return heldUnderLock(await applyMove(trx, clock, current, request), DEPOSITS, current);
}

/**
 * The same move decided on a row read WITHOUT a lock (`seen`), for the hot path of a bank
 * report: the conditional UPDATE (`… WHERE status = <from>`) takes the row's lock itself and is
 * the guard. "stale" when the deposit moved since it was read (another transfer paid it, it
 * expired): nothing was written, and the caller decides again on what is there now. Every move
 * changes the status, so a row still in `from` is exactly the row that was read, and the event
 * is built from it without reading it again.
 */
export function moveDepositSeen(trx: Knex.Transaction, clock: Clock, seen: DepositRow, request: MoveRequest): Promise<MoveResult | "stale"> {
  return applyMove(trx, clock, seen, request);
}

/** The deposits table as the state-move helper sees it. */
const DEPOSITS: StateTable<DepositRow, DepositStatusName> = { name: "deposits", id: "id", status: "status", statusOf: rowStatus, sequence: "sequence" };

async function applyMove(trx: Knex.Transaction, clock: Clock, current: DepositRow, request: MoveRequest): Promise<MoveResult | "stale"> {
  const result = await applyStateMove(trx, clock, {
    table: DEPOSITS,
    row: current,
    move: request.move,
    decide: (from, move) => decideMove(from, move, { idempotent: request.idempotent }),
    patch: (_moved, now) => {
      const patch: Partial<DepositRow> = { updated_at: now, completed_at: now };
      if (request.move === "complete" || request.move === "complete_late") {
        patch.amount = request.amount ?? current.requested_amount;
        if (request.transferId !== undefined) patch.transfer_id = request.transferId;
        if (request.completedBy) patch.completed_by = request.completedBy.slice(0, 500);
      }
      if (request.move === "complete_late") patch.late_payment = true;
      if (request.match) {
        patch.match_by = request.match.by;
        patch.match_score = request.match.score;
        patch.match_reasons = JSON.stringify(request.match.reasons);
      }
      if (request.move === "fail") patch.failure_reason = request.failureReason ?? "";
      return patch;
    },
    event: (row, moved, now) => ({
      topic: depositTopic(moved.to),
      schema: DepositStatusChangedSchema,
      init: { deposit: depositFromRow(row), previousStatus: statusToProto(moved.from), occurredAt: timestampFromMs(now) },
    }),
  });
  if (result === "stale") return "stale";
  if (!result.moved) return { row: result.row, moved: false };
  return { row: result.row, moved: true, eventId: result.eventId };
}
