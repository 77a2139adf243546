import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { TRANSFER_RETURN_REQUESTED_TOPIC } from "@payments/contracts";
import { TransferReturnRequestedSchema } from "@payments/contracts/deposit";
import { applyStateMove, forUpdate, heldUnderLock, newId, serviceError, type Clock, type StateTable } from "@payments/kit";
import type { Knex } from "knex";
import type { TransferRow } from "./store.js";
import { decideTransferMove, SUSPENSE_SIGN, type SuspenseKind, type TransferActionName, type TransferMove, type TransferStatusName } from "./transfer-state.js";

/**
 * Applies the moves of transfer-state.ts inside the caller's transaction: the status (a
 * conditional UPDATE, or the INSERT of an arrival), the suspense entry, the action record and,
 * for a return, the TransferReturnRequested event in the outbox, all or nothing. This is the
 * only code that writes a transfer's status.
 */

/** Who decided and why: an operator's name, "rules" (the merchant's paid-amount rules) or "payout". */
export interface Decider {
  actor: string;
  reason: string;
}

/** Where a return goes: asked for in the same transaction as the decision, through the outbox. */
export interface ReturnTo {
  iban: string;
  recipientName: string;
  /** The money arrived on a sandbox receiving account: the sandbox connector pays it back. */
  sandbox: boolean;
}

export interface TransferMoveRequest extends Decider {
  move: TransferMove;
  /** The deposit the move is about (match, complete: the one it pays; refuse: the one refused). */
  depositId?: string | null;
  /** Columns set together with the status (the deposit it paid, late, …). */
  patch?: Partial<TransferRow>;
  /** request_return only. */
  returnTo?: ReturnTo;
  /** When it happened, if not now (a settlement carries the payout service's time). */
  at?: number;
  /** An operator's or a rule's decision: recorded on the transfer as its resolution. */
  resolves?: boolean;
}

/**
 * The move's decision on this transfer, or its refusal (TRANSFER_NOT_OPEN: the transfer is not
 * where the move starts, decided already or by someone else first). For a caller that must know
 * the move applies before it checks what else the move needs.
 */
export function requireMove(transfer: Pick<TransferRow, "id" | "status" | "deposit_id">, move: TransferMove) {
  const outcome = decideTransferMove(transfer.status, move);
  if (outcome.kind === "moved") return outcome;
  throw transferNotOpen(transfer, outcome);
}

function transferNotOpen(transfer: Pick<TransferRow, "id" | "status" | "deposit_id">, refusal: { message: string }): Error {
  return serviceError(Code.FailedPrecondition, "TRANSFER_NOT_OPEN", `transfer ${transfer.id}: ${refusal.message}`, {
    details: { status: transfer.status, depositId: transfer.deposit_id ?? "" },
  });
}

/** The incoming transfers table as the state-move helper sees it. */
const TRANSFERS: StateTable<TransferRow, TransferStatusName> = { name: "incoming_transfers", id: "id", status: "status", statusOf: (row) => row.status };

async function writeSuspense(trx: Knex.Transaction, transfer: Pick<TransferRow, "id" | "iban" | "currency" | "amount">, kind: SuspenseKind, at: number, depositId: string | null) {
  await trx("suspense_entries").insert({
    id: newId("sus"),
    iban: transfer.iban,
    currency: transfer.currency,
    transfer_id: transfer.id,
    amount: SUSPENSE_SIGN[kind] * Number(transfer.amount),
    kind,
    deposit_id: depositId,
    at,
  });
}

async function writeAction(trx: Knex.Transaction, transferId: string, action: TransferActionName, decider: Decider, depositId: string | null, at: number) {
  await trx("transfer_actions").insert({ id: newId("tra"), transfer_id: transferId, action, actor: decider.actor, reason: decider.reason, deposit_id: depositId, at });
}

/**
 * Records an arriving transfer (`record_matched`, `record_review` or `record_unmatched`): the
 * row in the status the move leads to, and the money in suspense when it waits. `completedBy`
 * records a late payment completed by the merchant's rule, the one arrival worth an action.
 * A second report of the same (iban, bank transaction id) fails on the unique index.
 */
export async function recordArrival(
  trx: Knex.Transaction,
  clock: Clock,
  row: Omit<TransferRow, "status">,
  move: "record_matched" | "record_review" | "record_unmatched",
  completedBy?: Decider,
): Promise<TransferRow> {
  const outcome = decideTransferMove(null, move);
  if (outcome.kind === "refused") throw new Error(outcome.message);
  const transfer: TransferRow = { ...row, status: outcome.to };
  await trx("incoming_transfers").insert(transfer);
  const at = Number(row.reported_at);
  if (outcome.spec.suspense) await writeSuspense(trx, transfer, outcome.spec.suspense, at, null);
  if (completedBy) await writeAction(trx, transfer.id, "completed", completedBy, transfer.deposit_id, clock.now().getTime());
  return transfer;
}

/** The transfer, locked until the transaction ends; NOT_FOUND (TRANSFER_NOT_FOUND) when there is none. */
export async function lockTransfer(trx: Knex.Transaction, transferId: string): Promise<TransferRow> {
  const transfer = (await forUpdate(trx, trx("incoming_transfers").where({ id: transferId }).first())) as TransferRow | undefined;
  if (!transfer) throw serviceError(Code.NotFound, "TRANSFER_NOT_FOUND", `no incoming transfer ${transferId}`);
  return transfer;
}

/**
 * Moves a recorded transfer, which the caller has locked (lockTransfer), in `trx`. A move
 * that does not start from its status is refused (TRANSFER_NOT_OPEN) and changes nothing.
 * Returns the row as the move left it.
 */
export async function applyTransferMove(trx: Knex.Transaction, clock: Clock, transfer: TransferRow, request: TransferMoveRequest): Promise<TransferRow> {
  const depositId = request.depositId ?? null;
  const result = await applyStateMove(trx, clock, {
    table: TRANSFERS,
    row: transfer,
    move: request.move,
    decide: decideTransferMove,
    refuse: (refusal) => transferNotOpen(transfer, refusal),
    patch: ({ spec }, now) => {
      const patch: Partial<TransferRow> = { ...request.patch };
      if (request.resolves) Object.assign(patch, { resolved_by: request.actor, resolved_at: now, resolution: request.reason });
      if (spec.requestsReturn) {
        if (!request.returnTo) throw new Error("a return is requested with where it goes");
        patch.return_attempts = Number(transfer.return_attempts ?? 0) + 1;
      }
      return patch;
    },
    effects: async (_moved, { spec }, now) => {
      const at = request.at ?? now;
      if (spec.suspense) await writeSuspense(trx, transfer, spec.suspense, at, spec.suspense === "released" ? depositId : null);
      if (spec.action) {
        const reason = spec.requestsReturn && request.returnTo ? `to ${request.returnTo.iban} (${request.returnTo.recipientName}): ${request.reason}` : request.reason;
        await writeAction(trx, transfer.id, spec.action, { actor: request.actor, reason }, depositId, now);
      }
    },
    event: (moved, { spec }, now) =>
      spec.requestsReturn && request.returnTo
        ? {
            topic: TRANSFER_RETURN_REQUESTED_TOPIC,
            schema: TransferReturnRequestedSchema,
            init: {
              transferId: transfer.id,
              attempt: moved.return_attempts ?? 1,
              iban: request.returnTo.iban,
              recipientName: request.returnTo.recipientName,
              amount: BigInt(transfer.amount),
              currency: transfer.currency,
              sandbox: request.returnTo.sandbox,
              reason: request.reason,
              actor: request.actor,
              occurredAt: timestampFromMs(now),
            },
          }
        : undefined,
  });
  // The caller holds the row's lock. Every transfer move changes the status: none answers "unchanged".
  return heldUnderLock(result, TRANSFERS, transfer).row;
}
