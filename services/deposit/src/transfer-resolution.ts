import { Code } from "@connectrpc/connect";
import { isTurkishIban, serviceError, validationError } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositContext } from "./context.js";
import { moveDeposit, type MoveResult } from "./deposit-moves.js";
import { getDepositRow, type TransferRow } from "./store.js";
import { applyTransferMove, type Decider } from "./transfer-moves.js";

/**
 * An operator's decisions on an open transfer (unmatched, or in review), each one move of
 * transfer-state.ts applied with transfer-moves.ts inside the caller's transaction, which has
 * locked the transfer (lockTransfer) and asked the catalog what it needs beforehand (no call
 * is made while rows are locked).
 */

/** The transfer, unlocked (to learn what to ask before the transaction); NOT_FOUND (TRANSFER_NOT_FOUND) when there is none. */
export async function findTransfer(db: Knex, transferId: string): Promise<TransferRow> {
  const transfer = (await db("incoming_transfers").where({ id: transferId }).first()) as TransferRow | undefined;
  if (!transfer) throw serviceError(Code.NotFound, "TRANSFER_NOT_FOUND", `no incoming transfer ${transferId}`);
  return transfer;
}

/**
 * Gives an open transfer to a deposit: completes it with the transfer's amount (unless the
 * operator names another) — pending by the usual move, expired by the late-payment move —
 * and moves the transfer to matched (its money leaves suspense, the decision is recorded).
 * `move` is `match` (a deposit the operator names) or `complete` (the one it waits on in
 * review). One transaction, with the deposit's event in the outbox.
 */
export async function giveTransferToDeposit(
  trx: Knex.Transaction,
  ctx: DepositContext,
  transfer: TransferRow,
  depositId: string,
  decider: Decider,
  options: { amount?: number; move?: "match" | "complete"; transferSandbox: boolean; /** Who completes the deposit, in words (the operator deciding). */ completedBy?: string },
): Promise<MoveResult> {
  const move = options.move ?? "match";
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
  // The transfer first: a transfer that is no longer open is refused before the deposit moves.
  await applyTransferMove(trx, ctx.clock, transfer, { move, ...decider, depositId, resolves: true, patch: { deposit_id: depositId, late } });
  return moveDeposit(trx, ctx.clock, {
    depositId,
    move: late ? "complete_late" : "complete",
    amount: options.amount ?? Number(transfer.amount),
    transferId: transfer.id,
    match: { by: "operator", score: 1, reasons: [`${move === "complete" ? "completed" : "matched"} by ${decider.actor}: ${decider.reason}`] },
    completedBy: options.completedBy ?? decider.actor,
  });
}

/** An in-review transfer's deposit is not to be paid by it: the transfer becomes unmatched, its money stays in suspense. */
export async function refuseTransfer(trx: Knex.Transaction, ctx: DepositContext, transfer: TransferRow, decider: Decider): Promise<TransferRow> {
  return applyTransferMove(trx, ctx.clock, transfer, { move: "refuse", ...decider, depositId: transfer.review_deposit_id, resolves: true });
}

/**
 * Where an operator's return goes: the IBAN they give, else the one the bank reported; the
 * name they give, else the sender name the bank reported. Without either there is nowhere (or
 * nobody) to pay, and the refusal says what to give.
 */
export function returnTarget(transfer: TransferRow, given: { iban: string; recipientName: string }): { iban: string; recipientName: string } {
  const iban = given.iban || transfer.sender_iban || "";
  if (!iban) throw validationError("iban", "iban: the bank gave no sender IBAN for this transfer; give the IBAN to return it to (--iban)");
  // Returns are paid like withdrawals, to Turkish IBANs only (a foreign sender is an operator's case for the bank).
  if (!isTurkishIban(iban)) throw serviceError(Code.InvalidArgument, "INVALID_IBAN", `iban: ${iban} is not a valid Turkish IBAN; a return is paid to a Turkish IBAN (--iban)`, { field: "iban" });
  const recipientName = given.recipientName || transfer.sender_name.trim();
  if (!recipientName) throw validationError("recipient_name", "recipient_name: the bank named no sender for this transfer; give the recipient's name for the return (--name)");
  return { iban, recipientName };
}
