import { isTurkishIban, isUniqueViolation, newId, readCommitted, transactionWithRetry } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositContext } from "./context.js";
import { moveDepositSeen } from "./deposit-moves.js";
import { lookupMerchant } from "./merchant-lookup.js";
import { matchTransfer, type MatchCandidate, type MatchResult } from "./matching.js";
import { amountRelation, decideMatchedTransfer, DEFAULT_RULES, type PaidAmountRules } from "./paid-amount-rules.js";
import { REFERENCE_ALPHABET, REFERENCE_LENGTH } from "./reference.js";
import type { DepositRow, TransferRow } from "./store.js";
import { applyTransferMove, recordArrival, type Decider } from "./transfer-moves.js";
import { compactReference } from "./turkish-text.js";

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
  /** api (ReportTransfer), mt940, camt053, feed:<feedId>, sandbox. */
  source?: string;
  /** Ids an older adapter gave this line (IncomingTransferRecord.formerIds): the same line if amount and value date agree too. */
  formerIds?: readonly string[];
  /**
   * Who reports it, in words (callerAttribution of the call, or the feed or directory that
   * brought it): kept on the transfer, and on the deposit it completes as its completer.
   */
  reportedBy?: string;
}

/** What recording one transfer did. */
export interface RecordedTransfer {
  transfer: TransferRow;
  /** The deposit this transfer completed. */
  deposit?: DepositRow;
}

export interface TransferOutcome extends RecordedTransfer {
  /** The bank transaction id was already recorded on this account: nothing changed, and `transfer` is the first report. */
  duplicate: boolean;
}

/**
 * The paid-amount rules of the merchants one operation meets. Inside a transaction a rule is
 * only ever read from memory (this book, else the merchant cache): a miss throws RulesNeeded,
 * the transaction rolls back, the rules are fetched with no lock held, and it runs again. So
 * no RPC is ever made while rows are locked, and a cold cache costs one empty rollback.
 */
export class RulesBook {
  private readonly known = new Map<string, PaidAmountRules>();

  constructor(private readonly ctx: DepositContext) {}

  get(merchantId: string): PaidAmountRules {
    const rules = this.known.get(merchantId) ?? this.ctx.merchantCache.peek(merchantId)?.rules;
    if (!rules) throw new RulesNeeded(merchantId);
    return rules;
  }

  /** A merchant that cannot be read gets the default rules, which never complete a doubtful payment on their own. */
  async load(merchantId: string): Promise<void> {
    try {
      this.known.set(merchantId, (await lookupMerchant(this.ctx, merchantId)).rules);
    } catch (err) {
      this.ctx.logger.warn({ err, merchantId }, "could not read the merchant's paid-amount rules; the defaults apply");
      this.known.set(merchantId, DEFAULT_RULES);
    }
  }
}

class RulesNeeded extends Error {
  constructor(readonly merchantId: string) {
    super(`the rules of merchant ${merchantId} are not loaded`);
  }
}

/**
 * The deposit a decision rested on changed between the unlocked read that chose it and the
 * lock taken to move it (another transfer paid it, it expired, an operator decided): the
 * transaction rolls back and the transfer is matched again against what is there now.
 */
class StaleMatch extends Error {}

/** Far more than a real race needs: each retry sees the changes that made the previous one stale. */
const STALE_RETRIES = 20;

/**
 * Runs a transaction that records (or decides on) transfers: READ COMMITTED on MySQL, so its
 * plain reads see the latest commit and take no locks, and the only rows it locks are the ones
 * it changes. Lost lock conflicts are run again (transactionWithRetry), as are attempts that
 * needed rules not in memory (loaded first) or rested on a deposit that changed meanwhile.
 */
export function transferTransaction<T>(
  ctx: DepositContext,
  rules: RulesBook,
  fn: (trx: Knex.Transaction) => Promise<T>,
  options: { uniqueRaces?: number } = {},
): Promise<T> {
  let stale = 0;
  let races = 0;
  return transactionWithRetry(ctx.db, fn, {
    config: readCommitted(ctx.db),
    async retryOn(err) {
      if (err instanceof RulesNeeded) {
        await rules.load(err.merchantId);
        return true;
      }
      if (err instanceof StaleMatch) return ++stale <= STALE_RETRIES;
      // A batch that met another import's uncommitted copy of one of its lines: run again, that line is then a duplicate.
      return isUniqueViolation(err) && ++races <= (options.uniqueRaces ?? 0);
    },
  });
}

/** Pending deposits, and those expired within LATE_PAYMENT_WINDOW (a late payment; older ones are left to an operator). */
function isCandidate(ctx: DepositContext, row: Pick<DepositRow, "status" | "expires_at">): boolean {
  if (row.status === "pending") return true;
  return row.status === "expired" && Number(row.expires_at) >= ctx.clock.now().getTime() - ctx.config.LATE_PAYMENT_WINDOW;
}

function candidatesOnAccount(trx: Knex.Transaction, ctx: DepositContext, iban: string): Promise<DepositRow[]> {
  const lateSince = ctx.clock.now().getTime() - ctx.config.LATE_PAYMENT_WINDOW;
  return trx("deposits")
    .where({ account_iban: iban })
    .andWhere((q) => {
      q.where({ status: "pending" }).orWhere((e) => {
        e.where({ status: "expired" }).andWhere("expires_at", ">=", lateSince);
      });
    })
    .orderBy("id") as Promise<DepositRow[]>;
}

const IN_ALPHABET = new RegExp(`^[${REFERENCE_ALPHABET}]{${REFERENCE_LENGTH}}$`);

/**
 * Every string a deposit reference could be in this description: each run of
 * REFERENCE_LENGTH characters of its compact form (compactReference, as findReference
 * searches) drawn from the reference alphabet. At most ~500 for the longest description.
 */
export function referenceKeysIn(description: string): string[] {
  const compact = compactReference(description);
  const keys = new Set<string>();
  for (let i = 0; i + REFERENCE_LENGTH <= compact.length; i++) {
    const key = compact.slice(i, i + REFERENCE_LENGTH);
    if (IN_ALPHABET.test(key)) keys.add(key);
  }
  return [...keys];
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
 * Which deposit the transfer pays, read without locks. First the deposits whose reference the
 * description carries, found on the unique reference index (what nearly every customer writes,
 * so a busy account's report reads one row, not every pending deposit); the matcher decides on
 * them exactly as it would among all candidates (the reference rule looks at no other). Only
 * without a usable reference are all of the account's candidates read, for the name and amount
 * rules.
 */
async function matchAgainstDeposits(trx: Knex.Transaction, ctx: DepositContext, report: TransferReport): Promise<{ match: MatchResult; candidates: DepositRow[] }> {
  const facts = { amount: report.amount, currency: report.currency, senderName: report.senderName, description: report.reference };
  const keys = referenceKeysIn(report.reference);
  if (keys.length > 0) {
    const referenced = ((await trx("deposits").whereIn("reference", keys)) as DepositRow[]).filter((row) => row.account_iban === report.iban && isCandidate(ctx, row));
    if (referenced.length > 0) {
      const match = matchTransfer(facts, referenced.map(candidateOf));
      if (match.kind !== "unmatched") return { match, candidates: referenced };
    }
  }
  const candidates = await candidatesOnAccount(trx, ctx, report.iban);
  return { match: matchTransfer(facts, candidates.map(candidateOf)), candidates };
}

function newTransferRow(ctx: DepositContext, report: TransferReport): Omit<TransferRow, "status"> {
  return {
    id: newId("trf"),
    iban: report.iban,
    bank_transaction_id: report.bankTransactionId,
    amount: report.amount,
    currency: report.currency,
    sender_name: report.senderName,
    reference: report.reference,
    deposit_id: null,
    unmatched_reason: null,
    reported_at: ctx.clock.now().getTime(),
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
    return_attempts: 0,
    reported_by: report.reportedBy ? report.reportedBy.slice(0, 500) : null,
  };
}

const RULES: Decider = { actor: "rules", reason: "" };

/**
 * Records one transfer inside `trx` (run it through transferTransaction) and decides what it
 * does. It is matched on an unlocked read (reference; else sender name with the exact amount;
 * else the amount alone); the merchant's rules say whether a match completes its deposit
 * (late: the one move out of `expired`), waits in review, or goes back to the sender. The
 * transfer row is written first (its unique index settles a report arriving twice at once),
 * then only the deposit it completes is locked, and if that deposit is no longer what the
 * match saw the whole transaction runs again (StaleMatch). Reports into one account therefore
 * neither queue behind one lock nor deadlock. What no deposit takes sits in suspense.
 */
export async function recordTransferIn(trx: Knex.Transaction, ctx: DepositContext, report: TransferReport, rules: RulesBook): Promise<RecordedTransfer> {
  const { match, candidates } = await matchAgainstDeposits(trx, ctx, report);
  const row = newTransferRow(ctx, report);

  if (match.kind === "unmatched") {
    return { transfer: await recordArrival(trx, ctx.clock, { ...row, unmatched_reason: match.reason }, "record_unmatched") };
  }
  if (match.kind === "review") {
    return { transfer: await recordArrival(trx, ctx.clock, { ...row, unmatched_reason: match.reason, candidates: JSON.stringify(match.candidates) }, "record_review") };
  }

  const deposit = candidates.find((c) => c.id === match.depositId)!;
  const matched = { ...row, match_by: match.by, match_score: match.score, match_reasons: JSON.stringify(match.reasons), late: match.late };
  const decision = decideMatchedTransfer({ late: match.late, relation: amountRelation(report.amount, Number(deposit.requested_amount)) }, rules.get(deposit.merchant_id));

  if (decision.action === "complete") {
    const transfer = await recordArrival(
      trx,
      ctx.clock,
      { ...matched, deposit_id: deposit.id },
      "record_matched",
      decision.late ? { ...RULES, reason: "late payment completed by the merchant's rule" } : undefined,
    );
    // No lock was taken to read the deposit: the conditional update takes it and is the guard.
    const moved = await moveDepositSeen(trx, ctx.clock, deposit, {
      depositId: deposit.id,
      move: decision.late ? "complete_late" : "complete",
      amount: report.amount,
      transferId: transfer.id,
      match: { by: match.by, score: match.score, reasons: match.reasons },
      // Completed by the money's arrival: whoever reported it completed the deposit.
      ...(row.reported_by ? { completedBy: row.reported_by } : {}),
    });
    if (moved === "stale") throw new StaleMatch();
    return { transfer, deposit: moved.row };
  }

  // Review, or a late payment the merchant's rule returns: attached to its deposit, in
  // suspense. A return goes out through the outbox in this same transaction (it cannot be lost
  // between the commit and a call, nor asked for twice); without the sender's Turkish IBAN and
  // name there is nowhere to send it, and the transfer waits in review for an operator.
  const missing = decision.action !== "return" ? [] : [row.sender_iban && isTurkishIban(row.sender_iban) ? "" : "Turkish IBAN", row.sender_name.trim() ? "" : "name"].filter(Boolean);
  const reason = missing.length > 0 ? `${decision.reason}, but the bank gave no sender ${missing.join(" or ")}: an operator returns it with \`transfer return\` (--iban, --name)` : decision.reason;
  const transfer = await recordArrival(trx, ctx.clock, { ...matched, review_deposit_id: deposit.id, unmatched_reason: reason }, "record_review");
  // Nothing changes the deposit, so nothing locks it; but the decision rests on its status,
  // which is read once more now that the transfer row is written.
  const now = await trx("deposits").where({ id: deposit.id }).first<Pick<DepositRow, "status"> | undefined>("status");
  if (now?.status !== deposit.status) throw new StaleMatch();
  if (decision.action !== "return" || missing.length > 0) return { transfer };
  const returning = await applyTransferMove(trx, ctx.clock, transfer, {
    move: "request_return",
    ...RULES,
    reason: decision.reason,
    resolves: true,
    returnTo: { iban: transfer.sender_iban!, recipientName: transfer.sender_name, sandbox: Boolean(deposit.sandbox) },
  });
  return { transfer: returning };
}

async function existingOutcome(db: Knex, iban: string, bankTransactionId: string): Promise<TransferOutcome | undefined> {
  const transfer = (await db("incoming_transfers").where({ iban, bank_transaction_id: bankTransactionId }).first()) as TransferRow | undefined;
  if (!transfer) return undefined;
  const deposit = transfer.deposit_id ? ((await db("deposits").where({ id: transfer.deposit_id }).first()) as DepositRow | undefined) : undefined;
  return { transfer, deposit, duplicate: true };
}

/**
 * One incoming bank transfer: recorded once per (IBAN, bank transaction id), matched and
 * decided by recordTransferIn. Bank integrations (ReportTransfer), the sandbox's payments and
 * the checkout's "simulate payment" come here; statements and feeds come through
 * recordTransfers, which records a whole batch in one transaction.
 */
export async function recordTransfer(ctx: DepositContext, report: TransferReport): Promise<TransferOutcome> {
  // No read first: a repeat is rare, and the unique index finds it at the insert, after which
  // the first report's outcome is read.
  const rules = new RulesBook(ctx);
  try {
    const outcome = await transferTransaction(ctx, rules, (trx) => recordTransferIn(trx, ctx, report, rules));
    afterRecorded(ctx, [outcome]);
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

/** Unique-index races a batch runs again for (another import of the same lines committed first); each attempt sees more as duplicates. */
const BATCH_DUPLICATE_RETRIES = 3;

/**
 * A batch (a statement file, a pushed body) recorded all or nothing in ONE transaction, in
 * order: a bank transaction id already recorded on its account, or earlier in the batch, is a
 * duplicate (`undefined` in the answer) and changes nothing. A failure anywhere rolls back the
 * whole batch, so a sender or an operator repeats the whole file and never finds half of it.
 */
export async function recordTransfers(ctx: DepositContext, reports: readonly TransferReport[]): Promise<Array<RecordedTransfer | undefined>> {
  const rules = new RulesBook(ctx);
  const outcomes = await transferTransaction(
    ctx,
    rules,
    async (trx) => {
      const out: Array<RecordedTransfer | undefined> = [];
      for (const report of reports) out.push((await recordedBefore(trx, report)) ? undefined : await recordTransferIn(trx, ctx, report, rules));
      return out;
    },
    { uniqueRaces: BATCH_DUPLICATE_RETRIES },
  );
  afterRecorded(
    ctx,
    outcomes.filter((o): o is RecordedTransfer => o !== undefined),
  );
  return outcomes;
}

/** Whether this line is recorded already: under its id, or under a former id with the same amount and value date. */
async function recordedBefore(trx: Knex.Transaction, report: TransferReport): Promise<boolean> {
  if (await trx("incoming_transfers").where({ iban: report.iban, bank_transaction_id: report.bankTransactionId }).first("id")) return true;
  if (!report.formerIds?.length) return false;
  const former = await trx("incoming_transfers")
    .where({ iban: report.iban, amount: report.amount, currency: report.currency, value_date: report.valueDate ?? null })
    .whereIn("bank_transaction_id", [...report.formerIds])
    .first<{ id: string } | undefined>("id");
  return former !== undefined;
}

/** What follows committed transfers: the outbox is nudged for completed deposits and requested returns, and each outcome is logged. */
export function afterRecorded(ctx: DepositContext, outcomes: readonly RecordedTransfer[]): void {
  let publish = false;
  for (const { transfer, deposit } of outcomes) {
    if (deposit) {
      publish = true;
      ctx.logger.info({ depositId: deposit.id, transferId: transfer.id, amount: Number(transfer.amount), late: Boolean(transfer.late) }, "incoming transfer completed a deposit");
    } else if (transfer.status === "returning") {
      publish = true;
      ctx.logger.info({ transferId: transfer.id, depositId: transfer.review_deposit_id, amount: Number(transfer.amount) }, "late payment sent back to its sender by the merchant's rule");
    } else if (transfer.status === "review") {
      ctx.logger.warn({ transferId: transfer.id, iban: transfer.iban, depositId: transfer.review_deposit_id, reason: transfer.unmatched_reason }, "incoming transfer waits for an operator's review");
    } else {
      ctx.logger.warn({ transferId: transfer.id, iban: transfer.iban, reason: transfer.unmatched_reason }, "incoming transfer matched no deposit: kept in suspense");
    }
  }
  if (publish) ctx.outbox.nudge();
}
