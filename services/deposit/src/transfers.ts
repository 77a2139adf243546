import { forUpdate, isUniqueViolation, newId } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositContext } from "./context.js";
import { moveDeposit } from "./deposit-moves.js";
import { matchTransfer, type MatchCandidate } from "./matching.js";
import type { DepositRow, TransferRow } from "./store.js";

export interface TransferReport {
  /** Normalised (electronic format). */
  iban: string;
  amount: number;
  currency: string;
  senderName: string;
  reference: string;
  bankTransactionId: string;
}

export interface TransferOutcome {
  transfer: TransferRow;
  /** The deposit this transfer completed, now or when it was first reported. */
  deposit?: DepositRow;
  duplicate: boolean;
}

async function existingOutcome(db: Knex, iban: string, bankTransactionId: string): Promise<TransferOutcome | undefined> {
  const transfer = (await db("incoming_transfers").where({ iban, bank_transaction_id: bankTransactionId }).first()) as TransferRow | undefined;
  if (!transfer) return undefined;
  const deposit = transfer.deposit_id ? ((await db("deposits").where({ id: transfer.deposit_id }).first()) as DepositRow | undefined) : undefined;
  return { transfer, deposit, duplicate: true };
}

/**
 * One incoming bank transfer: recorded once per (IBAN, bank transaction id), matched to a
 * pending deposit assigned to that IBAN (by reference, else by amount), which it completes
 * with the amount received. The pending deposits of the account are locked while matching,
 * so two transfers never both pay one deposit and a racing expiry or cancel either happens
 * first (the transfer stays unmatched) or waits. A transfer that matches nothing is kept
 * for an operator. Bank integrations and the sandbox's "simulate payment" both come here.
 */
export async function recordTransfer(ctx: DepositContext, report: TransferReport): Promise<TransferOutcome> {
  const earlier = await existingOutcome(ctx.db, report.iban, report.bankTransactionId);
  if (earlier) return earlier;
  try {
    const outcome = await ctx.db.transaction(async (trx) => {
      const candidates = (await forUpdate(
        trx,
        trx("deposits").where({ account_iban: report.iban, status: "pending" }).orderBy("id"),
      )) as DepositRow[];
      const match = matchTransfer(
        report,
        candidates.map(
          (row): MatchCandidate => ({
            id: row.id,
            reference: row.reference,
            requestedAmount: Number(row.requested_amount),
            currency: row.currency,
            createdAt: Number(row.created_at),
          }),
        ),
      );
      const transfer: TransferRow = {
        id: newId("trf"),
        iban: report.iban,
        bank_transaction_id: report.bankTransactionId,
        amount: report.amount,
        currency: report.currency,
        sender_name: report.senderName,
        reference: report.reference,
        deposit_id: match.kind === "matched" ? match.depositId : null,
        unmatched_reason: match.kind === "unmatched" ? match.reason : null,
        reported_at: ctx.clock.now().getTime(),
      };
      await trx("incoming_transfers").insert(transfer);
      if (match.kind === "unmatched") return { transfer, duplicate: false };
      const moved = await moveDeposit(trx, ctx.clock, { depositId: match.depositId, move: "complete", amount: report.amount, transferId: transfer.id });
      return { transfer, deposit: moved.row, duplicate: false, by: match.by };
    });
    if (outcome.deposit) {
      ctx.outbox.nudge();
      ctx.logger.info({ depositId: outcome.deposit.id, transferId: outcome.transfer.id, amount: report.amount }, "incoming transfer completed a deposit");
    } else {
      ctx.logger.warn({ transferId: outcome.transfer.id, iban: report.iban, reason: outcome.transfer.unmatched_reason }, "incoming transfer matched no deposit");
    }
    return outcome;
  } catch (err) {
    // The same report arriving twice at once: the index lets one in; the other reads it.
    if (isUniqueViolation(err)) {
      const raced = await existingOutcome(ctx.db, report.iban, report.bankTransactionId);
      if (raced) return raced;
    }
    throw err;
  }
}
