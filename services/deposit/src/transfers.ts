import { forUpdate, isUniqueViolation, newId } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositContext } from "./context.js";
import { moveDeposit } from "./deposit-moves.js";
import { lookupMerchant } from "./merchant-lookup.js";
import { matchTransfer, type MatchCandidate } from "./matching.js";
import { amountRelation, decideMatchedTransfer, DEFAULT_RULES, type PaidAmountRules } from "./paid-amount-rules.js";
import type { DepositRow, TransferRow } from "./store.js";
import { recordSuspense } from "./suspense.js";
import { recordTransferAction } from "./transfer-actions.js";
import { requestTransferReturn } from "./transfer-returns.js";

export interface TransferReport {
  /** Normalised (electronic format). */
  iban: string;
  amount: number;
  currency: string;
  senderName: string;
  /** The transfer description as the bank gave it (free text carrying the reference). */
  reference: string;
  bankTransactionId: string;
  /** YYYY-MM-DD, when the bank's record has one (statements, feeds). */
  valueDate?: string;
  senderIban?: string;
  /** api (ReportTransfer), mt940, feed:<feedId>, sandbox. */
  source?: string;
}

export interface TransferOutcome {
  transfer: TransferRow;
  /** The deposit this transfer completed, now or when it was first reported. */
  deposit?: DepositRow;
  duplicate: boolean;
  /** A late payment the merchant's rule sends back: afterRecorded asks for the return once committed. */
  returnByRule?: boolean;
}

/** The merchant's paid-amount rules, by merchant id (known before the transaction: no RPC while rows are locked). */
export type RulesOf = (merchantId: string) => PaidAmountRules;

async function existingOutcome(db: Knex, iban: string, bankTransactionId: string): Promise<TransferOutcome | undefined> {
  const transfer = (await db("incoming_transfers").where({ iban, bank_transaction_id: bankTransactionId }).first()) as TransferRow | undefined;
  if (!transfer) return undefined;
  const deposit = transfer.deposit_id ? ((await db("deposits").where({ id: transfer.deposit_id }).first()) as DepositRow | undefined) : undefined;
  return { transfer, deposit, duplicate: true };
}

/**
 * The deposits a transfer into one of `ibans` could pay: the pending ones, and the ones that
 * expired within LATE_PAYMENT_WINDOW (a late payment; older ones are left to an operator).
 */
function candidateDeposits(db: Knex, ctx: DepositContext, ibans: readonly string[]) {
  const lateSince = ctx.clock.now().getTime() - ctx.config.LATE_PAYMENT_WINDOW;
  return db("deposits")
    .whereIn("account_iban", [...new Set(ibans)])
    .andWhere((q) => q.where({ status: "pending" }).orWhere((e) => e.where({ status: "expired" }).andWhere("expires_at", ">=", lateSince)));
}

/**
 * The paid-amount rules of every merchant with a deposit a transfer into these accounts
 * could pay, read before the transaction (cached merchant facts; an RPC on a miss), so no
 * call is made while rows are locked. A merchant that cannot be read gets the default
 * rules, which never complete a doubtful payment on their own.
 */
export async function rulesForAccounts(ctx: DepositContext, ibans: readonly string[]): Promise<RulesOf> {
  const rows = (await candidateDeposits(ctx.db, ctx, ibans).distinct("merchant_id")) as Array<{ merchant_id: string }>;
  const rules = new Map<string, PaidAmountRules>();
  await Promise.all(
    rows.map(async ({ merchant_id }) => {
      try {
        rules.set(merchant_id, (await lookupMerchant(ctx, merchant_id)).rules);
      } catch (err) {
        ctx.logger.warn({ err, merchantId: merchant_id }, "could not read the merchant's paid-amount rules; the defaults apply");
      }
    }),
  );
  return (merchantId) => rules.get(merchantId) ?? DEFAULT_RULES;
}

function candidateOf(row: DepositRow): MatchCandidate {
  return {
    id: row.id,
    reference: row.reference,
    requestedAmount: Number(row.requested_amount),
    currency: row.currency,
    customerName: row.customer_name,
    status: row.status === "expired" ? "expired" : "pending",
    createdAt: Number(row.created_at),
  };
}

/**
 * Records one transfer inside `trx` and decides what it does: the account's candidate
 * deposits are locked, the transfer is matched (reference; else sender name with the exact
 * amount; else the amount alone), and the merchant's rules say whether a match completes its
 * deposit (late: the one move out of `expired`), waits for an operator in review, or goes
 * back to the sender. What no deposit takes sits in suspense. A repeated bank transaction id
 * is found by the caller (or by the unique index) and has no second effect.
 */
export async function recordTransferIn(trx: Knex.Transaction, ctx: DepositContext, report: TransferReport, rulesOf: RulesOf): Promise<Omit<TransferOutcome, "duplicate">> {
  const now = ctx.clock.now().getTime();
  const candidates = (await forUpdate(trx, candidateDeposits(trx, ctx, [report.iban]).orderBy("id"))) as DepositRow[];
  const match = matchTransfer({ amount: report.amount, currency: report.currency, senderName: report.senderName, description: report.reference }, candidates.map(candidateOf));

  const transfer: TransferRow = {
    id: newId("trf"),
    iban: report.iban,
    bank_transaction_id: report.bankTransactionId,
    amount: report.amount,
    currency: report.currency,
    sender_name: report.senderName,
    reference: report.reference,
    deposit_id: null,
    unmatched_reason: null,
    reported_at: now,
    status: "unmatched",
    review_deposit_id: null,
    match_by: null,
    match_score: null,
    match_reasons: null,
    candidates: null,
    late: false,
    value_date: report.valueDate ?? null,
    sender_iban: report.senderIban ?? null,
    source: report.source ?? "api",
    resolved_by: null,
    resolved_at: null,
    resolution: null,
  };

  if (match.kind === "unmatched") {
    transfer.unmatched_reason = match.reason;
    await trx("incoming_transfers").insert(transfer);
    await recordSuspense(trx, transfer, "received", now);
    return { transfer };
  }
  if (match.kind === "review") {
    transfer.status = "review";
    transfer.unmatched_reason = match.reason;
    transfer.candidates = JSON.stringify(match.candidates);
    await trx("incoming_transfers").insert(transfer);
    await recordSuspense(trx, transfer, "received", now);
    return { transfer };
  }

  const deposit = candidates.find((row) => row.id === match.depositId)!;
  transfer.match_by = match.by;
  transfer.match_score = match.score;
  transfer.match_reasons = JSON.stringify(match.reasons);
  transfer.late = match.late;
  const decision = decideMatchedTransfer({ late: match.late, relation: amountRelation(report.amount, Number(deposit.requested_amount)) }, rulesOf(deposit.merchant_id));
  if (decision.action === "complete") {
    transfer.status = "matched";
    transfer.deposit_id = deposit.id;
    await trx("incoming_transfers").insert(transfer);
    const moved = await moveDeposit(trx, ctx.clock, {
      depositId: deposit.id,
      move: decision.late ? "complete_late" : "complete",
      amount: report.amount,
      transferId: transfer.id,
      match: { by: match.by, score: match.score, reasons: match.reasons },
    });
    if (decision.late) await recordTransferAction(trx, ctx.clock, { transferId: transfer.id, action: "completed", actor: "rules", reason: "late payment completed by the merchant's rule", depositId: deposit.id });
    return { transfer, deposit: moved.row };
  }
  // Review, or a late payment the merchant's rule sends back: attached to its deposit, in
  // suspense. A return is asked for once this transaction commits (afterRecorded: it calls
  // the payout service); without the sender's IBAN it waits in review for an operator.
  transfer.status = "review";
  transfer.review_deposit_id = deposit.id;
  transfer.unmatched_reason = decision.reason;
  await trx("incoming_transfers").insert(transfer);
  await recordSuspense(trx, transfer, "received", now);
  return { transfer, returnByRule: decision.action === "return" };
}

/**
 * One incoming bank transfer: recorded once per (IBAN, bank transaction id), matched and
 * decided by recordTransferIn in one transaction. Bank integrations (ReportTransfer),
 * statement imports, feeds and the sandbox's "simulate payment" all come here.
 */
export async function recordTransfer(ctx: DepositContext, report: TransferReport): Promise<TransferOutcome> {
  const earlier = await existingOutcome(ctx.db, report.iban, report.bankTransactionId);
  if (earlier) return earlier;
  const rulesOf = await rulesForAccounts(ctx, [report.iban]);
  try {
    const outcome = await ctx.db.transaction((trx) => recordTransferIn(trx, ctx, report, rulesOf));
    afterRecorded(ctx, outcome);
    return { ...outcome, duplicate: false };
  } catch (err) {
    // The same report arriving twice at once: the index lets one in; the other reads it.
    if (isUniqueViolation(err)) {
      const raced = await existingOutcome(ctx.db, report.iban, report.bankTransactionId);
      if (raced) return raced;
    }
    throw err;
  }
}

/**
 * What follows a committed transfer: the outbox is nudged for a completed deposit, the
 * outcome is logged, and a late payment the merchant's rule returns is sent back (in the
 * background: a failure leaves it in review, where an operator sees it).
 */
export function afterRecorded(ctx: DepositContext, outcome: Omit<TransferOutcome, "duplicate">): void {
  const { transfer, deposit } = outcome;
  if (deposit) {
    ctx.outbox.nudge();
    ctx.logger.info({ depositId: deposit.id, transferId: transfer.id, amount: Number(transfer.amount), late: Boolean(transfer.late) }, "incoming transfer completed a deposit");
    return;
  }
  if (transfer.status === "review") {
    ctx.logger.warn({ transferId: transfer.id, iban: transfer.iban, depositId: transfer.review_deposit_id, reason: transfer.unmatched_reason }, "incoming transfer waits for an operator's review");
  } else {
    ctx.logger.warn({ transferId: transfer.id, iban: transfer.iban, reason: transfer.unmatched_reason }, "incoming transfer matched no deposit: kept in suspense");
  }
  if (!outcome.returnByRule) return;
  if (!transfer.sender_iban) {
    ctx.logger.warn({ transferId: transfer.id }, "the merchant's rule returns this late payment, but the bank gave no sender IBAN: it waits for an operator's `transfer return --iban`");
    return;
  }
  void requestTransferReturn(ctx, transfer.id, "", { actor: "rules", reason: "late payment: the merchant's rule returns it" }).catch((err: unknown) =>
    ctx.logger.error({ err, transferId: transfer.id }, "the return the merchant's rule asks for failed; the transfer stays in review"),
  );
}
