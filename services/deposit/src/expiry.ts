import { claimTransaction, forUpdateSkipLocked, startJob, type Clock, type Stoppable } from "@payments/kit";
import type { Knex } from "knex";
import type { DepositContext } from "./context.js";
import { moveDeposit, type MoveResult } from "./deposit-moves.js";

/**
 * The expiry of one deposit inside `trx`: the move the job makes for every due deposit, and
 * the sandbox expire helper for one. Refused (INVALID_TRANSACTION_STATE) unless pending.
 */
export function expireDeposit(trx: Knex.Transaction, clock: Clock, depositId: string): Promise<MoveResult> {
  return moveDeposit(trx, clock, { depositId, move: "expire" });
}

/**
 * Expires the pending deposits whose expiry has passed, a batch per transaction. Rows are
 * claimed with SKIP LOCKED so replicas share the work, and each move is conditional on the
 * deposit still being pending, so a deposit expires once however many replicas run and
 * whatever a transfer or an operator did meanwhile. Returns how many expired.
 */
export async function expireDueDeposits(ctx: DepositContext, batchSize = 100): Promise<number> {
  let total = 0;
  for (;;) {
    const now = ctx.clock.now().getTime();
    const expired = await claimTransaction(ctx.db, async (trx) => {
      const due = (await forUpdateSkipLocked(
        trx,
        trx("deposits").select("id").where({ status: "pending" }).where("expires_at", "<=", now).orderBy("expires_at").limit(batchSize),
      )) as Array<{ id: string }>;
      for (const { id } of due) await expireDeposit(trx, ctx.clock, id);
      return due.length;
    });
    total += expired;
    if (expired > 0) ctx.outbox.nudge();
    if (expired < batchSize) return total;
  }
}

/**
 * Runs expireDueDeposits every DEPOSIT_EXPIRY_INTERVAL until stopped (job `deposit-expiry`);
 * while it fails it backs off up to ten intervals and warns once per failure streak.
 */
export function startExpiryJob(ctx: DepositContext): Stoppable {
  const interval = ctx.config.DEPOSIT_EXPIRY_INTERVAL;
  return startJob({
    name: "deposit-expiry",
    intervalMs: interval,
    backoff: { initialMs: interval, maxMs: interval * 10 },
    logger: ctx.logger,
    metrics: ctx.metrics,
    failureMessage: "deposit expiry failed; will retry",
    recoveryMessage: "deposit expiry recovered",
    async run() {
      const count = await expireDueDeposits(ctx);
      if (count > 0) ctx.logger.info({ count }, "deposits expired");
    },
  });
}
