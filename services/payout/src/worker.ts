import { Code } from "@connectrpc/connect";
import { claimTransaction, createBatcher, errorInfo, forUpdate, forUpdateSkipLocked, serviceError, startJob, transactionWithRetry, type JobResult, type Stoppable } from "@payments/kit";
import type { Knex } from "knex";
import type { BankConnector, PayoutInstruction, PayoutResult } from "./bank-connector.js";
import type { PayoutContext } from "./context.js";
import { rowApproval, rowStatus, type WithdrawalRow } from "./store.js";
import { isSendable } from "./withdrawal-approval.js";
import { startTransferReturnWorker } from "./transfer-return-worker.js";
import { moveLockedWithdrawals, moveWithdrawal, type LockedMove } from "./withdrawal-moves.js";

/**
 * The payout worker: claims withdrawals, hands each to the bank connector and records the
 * answer.
 *
 * - Claims are transactions with `FOR UPDATE SKIP LOCKED`, so replicas never take the same
 *   row; a batch of up to PAYOUT_WORKER_BATCH in one read. Pending withdrawals are claimed by
 *   moving them to processing (one UPDATE for the batch; their `withdrawal_processing` events go
 *   to the outbox in the same transaction, one insert); processing ones whose send got no
 *   recorded answer for PAYOUT_RESEND_AFTER (the worker died, the send threw or hung) are
 *   claimed again by one conditional update of `dispatched_at`.
 * - The send happens outside any transaction, one call per withdrawal, SEND_CONCURRENCY at
 *   once, and always carries the withdrawal id as the idempotency key, so a re-send after a
 *   crash never pays twice (the connector contract).
 * - The answer is recorded conditional on the withdrawal still being processing (an operator's
 *   decision in the meantime wins and nothing changes), in one transaction with the other
 *   answers that arrived while the previous ones were being recorded (`createAnswerRecorder`):
 *   each move still locks, decides, updates and writes its event in that one transaction.
 * - Each withdrawal goes to the connector of its recorded kind: a sandbox one to the sandbox
 *   connector, a live one to the live connector (PAYOUT_CONNECTOR). Sandbox and live never mix.
 */

/** How many sends one worker has in flight at once. */
export const SEND_CONCURRENCY = 10;

/** The connector for this withdrawal, by the sandbox flag recorded at its creation. */
export function connectorFor(ctx: PayoutContext, row: Pick<WithdrawalRow, "sandbox">): BankConnector {
  return row.sandbox ? ctx.connectors.sandbox : ctx.connectors.live;
}

/** The bank's answer as the worker recorded it. */
export type RecordedOutcome = "completed" | "failed" | "awaiting_operator" | "already_decided";

/**
 * Takes back, for a re-send, up to `limit` processing withdrawals that are not waiting for
 * an operator and were last handed to the bank at least PAYOUT_RESEND_AFTER ago.
 */
export async function claimOverdueWithdrawals(ctx: PayoutContext, limit: number): Promise<WithdrawalRow[]> {
  if (limit <= 0) return [];
  const now = ctx.clock.now().getTime();
  const dueBefore = now - ctx.config.PAYOUT_RESEND_AFTER;
  const overdue = (qb: Knex.QueryBuilder) =>
    qb
      .where({ status: "processing", awaiting_operator: false })
      .where((w) => {
        w.whereNull("dispatched_at").orWhere("dispatched_at", "<=", dueBefore);
      });
  return claimTransaction(ctx.db, async (trx) => {
    const rows = (await forUpdateSkipLocked(trx, overdue(trx("withdrawals").select("*")).orderBy("dispatched_at").orderBy("id").limit(limit))) as WithdrawalRow[];
    if (rows.length === 0) return [];
    // One statement for the batch, still conditional on each row being overdue; the rows are
    // locked (or SQLite's one writer holds them), so each of them still is.
    const ids = rows.map((row) => row.id);
    const updated = await overdue(trx("withdrawals").whereIn("id", ids)).update({ dispatched_at: now, dispatch_attempts: trx.raw("dispatch_attempts + 1") });
    if (updated !== rows.length) throw new Error(`overdue withdrawals changed under their locks: ${updated} of ${rows.length} taken back`);
    return rows.map((row) => ({ ...row, dispatched_at: now, dispatch_attempts: Number(row.dispatch_attempts) + 1 }));
  });
}

/**
 * The pending withdrawals the worker may send: all but those waiting for the merchant's own
 * four-eyes (isSendable, src/withdrawal-approval.ts). An approval moves one out of the wait
 * under its row lock, so a claim either sees it waiting (and leaves it), is held back by the
 * approver's lock (SKIP LOCKED: the next claim takes it), or sees it approved.
 */
function sendable(query: Knex.QueryBuilder): Knex.QueryBuilder {
  return query.where({ status: "pending" }).where((q) => {
    q.whereNull("approval").orWhereNot({ approval: "awaiting" });
  });
}

/**
 * Moves up to `limit` pending withdrawals, oldest first, to processing for their first send, in
 * one transaction: the claim is one `FOR UPDATE SKIP LOCKED` read of the rows, their start moves
 * one conditional UPDATE and their `withdrawal_processing` events one insert into the outbox
 * (`moveLockedWithdrawals`).
 */
export async function claimPendingWithdrawals(ctx: PayoutContext, limit: number): Promise<WithdrawalRow[]> {
  if (limit <= 0) return [];
  const claimed = await claimTransaction(ctx.db, async (trx) => {
    const now = ctx.clock.now().getTime();
    const locked = (await forUpdateSkipLocked(trx, sendable(trx("withdrawals").select("*")).orderBy("created_at").orderBy("id").limit(limit))) as WithdrawalRow[];
    // The query's rule, said once more by the pure one on the rows as locked.
    const due = locked.filter((row) => isSendable(rowApproval(row)));
    const moves = await moveLockedWithdrawals(
      trx,
      ctx.clock,
      due.map((row) => ({ row, request: { withdrawalId: row.id, move: "start", patch: { dispatched_at: now, dispatch_attempts: 1 } } })),
    );
    // Each row was read pending under its lock: a start cannot be refused.
    return moves.map((result) => {
      if ("refused" in result) throw result.refused;
      return result.row;
    });
  });
  if (claimed.length > 0) ctx.outbox.nudge();
  return claimed;
}

export function payoutInstruction(row: WithdrawalRow): PayoutInstruction {
  return {
    idempotencyKey: row.id,
    amount: Number(row.amount),
    currency: row.currency,
    iban: row.iban,
    accountName: row.account_name,
    description: row.process_id,
  };
}

/** The columns are 100 characters; a longer code from a bank must not make the answer unrecordable. */
function clip(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value.slice(0, 100);
}

/** What a bank's final answer changes: its move, the failure's code, the bank's reference. */
export interface AnswerChange {
  move: "complete" | "fail";
  failureReason?: string;
  patch?: { bank_reference: string };
  /** Who makes the move (the ledger entry's actor). */
  actor?: string;
}

/** The move a bank's final answer makes, applied by the caller's state machine inside `trx`. */
export type AnswerMove = (trx: Knex.Transaction, change: AnswerChange) => Promise<unknown>;

/** Who settles or releases a withdrawal on the bank's answer, as its ledger entry records it. */
export const BANK_ANSWER_ACTOR = "payout worker: the bank connector's answer";

function answerChange(result: Exclude<PayoutResult, { outcome: "accepted" }>): AnswerChange {
  const bankReference = clip(result.bankReference);
  return {
    move: result.outcome === "completed" ? "complete" : "fail",
    failureReason: result.outcome === "failed" ? (clip(result.reason) ?? "FAILED") : undefined,
    patch: bankReference ? { bank_reference: bankReference } : undefined,
    actor: BANK_ANSWER_ACTOR,
  };
}

/**
 * Records a bank's answer for something the worker sent (a withdrawal, a transfer return):
 * completed and failed make the row's move, with its event; accepted leaves it processing and
 * marks it as waiting for an operator. When the row is no longer processing (an operator, or a
 * racing re-send, decided first) nothing changes.
 */
export async function recordConnectorAnswer(ctx: PayoutContext, table: "withdrawals" | "transfer_returns", id: string, result: PayoutResult, move: AnswerMove): Promise<RecordedOutcome> {
  const bankReference = clip(result.bankReference);
  if (result.outcome === "accepted") {
    const updated = await ctx.db(table)
      .where({ id, status: "processing" })
      .update({ awaiting_operator: true, ...(bankReference ? { bank_reference: bankReference } : {}) });
    return updated === 1 ? "awaiting_operator" : "already_decided";
  }
  try {
    await transactionWithRetry(ctx.db, (trx) => move(trx, answerChange(result)));
  } catch (err) {
    if (errorInfo(err).reason === "INVALID_TRANSACTION_STATE") return "already_decided";
    throw err;
  }
  ctx.outbox.nudge();
  return result.outcome;
}

/**
 * Records the bank's answer for a withdrawal the worker sent: completed and failed move it
 * (settling or releasing the held amount, with the status event); accepted leaves it
 * processing and marks it as waiting for an operator.
 */
export function recordPayoutResult(ctx: PayoutContext, withdrawalId: string, result: PayoutResult): Promise<RecordedOutcome> {
  return recordConnectorAnswer(ctx, "withdrawals", withdrawalId, result, (trx, change) => moveWithdrawal(trx, ctx.clock, { withdrawalId, ...change }));
}

/** A bank's answer for a withdrawal the worker sent. */
export interface PayoutAnswer {
  withdrawalId: string;
  result: PayoutResult;
}

/**
 * Records the bank's answers for several withdrawals the worker sent, in one transaction, each
 * by `recordPayoutResult`'s rules: the rows locked first (one statement, in id order, so two such
 * batches never deadlock); completed and failed move the withdrawal (`moveLockedWithdrawals`:
 * the moves' updates, the settlements and releases in one `postMany`, the events in one insert
 * into the outbox); accepted leaves it processing and marks it waiting for an operator; one no
 * longer processing (an operator, or a racing re-send, decided first) is "already_decided" and
 * nothing changes for it. All or nothing; the outcomes in the order of `answers`, one answer
 * per withdrawal.
 */
export async function recordPayoutResults(ctx: PayoutContext, answers: readonly PayoutAnswer[]): Promise<RecordedOutcome[]> {
  if (answers.length === 0) return [];
  const ids = answers.map((a) => a.withdrawalId);
  if (new Set(ids).size !== ids.length) throw new Error("recordPayoutResults: one answer per withdrawal");
  const { outcomes, moved } = await transactionWithRetry(ctx.db, async (trx) => {
    const locked = (await forUpdate(trx, trx("withdrawals").whereIn("id", ids).orderBy("id").select("*"))) as WithdrawalRow[];
    const rows = new Map(locked.map((row) => [row.id, row]));
    const outcomes = new Map<string, RecordedOutcome>();
    // Accepted answers by the bank reference they record ("" for none): one update per reference.
    const accepted = new Map<string, string[]>();
    const moves: LockedMove[] = [];
    for (const { withdrawalId, result } of answers) {
      const row = rows.get(withdrawalId);
      if (!row) throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", `no withdrawal ${withdrawalId}`);
      if (result.outcome !== "accepted") {
        moves.push({ row, request: { withdrawalId, ...answerChange(result) } });
        outcomes.set(withdrawalId, result.outcome);
      } else if (row.status !== "processing") {
        outcomes.set(withdrawalId, "already_decided");
      } else {
        const reference = clip(result.bankReference) ?? "";
        accepted.set(reference, [...(accepted.get(reference) ?? []), withdrawalId]);
        outcomes.set(withdrawalId, "awaiting_operator");
      }
    }
    for (const [reference, group] of accepted) {
      await trx("withdrawals")
        .whereIn("id", group)
        .where({ status: "processing" })
        .update({ awaiting_operator: true, ...(reference ? { bank_reference: reference } : {}) });
    }
    const results = await moveLockedWithdrawals(trx, ctx.clock, moves);
    results.forEach((result, i) => {
      if ("refused" in result) outcomes.set(moves[i]!.row.id, "already_decided");
    });
    return { outcomes, moved: results.some((result) => !("refused" in result) && result.moved) };
  });
  if (moved) ctx.outbox.nudge();
  return answers.map((a) => outcomes.get(a.withdrawalId)!);
}

/** Records one answer: resolves with its outcome once the batch it went in is recorded, rejects when it could not be. */
export type AnswerRecorder = (withdrawalId: string, result: PayoutResult) => Promise<RecordedOutcome>;

/**
 * Where the worker's sends hand their answers. Each answer goes in the next batch, which takes
 * every answer that arrived while the previous batch was being recorded (`recordPayoutResults`,
 * one transaction): a busy worker records many answers per transaction, a quiet one each answer
 * at once. A batch that fails is recorded again one answer at a time (`recordPayoutResult`), so
 * an answer that cannot be recorded holds back only itself: its withdrawal stays processing and
 * is sent again with the same key after PAYOUT_RESEND_AFTER, as before.
 */
export function createAnswerRecorder(ctx: PayoutContext): AnswerRecorder {
  const log = ctx.logger.child({ job: "payout-worker" });
  // After the turn, so answers that came in the same turn (sends started together) go in one
  // batch; a second answer for a withdrawal in the batch waits for the next one.
  const record = createBatcher<PayoutAnswer, RecordedOutcome>({
    handle: (batch) => recordPayoutResults(ctx, batch),
    alone: (answer) => recordPayoutResult(ctx, answer.withdrawalId, answer.result),
    key: (answer) => answer.withdrawalId,
    afterTurn: true,
    onBatchFailure: (err, size) => log.warn({ err, answers: size }, "recording a batch of the bank's answers failed; recording them one at a time"),
  });
  return (withdrawalId, result) => record({ withdrawalId, result });
}

export class SendTimeout extends Error {
  constructor(ms: number) {
    super(`no answer from the bank within ${ms} ms`);
  }
}

/** The send, abandoned after `ms` (it is then due for a re-send anyway). */
export async function sendWithin(connector: BankConnector, instruction: PayoutInstruction, ms: number): Promise<PayoutResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SendTimeout(ms)), ms);
    timer.unref();
  });
  const send = connector.send(instruction);
  send.catch(() => {}); // an answer after the timeout is dropped: the re-send gets it again
  try {
    return await Promise.race([send, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends one claimed withdrawal and records the answer. Never throws: a send that throws or
 * times out, or an answer that cannot be recorded, leaves the withdrawal processing with
 * awaiting_operator false, and it is sent again with the same key after PAYOUT_RESEND_AFTER.
 */
export async function dispatchWithdrawal(
  ctx: PayoutContext,
  row: WithdrawalRow,
  record: AnswerRecorder = (withdrawalId, result) => recordPayoutResult(ctx, withdrawalId, result),
): Promise<RecordedOutcome | "unanswered"> {
  const connector = connectorFor(ctx, row);
  const log = ctx.logger.child({ job: "payout-worker", withdrawalId: row.id, merchantId: row.merchant_id, attempt: row.dispatch_attempts, connector: connector.name });
  const sends = ctx.metrics.counter("payout_sends_total", "Withdrawals handed to the bank connector, by connector and result", ["connector", "result"]);
  const started = Date.now();
  log.info({ amount: Number(row.amount), currency: row.currency }, "sending withdrawal to the bank");
  let result: PayoutResult;
  try {
    result = await sendWithin(connector, payoutInstruction(row), ctx.config.PAYOUT_RESEND_AFTER);
  } catch (err) {
    sends.inc({ connector: connector.name, result: err instanceof SendTimeout ? "timeout" : "error" });
    log.warn({ err, durationMs: Date.now() - started }, "bank send failed; the withdrawal stays processing and is sent again with the same key after PAYOUT_RESEND_AFTER");
    return "unanswered";
  }
  sends.inc({ connector: connector.name, result: result.outcome });
  const answer = { outcome: result.outcome, reason: result.outcome === "failed" ? result.reason : undefined, bankReference: result.bankReference, durationMs: Date.now() - started };
  let recorded: RecordedOutcome;
  try {
    recorded = await record(row.id, result);
  } catch (err) {
    log.error({ err, ...answer }, "could not record the bank's answer; the withdrawal is sent again with the same key after PAYOUT_RESEND_AFTER");
    return "unanswered";
  }
  if (recorded !== "already_decided") {
    log.info(answer, recorded === "awaiting_operator" ? "bank accepted the withdrawal without deciding; waiting for an operator" : `withdrawal ${recorded}`);
    return recorded;
  }
  // Someone decided first: a re-send racing this one (same answer), or an operator. An
  // operator's decision that contradicts the bank needs a human to look at the money.
  const current = (await ctx.db("withdrawals").where({ id: row.id }).first().catch(() => undefined)) as WithdrawalRow | undefined;
  const status = current ? rowStatus(current) : "unknown";
  const agrees = status === result.outcome || (result.outcome === "accepted" && status !== "pending");
  const message = "the bank's answer arrived after the withdrawal was decided; nothing changed";
  if (agrees) log.info({ ...answer, status }, message);
  else log.warn({ ...answer, status }, `${message}, but the bank's answer disagrees with its status`);
  return recorded;
}

/**
 * Runs the worker until stopped: every PAYOUT_WORKER_INTERVAL, and at once while a claim
 * came back full, it claims up to PAYOUT_WORKER_BATCH withdrawals (when it has nothing
 * queued and a free send slot) and sends them, SEND_CONCURRENCY at a time. stop() claims
 * no more and waits until every claimed withdrawal has been sent and its answer recorded
 * (a send is abandoned after PAYOUT_RESEND_AFTER).
 */
export function startPayoutWorker(ctx: PayoutContext): Stoppable {
  const log = ctx.logger.child({ job: "payout-worker" });
  const batch = ctx.config.PAYOUT_WORKER_BATCH;
  const interval = ctx.config.PAYOUT_WORKER_INTERVAL;
  const queue: WithdrawalRow[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const record = createAnswerRecorder(ctx);
  let stopped = false;
  // Read through a call: stop() sets it while a pass awaits its claims, which narrowing cannot see.
  const isStopped = (): boolean => stopped;
  /** The last claim was full: more are probably waiting. */
  let backlog = false;

  const pump = () => {
    while (inFlight.size < SEND_CONCURRENCY && queue.length > 0) {
      const row = queue.shift()!;
      const sending: Promise<unknown> = dispatchWithdrawal(ctx, row, record).finally(() => {
        inFlight.delete(sending);
        pump();
        if (backlog) job.wake();
      });
      inFlight.add(sending);
    }
  };

  // The overdue processing withdrawals first (they have waited longest), then pending
  // ones, PAYOUT_WORKER_BATCH in all; a failure of one step does not lose the other's rows.
  const claim = async (): Promise<JobResult> => {
    if (stopped || queue.length > 0 || inFlight.size >= SEND_CONCURRENCY) return {};
    let count = 0;
    let failed: JobResult["failed"];
    for (const [kind, take] of [
      ["overdue", claimOverdueWithdrawals],
      ["pending", claimPendingWithdrawals],
    ] as const) {
      if (isStopped()) break;
      try {
        const claimed = await take(ctx, batch - count);
        count += claimed.length;
        if (kind === "overdue" && claimed.length > 0) {
          log.info({ withdrawalIds: claimed.map((r) => r.id) }, "withdrawals without a recorded answer after PAYOUT_RESEND_AFTER taken back for a re-send");
        }
        queue.push(...claimed);
        pump();
      } catch (err) {
        failed ??= { err, fields: { claiming: kind }, message: `claiming ${kind} withdrawals failed; will retry` };
      }
    }
    backlog = count === batch;
    return failed ? { failed } : {};
  };

  const pending = async () => {
    const row = await sendable(ctx.db("withdrawals")).count({ n: "*" }).first<{ n?: number | string } | undefined>();
    return Number(row?.n ?? 0);
  };
  // Claims every PAYOUT_WORKER_INTERVAL and when a send ends after a full claim; while claims
  // fail it backs off up to ten intervals and warns once per failure streak.
  const job = startJob({
    name: "payout-worker",
    intervalMs: interval,
    backoff: { initialMs: interval, maxMs: interval * 10 },
    logger: ctx.logger,
    metrics: ctx.metrics,
    backlog: pending,
    recoveryMessage: "claiming withdrawals recovered",
    run: claim,
  });
  // The withdrawals waiting for the worker to send them, counted at most every few seconds when scraped.
  const stopSampling = ctx.metrics.sampleGauge("payout_worker_backlog", "Withdrawals waiting for the payout worker to send them (pending, not waiting for the merchant's approval)", [], async () => [
    { labels: {}, value: await pending() },
  ]);

  // Transfer returns (src/transfer-return-worker.ts) go through the same connectors, on a job of their own.
  const returns = startTransferReturnWorker(ctx);

  return {
    async stop() {
      stopped = true;
      stopSampling();
      await Promise.all([job.stop(), returns.stop()]);
      // Claimed rows are already processing: send them all rather than leave them for a re-send.
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
