import { Code } from "@connectrpc/connect";
import { forUpdate, serviceError, validationError } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositContext } from "./context.js";
import { moveDeposit, type MoveResult } from "./deposit-moves.js";
import { getDepositRow, type TransferRow } from "./store.js";
import { recordSuspense } from "./suspense.js";
import { recordTransferAction } from "./transfer-actions.js";

/** Who decided and why: every operator decision on a transfer records both. */
export interface Decider {
  actor: string;
  reason: string;
}

/** The transfer, unlocked (to learn what to ask before the transaction); NOT_FOUND (TRANSFER_NOT_FOUND) when there is none. */
export async function findTransfer(db: Knex, transferId: string): Promise<TransferRow> {
  const transfer = (await db("incoming_transfers").where({ id: transferId }).first()) as TransferRow | undefined;
  if (!transfer) throw serviceError(Code.NotFound, "TRANSFER_NOT_FOUND", `no incoming transfer ${transferId}`);
  return transfer;
}

/** The transfer, locked; NOT_FOUND (TRANSFER_NOT_FOUND) when there is none. */
export async function lockTransfer(trx: Knex.Transaction, transferId: string): Promise<TransferRow> {
  const transfer = (await forUpdate(trx, trx("incoming_transfers").where({ id: transferId }).first())) as TransferRow | undefined;
  if (!transfer) throw serviceError(Code.NotFound, "TRANSFER_NOT_FOUND", `no incoming transfer ${transferId}`);
  return transfer;
}

/** Only what is still open (unmatched or in review) can be decided on; a transfer is resolved once. */
export function requireOpen(transfer: TransferRow): void {
  if (transfer.status !== "unmatched" && transfer.status !== "review") {
    throw serviceError(Code.FailedPrecondition, "TRANSFER_NOT_OPEN", `transfer ${transfer.id} is ${transfer.status}; only an unmatched or in-review transfer can be resolved`, {
      details: { status: transfer.status, depositId: transfer.deposit_id ?? "" },
    });
  }
}

/**
 * Gives an open transfer to a deposit: completes it with the transfer's amount (unless the
 * operator names another) — pending by the usual move, expired by the late-payment move —
 * takes the money out of suspense, marks the transfer matched and records the decision.
 * One transaction, with the deposit's event in the outbox.
 */
export async function giveTransferToDeposit(
  trx: Knex.Transaction,
  ctx: DepositContext,
  transfer: TransferRow,
  depositId: string,
  decider: Decider,
  options: { amount?: number; action?: "matched" | "completed"; transferSandbox: boolean },
): Promise<MoveResult> {
  requireOpen(transfer);
  const deposit = await getDepositRow(trx, { depositId }, { lock: true });
  if (deposit.currency !== transfer.currency) {
    throw validationError("deposit_id", `deposit_id: the transfer is in ${transfer.currency}, the deposit in ${deposit.currency}`);
  }
  // Sandbox and live never mix: money that arrived on a sandbox account cannot pay a live
  // deposit (a live balance would hold made-up money), nor live money a sandbox deposit.
  if (Boolean(deposit.sandbox) !== options.transferSandbox) {
    throw serviceError(
      Code.FailedPrecondition,
      "SANDBOX_MISMATCH",
      `the transfer arrived on a ${options.transferSandbox ? "sandbox" : "live"} account and cannot pay a ${deposit.sandbox ? "sandbox" : "live"} deposit`,
    );
  }
  const late = deposit.status === "expired";
  const moved = await moveDeposit(trx, ctx.clock, {
    depositId,
    move: late ? "complete_late" : "complete",
    amount: options.amount ?? Number(transfer.amount),
    transferId: transfer.id,
    match: { by: "operator", score: 1, reasons: [`${options.action ?? "matched"} by ${decider.actor}: ${decider.reason}`] },
  });
  const now = ctx.clock.now().getTime();
  await trx("incoming_transfers")
    .where({ id: transfer.id })
    .update({ status: "matched", deposit_id: depositId, late, resolved_by: decider.actor, resolved_at: now, resolution: decider.reason });
  await recordSuspense(trx, transfer, "released", now, depositId);
  await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: options.action ?? "matched", actor: decider.actor, reason: decider.reason, depositId });
  return moved;
}

/** An in-review transfer's deposit is not to be paid by it: the transfer becomes unmatched, its money stays in suspense. */
export async function refuseTransfer(trx: Knex.Transaction, ctx: DepositContext, transfer: TransferRow, decider: Decider): Promise<void> {
  if (transfer.status !== "review") {
    throw serviceError(Code.FailedPrecondition, "TRANSFER_NOT_OPEN", `transfer ${transfer.id} is ${transfer.status}; only a transfer in review can be refused`, { details: { status: transfer.status } });
  }
  await trx("incoming_transfers")
    .where({ id: transfer.id })
    .update({ status: "unmatched", resolved_by: decider.actor, resolved_at: ctx.clock.now().getTime(), resolution: decider.reason });
  await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: "refused", actor: decider.actor, reason: decider.reason, depositId: transfer.review_deposit_id });
}
