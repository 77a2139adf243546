import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { TRANSFER_RETURN_COMPLETED_TOPIC, TRANSFER_RETURN_FAILED_TOPIC } from "@payments/contracts";
import { TransferReturnChangedSchema, TransferReturnSchema, type TransferReturn } from "@payments/contracts/payout";
import { isTransferReturnStatusName, transferReturnStatusFromProto, transferReturnStatusToProto, type TransferReturnStatusName } from "@payments/contracts/statuses";
import { applyStateMove, forUpdate, heldUnderLock, isUniqueViolation, newId, recordEvent, serviceError, transactionWithRetry, validationError, type Clock, type StateTable } from "@payments/kit";
import type { Knex } from "knex";
import type { PayoutContext } from "./context.js";
import { turkishIbanProblem } from "./requests.js";

/**
 * Transfer returns: the money of an incoming transfer nobody could match, paid back to its
 * sender. The deposit service holds that money in suspense and asks for the return; here it
 * goes out through the same bank connectors as withdrawals (src/transfer-return-worker.ts).
 *
 * Unlike a withdrawal a return belongs to no merchant, so nothing here ever posts to the
 * ledger or touches a balance: a return's moves are its status, its bookkeeping columns and,
 * when it becomes final, its TransferReturnChanged event in the outbox, which the deposit
 * service consumes to mark the transfer returned (or unmatched again).
 */

// The statuses (and the text the `status` column stores) are @payments/contracts/statuses'.
export { TRANSFER_RETURN_STATUSES, type TransferReturnStatusName } from "@payments/contracts/statuses";

export interface TransferReturnRow {
  id: string;
  transfer_id: string;
  attempt: number;
  status: string;
  amount: number;
  currency: string;
  iban: string;
  recipient_name: string;
  sandbox: boolean | number;
  reason: string;
  actor: string;
  failure_reason: string | null;
  dispatched_at: number | null;
  dispatch_attempts: number;
  bank_reference: string | null;
  awaiting_operator: boolean | number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

export const returnStatusFromProto = transferReturnStatusFromProto;

export function returnRowStatus(row: Pick<TransferReturnRow, "status" | "id">): TransferReturnStatusName {
  if (!isTransferReturnStatusName(row.status)) throw new Error(`transfer return ${row.id} has an unknown status ${row.status}`);
  return row.status;
}

/** The topic a final status is published on; pending → processing is not published (the deposit service waits for the outcome only). */
export function transferReturnTopic(status: "completed" | "failed"): string {
  return status === "completed" ? TRANSFER_RETURN_COMPLETED_TOPIC : TRANSFER_RETURN_FAILED_TOPIC;
}

export function transferReturnFromRow(row: TransferReturnRow): TransferReturn {
  const status = returnRowStatus(row);
  return create(TransferReturnSchema, {
    id: row.id,
    transferId: row.transfer_id,
    attempt: Number(row.attempt),
    iban: row.iban,
    recipientName: row.recipient_name,
    amount: BigInt(row.amount),
    currency: row.currency,
    sandbox: Boolean(row.sandbox),
    status: transferReturnStatusToProto(status),
    // As for withdrawals: the column keeps the connector's answer after the decision; the flag is about now.
    awaitingOperator: status === "processing" && Boolean(row.awaiting_operator),
    bankReference: row.bank_reference ?? "",
    failureReason: row.failure_reason ?? "",
    reason: row.reason,
    actor: row.actor,
    createdAt: timestampFromMs(Number(row.created_at)),
    updatedAt: timestampFromMs(Number(row.updated_at)),
    completedAt: row.completed_at === null ? undefined : timestampFromMs(Number(row.completed_at)),
  });
}

/** The return, or TRANSACTION_NOT_FOUND. `lock` holds it until the transaction ends. */
export async function getTransferReturnRow(db: Knex, id: string, options: { lock?: boolean } = {}): Promise<TransferReturnRow> {
  const query = db("transfer_returns").where({ id }).first();
  const row = (await (options.lock ? forUpdate(db, query) : query)) as TransferReturnRow | undefined;
  if (!row) throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", `no transfer return ${id}`);
  return row;
}

/** The transfer's latest return attempt (the only one that can be open), or undefined. */
export async function latestReturnOfTransfer(db: Knex, transferId: string): Promise<TransferReturnRow | undefined> {
  return (await db("transfer_returns").where({ transfer_id: transferId }).orderBy("attempt", "desc").first()) as TransferReturnRow | undefined;
}

/** start: the worker takes it; complete/fail: the bank's answer or an operator. */
export type TransferReturnMove = "start" | "complete" | "fail";

const MOVES: Readonly<Record<TransferReturnMove, { from: TransferReturnStatusName; to: TransferReturnStatusName }>> = {
  start: { from: "pending", to: "processing" },
  complete: { from: "processing", to: "completed" },
  fail: { from: "processing", to: "failed" },
};

export type TransferReturnMoveOutcome =
  | { kind: "moved"; from: TransferReturnStatusName; to: TransferReturnStatusName }
  | { kind: "refused"; status: TransferReturnStatusName; message: string };

/** What `move` does to a return in `status`: each move starts from exactly one status. */
export function decideTransferReturnMove(status: TransferReturnStatusName, move: TransferReturnMove): TransferReturnMoveOutcome {
  const { from, to } = MOVES[move];
  if (status === from) return { kind: "moved", from, to };
  return { kind: "refused", status, message: `the transfer return is ${status}; only a ${from} one can move to ${to}` };
}

/** The transfer returns table as the state-move helper sees it. */
const TRANSFER_RETURNS: StateTable<TransferReturnRow, TransferReturnStatusName> = { name: "transfer_returns", id: "id", status: "status", statusOf: returnRowStatus };

export interface TransferReturnMoveRequest {
  id: string;
  move: TransferReturnMove;
  /** fail: why. */
  failureReason?: string;
  /** Extra columns to set with the move (the worker's bookkeeping, the operator's reference). */
  patch?: Partial<Pick<TransferReturnRow, "dispatched_at" | "dispatch_attempts" | "bank_reference" | "awaiting_operator">>;
}

/**
 * Applies one move inside `trx`: lock the row, decide on its status, a conditional update and,
 * for a final status, the TransferReturnChanged event in the outbox, all or nothing. A move
 * that no longer applies (a racing answer or operator decided first) is refused with
 * INVALID_TRANSACTION_STATE and changes nothing. No ledger entry: the money is not a merchant's.
 */
export async function moveTransferReturn(trx: Knex.Transaction, clock: Clock, request: TransferReturnMoveRequest): Promise<TransferReturnRow> {
  const current = await getTransferReturnRow(trx, request.id, { lock: true });
  const result = await applyStateMove(trx, clock, {
    table: TRANSFER_RETURNS,
    row: current,
    move: request.move,
    decide: decideTransferReturnMove,
    patch: ({ to }, now) => {
      const patch: Partial<TransferReturnRow> = { ...request.patch, updated_at: now };
      if (to !== "processing") patch.completed_at = now;
      if (to === "failed") patch.failure_reason = request.failureReason || "FAILED";
      return patch;
    },
    effects: () => getTransferReturnRow(trx, current.id),
    event: (row, { to }, now) =>
      to === "completed" || to === "failed"
        ? { topic: transferReturnTopic(to), schema: TransferReturnChangedSchema, init: { transferReturn: transferReturnFromRow(row), occurredAt: timestampFromMs(now) } }
        : undefined,
  });
  return heldUnderLock(result, TRANSFER_RETURNS, current).row;
}

/**
 * An operator may decide a processing return only when the bank cannot still decide it behind
 * their back: the connector left it to an operator, or it was never handed to the bank. While
 * a send is in flight or due to be repeated, the bank may still pay it, and failing it would
 * let the deposit service return (or match) the same money again. Runs inside the move's
 * transaction; the move itself refuses any other status.
 */
export async function requireReturnOperatorDecidable(trx: Knex.Transaction, ctx: PayoutContext, id: string): Promise<TransferReturnRow> {
  const row = await getTransferReturnRow(trx, id, { lock: true });
  if (returnRowStatus(row) !== "processing") return row;
  if (Boolean(row.awaiting_operator) || row.dispatched_at === null) return row;
  throw serviceError(
    Code.FailedPrecondition,
    "BANK_ANSWER_PENDING",
    `transfer return ${row.id} is with the bank and its answer is still awaited; the worker sends it again with the same key every ${Math.round(ctx.config.PAYOUT_RESEND_AFTER / 1000)} s until the bank decides`,
  );
}

/** What a return is created from: the RPC's request or the deposit service's TransferReturnRequested event. */
export interface ReturnRequest {
  transferId: string;
  /** 0: the next attempt after a failed one (or the open one); N: exactly attempt N. */
  attempt: number;
  /** Normalised (electronic form). */
  iban: string;
  recipientName: string;
  amount: number;
  currency: string;
  sandbox: boolean;
  reason: string;
  actor: string;
}

/**
 * What makes a request impossible to pay, beyond its fields' shapes: an IBAN that is not a
 * valid Turkish one (INVALID_IBAN, as for withdrawals) or a currency this service does not
 * pay out. `code` is the failure reason a refused event's attempt is recorded with.
 */
export function returnRequestProblem(ctx: PayoutContext, request: ReturnRequest): { code: string; error: Error } | undefined {
  const ibanProblem = turkishIbanProblem(request.iban);
  if (ibanProblem) return { code: "INVALID_IBAN", error: serviceError(Code.InvalidArgument, "INVALID_IBAN", `iban: ${ibanProblem}`, { field: "iban" }) };
  if (!ctx.config.SUPPORTED_CURRENCIES.includes(request.currency)) {
    return { code: "UNSUPPORTED_CURRENCY", error: validationError("currency", `currency: ${request.currency} is not paid out here (supported: ${ctx.config.SUPPORTED_CURRENCIES.join(", ")})`) };
  }
  if (!(Number.isSafeInteger(request.amount) && request.amount > 0)) return { code: "INVALID_AMOUNT", error: validationError("amount", "amount: must be a positive integer") };
  if (request.recipientName.trim() === "") return { code: "NO_RECIPIENT_NAME", error: validationError("recipient_name", "recipient_name: is required") };
  return undefined;
}

function newAttemptRow(ctx: PayoutContext, request: ReturnRequest, attempt: number): TransferReturnRow {
  const now = ctx.clock.now().getTime();
  return {
    id: newId("trr"),
    transfer_id: request.transferId,
    attempt,
    status: "pending",
    amount: request.amount,
    currency: request.currency,
    iban: request.iban,
    recipient_name: request.recipientName.slice(0, 200),
    sandbox: request.sandbox,
    reason: request.reason.slice(0, 500),
    actor: request.actor.slice(0, 200),
    failure_reason: null,
    dispatched_at: null,
    dispatch_attempts: 0,
    bank_reference: null,
    awaiting_operator: false,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
}

/**
 * Creates the return attempt a request names, once (see ReturnRequest.attempt). `failedWith`
 * records the attempt as failed at once, with its TransferReturnChanged event, so the deposit
 * service hears back about a request that cannot be paid instead of waiting forever.
 */
export async function createReturnAttempt(ctx: PayoutContext, request: ReturnRequest, failedWith?: string): Promise<{ row: TransferReturnRow; created: boolean }> {
  const existing = async () => {
    const row = request.attempt > 0
      ? ((await ctx.db("transfer_returns").where({ transfer_id: request.transferId, attempt: request.attempt }).first()) as TransferReturnRow | undefined)
      : await latestReturnOfTransfer(ctx.db, request.transferId);
    return row && (request.attempt > 0 || returnRowStatus(row) !== "failed") ? row : undefined;
  };
  const earlier = await existing();
  if (earlier) return { row: earlier, created: false };
  const latest = request.attempt > 0 ? undefined : await latestReturnOfTransfer(ctx.db, request.transferId);
  const row = newAttemptRow(ctx, request, request.attempt > 0 ? request.attempt : (latest ? Number(latest.attempt) : 0) + 1);
  try {
    await transactionWithRetry(ctx.db, async (trx) => {
      if (!failedWith) {
        await trx("transfer_returns").insert(row);
        return;
      }
      Object.assign(row, { status: "failed", failure_reason: failedWith.slice(0, 100), completed_at: row.created_at });
      await trx("transfer_returns").insert(row);
      await recordEvent(trx, ctx.clock, transferReturnTopic("failed"), TransferReturnChangedSchema, { transferReturn: transferReturnFromRow(row), occurredAt: timestampFromMs(row.created_at) });
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const raced = await existing();
      if (raced) return { row: raced, created: false };
    }
    throw err;
  }
  if (failedWith) ctx.outbox.nudge();
  ctx.logger.info(
    { transferReturnId: row.id, transferId: row.transfer_id, attempt: row.attempt, amount: row.amount, currency: row.currency, sandbox: request.sandbox, actor: request.actor, failedWith },
    failedWith ? "transfer return refused: it cannot be paid" : "transfer return created",
  );
  return { row, created: true };
}
