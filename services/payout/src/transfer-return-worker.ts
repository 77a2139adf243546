import { claimTransaction, forUpdateSkipLocked, startJob, type JobResult, type Stoppable } from "@payments/kit";
import type { Knex } from "knex";
import type { PayoutInstruction, PayoutResult } from "./bank-connector.js";
import type { PayoutContext } from "./context.js";
import { moveTransferReturn, returnRowStatus, type TransferReturnRow } from "./transfer-returns.js";
import { connectorFor, recordConnectorAnswer, SendTimeout, sendWithin, type RecordedOutcome } from "./worker.js";

/**
 * Sends transfer returns through the bank connectors, as the payout worker sends withdrawals
 * (src/worker.ts) and by the same rules:
 *
 * - claims are `FOR UPDATE SKIP LOCKED` transactions, so replicas never take the same row: a
 *   pending return by moving it to processing, a processing one left without a recorded answer
 *   for PAYOUT_RESEND_AFTER by a conditional update of `dispatched_at`;
 * - the send happens outside any transaction with the return's id as the idempotency key, so
 *   a re-send after a crash never pays the sender twice;
 * - the answer is recorded conditional on the return still being processing (an operator's
 *   decision in the meantime wins); "accepted" (the manual connector, the sandbox's 0003 IBAN)
 *   leaves it processing and awaiting an operator;
 * - `sandbox` on the return picks the sandbox connector, else the live one (PAYOUT_CONNECTOR).
 *
 * Returns are rare (an operator's decision on one transfer each), so this is a job of its own
 * that sends what it claimed before claiming again, instead of sharing the withdrawal queue.
 */

/** Takes back, for a re-send, processing returns not waiting for an operator and last sent at least PAYOUT_RESEND_AFTER ago. */
export async function claimOverdueTransferReturns(ctx: PayoutContext, limit: number): Promise<TransferReturnRow[]> {
  if (limit <= 0) return [];
  const now = ctx.clock.now().getTime();
  const dueBefore = now - ctx.config.PAYOUT_RESEND_AFTER;
  const overdue = (qb: Knex.QueryBuilder) =>
    qb.where({ status: "processing", awaiting_operator: false }).where((w) => {
      w.whereNull("dispatched_at").orWhere("dispatched_at", "<=", dueBefore);
    });
  return claimTransaction(ctx.db, async (trx) => {
    const rows = (await forUpdateSkipLocked(trx, overdue(trx("transfer_returns").select("*")).orderBy("dispatched_at").orderBy("id").limit(limit))) as TransferReturnRow[];
    const taken: TransferReturnRow[] = [];
    for (const row of rows) {
      const updated = await overdue(trx("transfer_returns").where({ id: row.id })).update({ dispatched_at: now, dispatch_attempts: trx.raw("dispatch_attempts + 1") });
      if (updated === 1) taken.push({ ...row, dispatched_at: now, dispatch_attempts: Number(row.dispatch_attempts) + 1 });
    }
    return taken;
  });
}

/** Moves up to `limit` pending returns, oldest first, to processing for their first send. */
export async function claimPendingTransferReturns(ctx: PayoutContext, limit: number): Promise<TransferReturnRow[]> {
  if (limit <= 0) return [];
  return claimTransaction(ctx.db, async (trx) => {
    const now = ctx.clock.now().getTime();
    const due = (await forUpdateSkipLocked(trx, trx("transfer_returns").select("id").where({ status: "pending" }).orderBy("created_at").orderBy("id").limit(limit))) as Array<{ id: string }>;
    const taken: TransferReturnRow[] = [];
    for (const { id } of due) taken.push(await moveTransferReturn(trx, ctx.clock, { id, move: "start", patch: { dispatched_at: now, dispatch_attempts: 1 } }));
    return taken;
  });
}

/** The return's instruction: its id is the idempotency key; the sender's statement shows which transfer comes back. */
export function transferReturnInstruction(row: TransferReturnRow): PayoutInstruction {
  return {
    idempotencyKey: row.id,
    amount: Number(row.amount),
    currency: row.currency,
    iban: row.iban,
    accountName: row.recipient_name,
    description: `RETURN ${row.transfer_id}`,
  };
}

/** Records the bank's answer for a return the worker sent; nothing changes when it is no longer processing. */
export function recordTransferReturnResult(ctx: PayoutContext, id: string, result: PayoutResult): Promise<RecordedOutcome> {
  return recordConnectorAnswer(ctx, "transfer_returns", id, result, (trx, change) => moveTransferReturn(trx, ctx.clock, { id, ...change }));
}

/**
 * Sends one claimed return and records the answer. Never throws: a send that throws or times
 * out, or an answer that cannot be recorded, leaves it processing, and it is sent again with
 * the same key after PAYOUT_RESEND_AFTER.
 */
export async function dispatchTransferReturn(ctx: PayoutContext, row: TransferReturnRow): Promise<RecordedOutcome | "unanswered"> {
  const connector = connectorFor(ctx, row);
  const log = ctx.logger.child({ job: "transfer-return-worker", transferReturnId: row.id, transferId: row.transfer_id, attempt: row.dispatch_attempts, connector: connector.name });
  const sends = ctx.metrics.counter("payout_transfer_return_sends_total", "Transfer returns handed to the bank connector, by connector and result", ["connector", "result"]);
  let result: PayoutResult;
  try {
    result = await sendWithin(connector, transferReturnInstruction(row), ctx.config.PAYOUT_RESEND_AFTER);
  } catch (err) {
    sends.inc({ connector: connector.name, result: err instanceof SendTimeout ? "timeout" : "error" });
    log.warn({ err }, "bank send of a transfer return failed; it stays processing and is sent again with the same key after PAYOUT_RESEND_AFTER");
    return "unanswered";
  }
  sends.inc({ connector: connector.name, result: result.outcome });
  const answer = { outcome: result.outcome, reason: result.outcome === "failed" ? result.reason : undefined, bankReference: result.bankReference };
  try {
    const recorded = await recordTransferReturnResult(ctx, row.id, result);
    if (recorded === "already_decided") {
      const current = (await ctx.db("transfer_returns").where({ id: row.id }).first().catch(() => undefined)) as TransferReturnRow | undefined;
      log.warn({ ...answer, status: current ? returnRowStatus(current) : "unknown" }, "the bank's answer arrived after the transfer return was decided; nothing changed");
    } else {
      log.info(answer, recorded === "awaiting_operator" ? "bank accepted the transfer return without deciding; waiting for an operator" : `transfer return ${recorded}`);
    }
    return recorded;
  } catch (err) {
    log.error({ err, ...answer }, "could not record the bank's answer for a transfer return; it is sent again with the same key after PAYOUT_RESEND_AFTER");
    return "unanswered";
  }
}

/**
 * Every PAYOUT_WORKER_INTERVAL: claims up to PAYOUT_WORKER_BATCH returns (overdue ones first,
 * then pending), sends them all and records the answers before the next pass. stop() waits
 * for the pass in flight, so every claimed return has been sent and answered.
 */
export function startTransferReturnWorker(ctx: PayoutContext): Stoppable {
  const batch = ctx.config.PAYOUT_WORKER_BATCH;
  const interval = ctx.config.PAYOUT_WORKER_INTERVAL;
  const run = async (): Promise<JobResult> => {
    const claimed: TransferReturnRow[] = [];
    let failed: JobResult["failed"];
    for (const [kind, take] of [
      ["overdue", claimOverdueTransferReturns],
      ["pending", claimPendingTransferReturns],
    ] as const) {
      try {
        claimed.push(...(await take(ctx, batch - claimed.length)));
      } catch (err) {
        failed ??= { err, fields: { claiming: kind }, message: `claiming ${kind} transfer returns failed; will retry` };
      }
    }
    if (claimed.length === 0) return failed ? { failed } : { idle: true };
    ctx.outbox.nudge();
    await Promise.all(claimed.map((row) => dispatchTransferReturn(ctx, row)));
    return failed ? { failed } : { more: claimed.length === batch };
  };
  const job = startJob({
    name: "transfer-return-worker",
    intervalMs: interval,
    backoff: { initialMs: interval, maxMs: interval * 10 },
    logger: ctx.logger,
    metrics: ctx.metrics,
    recoveryMessage: "claiming transfer returns recovered",
    run,
  });
  return { stop: () => job.stop() };
}
