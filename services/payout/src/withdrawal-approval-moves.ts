import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { WITHDRAWAL_APPROVED_TOPIC } from "@payments/contracts";
import { WithdrawalApprovedSchema } from "@payments/contracts/payout";
import { applyStateMove, claimTransaction, forUpdateSkipLocked, heldUnderLock, serviceError, startJob, type Clock, type StateTable, type Stoppable } from "@payments/kit";
import type { Knex } from "knex";
import type { PayoutContext } from "./context.js";
import { getWithdrawalRow, rowApproval, rowStatus, withdrawalFromRow, type WithdrawalRow } from "./store.js";
import { decideApproval, type ApprovalDecision, type ApprovalOutcome, type ApprovalStateName } from "./withdrawal-approval.js";
import { moveLockedWithdrawal, moveLockedWithdrawals, type LockedMove } from "./withdrawal-moves.js";

/**
 * Applying the merchant's four-eyes decisions (src/withdrawal-approval.ts) to a withdrawal,
 * each under the withdrawal's row lock and decided on what the lock shows, as one state move
 * with its outbox row in the caller's transaction:
 * - approve: the approval column's own move (awaiting → approved), conditional on it still
 *   waiting, with an internal WithdrawalApproved event; the withdrawal stays pending and the
 *   worker, which never claims one that waits, sends it from the next claim on;
 * - reject and expire: the withdrawal's cancel (pending → cancelled, the hold released, its
 *   `withdrawal_cancelled` event: the merchant's callback), with APPROVAL_REJECTED or
 *   APPROVAL_EXPIRED and the approval's end in the same conditional update.
 * Two approvers, an approver and a rejecter, or a person and the expiry job meet on the lock;
 * the second finds the approval decided (APPROVAL_NOT_PENDING) and changes nothing.
 */

/** The approval column as the state-move helper sees it: the same rows, another status column. */
const APPROVALS: StateTable<WithdrawalRow, ApprovalStateName | "none"> = { name: "withdrawals", id: "id", status: "approval", statusOf: (row) => rowApproval(row) ?? "none" };

export interface ApprovalDecisionRequest {
  withdrawalId: string;
  /** The merchant whose withdrawal it must be: another merchant's is TRANSACTION_NOT_FOUND. */
  merchantId: string;
  decision: Exclude<ApprovalDecision, "expire">;
  /** Who decides, in words (callerAttribution). */
  by: string;
  /** A rejecter's reason. */
  note?: string;
}

function refusal(outcome: Extract<ApprovalOutcome, { kind: "refused" }>, row: WithdrawalRow): Error {
  if (outcome.reason === "INVALID_TRANSACTION_STATE") return serviceError(Code.FailedPrecondition, outcome.reason, outcome.message, { details: { status: row.status } });
  return serviceError(Code.FailedPrecondition, outcome.reason, outcome.message, { details: { approval: row.approval ?? "" } });
}

function factsOf(row: WithdrawalRow) {
  return { status: rowStatus(row), approval: rowApproval(row), expiresAt: row.approval_expires_at == null ? null : Number(row.approval_expires_at) };
}

/** A person's approval or rejection, inside `trx`: the withdrawal locked, the rule decided on it, the move applied. The withdrawal as it is after. */
export async function decideWithdrawalApproval(trx: Knex.Transaction, clock: Clock, request: ApprovalDecisionRequest): Promise<WithdrawalRow> {
  const current = await getWithdrawalRow(trx, { withdrawalId: request.withdrawalId, merchantId: request.merchantId }, { lock: true });
  const now = clock.now().getTime();
  const outcome = decideApproval(factsOf(current), request.decision, now);
  if (outcome.kind === "refused") throw refusal(outcome, current);
  const by = request.by.slice(0, 500);
  const decided = { approval_decided_by: by, approval_decided_at: now, ...(request.note ? { approval_note: request.note.slice(0, 500) } : {}) };
  if (outcome.kind === "cancel") {
    const moved = await moveLockedWithdrawal(trx, clock, current, {
      withdrawalId: current.id,
      move: "cancel",
      failureReason: outcome.failureReason,
      patch: { approval: outcome.to, ...decided },
      actor: by,
    });
    return moved.row;
  }
  const result = await applyStateMove(trx, clock, {
    table: APPROVALS,
    row: current,
    move: request.decision,
    // Decided above on the locked row; the helper writes it as `… WHERE approval = 'awaiting'`.
    decide: () => ({ kind: "moved" as const, to: outcome.to }),
    patch: () => decided,
    event: (row, _moved, at) => ({
      topic: WITHDRAWAL_APPROVED_TOPIC,
      schema: WithdrawalApprovedSchema,
      init: { withdrawal: withdrawalFromRow(row), approvedBy: by, occurredAt: timestampFromMs(at) },
    }),
  });
  return heldUnderLock(result, APPROVALS, current).row;
}

/** A setting's milliseconds as it would be written (24h, 90m, 30s, 500ms). */
function durationText(ms: number): string {
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** Who ended an approval nobody decided in time, as the withdrawal and its ledger release record it. */
export function expiryActor(ctx: Pick<PayoutContext, "config">): string {
  return `payout approval expiry: undecided after ${durationText(ctx.config.WITHDRAWAL_APPROVAL_TTL)}`;
}

/**
 * Cancels the withdrawals whose approval lapsed (APPROVAL_EXPIRED, the hold released, their
 * callbacks), a batch per transaction: claimed with SKIP LOCKED so replicas share the work and
 * a person deciding one at this moment holds it (their decision comes first, and this pass skips
 * it), each decided again under its lock by the same rule. Returns how many it cancelled.
 */
export async function expireWithdrawalApprovals(ctx: PayoutContext, batchSize = 100): Promise<number> {
  const actor = expiryActor(ctx);
  let total = 0;
  for (;;) {
    const now = ctx.clock.now().getTime();
    const { scanned, cancelled } = await claimTransaction(ctx.db, async (trx) => {
      const due = (await forUpdateSkipLocked(
        trx,
        trx("withdrawals").select("*").where({ approval: "awaiting", status: "pending" }).where("approval_expires_at", "<=", now).orderBy("approval_expires_at").limit(batchSize),
      )) as WithdrawalRow[];
      const moves: LockedMove[] = due.flatMap((row) => {
        const outcome = decideApproval(factsOf(row), "expire", now);
        if (outcome.kind !== "cancel") return [];
        const patch = { approval: outcome.to, approval_decided_by: actor, approval_decided_at: now };
        return [{ row, request: { withdrawalId: row.id, move: "cancel" as const, failureReason: outcome.failureReason, patch, actor } }];
      });
      const results = await moveLockedWithdrawals(trx, ctx.clock, moves);
      return { scanned: due.length, cancelled: results.filter((r) => !("refused" in r) && r.moved).length };
    });
    total += cancelled;
    if (cancelled > 0) ctx.outbox.nudge();
    if (scanned < batchSize) return total;
  }
}

/** Runs expireWithdrawalApprovals every WITHDRAWAL_APPROVAL_EXPIRY_INTERVAL until stopped (job `withdrawal-approval-expiry`). */
export function startApprovalExpiryJob(ctx: PayoutContext): Stoppable {
  const interval = ctx.config.WITHDRAWAL_APPROVAL_EXPIRY_INTERVAL;
  return startJob({
    name: "withdrawal-approval-expiry",
    intervalMs: interval,
    backoff: { initialMs: interval, maxMs: interval * 10 },
    logger: ctx.logger,
    metrics: ctx.metrics,
    failureMessage: "withdrawal approval expiry failed; will retry",
    recoveryMessage: "withdrawal approval expiry recovered",
    async run() {
      const count = await expireWithdrawalApprovals(ctx);
      if (count > 0) ctx.logger.info({ count }, "withdrawals cancelled: the merchant's approval was not decided in time");
    },
  });
}
