import type { Knex } from "knex";
import { transactionWithRetry } from "@payments/kit";
import { recordAudit, type ActorIdentity } from "@payments/access";
import type { ConsoleContext } from "../context.js";
import { ConsoleError } from "../errors.js";

/**
 * One step of the console's own audit (the access package's `operator_audit` table, as each
 * service keeps its own): who, as what role, which RPC-like name (`console/CreateOperator`),
 * which accounts, merchant or approval it concerns.
 */
export interface AuditStep {
  actor: ActorIdentity;
  /** The step's name without the `console/` prefix, e.g. `CreateOperator`. */
  action: string;
  targets: ReadonlyArray<string | undefined>;
  reason?: string;
  /** The merchant a team change concerns: the merchant's own trail shows it. */
  merchantId?: string;
  approvalId?: string;
  /** Who asked for an approved change (the row's actor is the approver). */
  maker?: string;
}

/** Appends the step's row with `outcome`, in `db` (the change's transaction when there is one). */
export async function recordStep(ctx: Pick<ConsoleContext, "clock" | "logger">, db: Knex, step: AuditStep, outcome: string): Promise<void> {
  await recordAudit(db, ctx.clock, ctx.logger, {
    service: "console",
    rpc: `console/${step.action}`,
    actor: step.actor.subject,
    actorKind: step.actor.kind,
    role: step.actor.role,
    targets: step.targets,
    reason: step.reason ?? "",
    outcome,
    ...(step.merchantId ? { merchantId: step.merchantId } : {}),
    ...(step.approvalId ? { approvalId: step.approvalId } : {}),
    ...(step.maker ? { maker: step.maker } : {}),
  });
}

/** What a change answers, and how its audit row reads (`ok` unless it says, e.g. `APPROVAL_REQUIRED`). */
export interface StepResult<T> {
  result: T;
  outcome?: string;
  /** Details for the row, known only once the change ran (the new user's id, the roles). */
  reason?: string;
  /** What only the change learns of its row: the approval it asked or decided, its maker, more targets. */
  step?: Partial<Pick<AuditStep, "targets" | "approvalId" | "maker" | "merchantId">>;
}

/**
 * Runs `change` in one transaction that also writes its audit row, so a change is never without
 * its record nor a record without its change (a crash between two commits would lose one). A
 * refusal (a ConsoleError, or anything else as INTERNAL) rolls the change back and is recorded
 * on its own afterwards: nothing changed that its row could be written with.
 */
export async function auditedChange<T>(ctx: Pick<ConsoleContext, "db" | "clock" | "logger">, step: AuditStep, change: (trx: Knex.Transaction) => Promise<StepResult<T>>): Promise<T> {
  try {
    // Retried whole on a deadlock or a busy database (MySQL undoes the whole transaction then).
    return await transactionWithRetry(ctx.db, async (trx) => {
      const done = await change(trx);
      await recordStep(ctx, trx, { ...step, ...done.step, ...(done.reason !== undefined ? { reason: done.reason } : {}) }, done.outcome ?? "ok");
      return done.result;
    });
  } catch (err) {
    await recordStep(ctx, ctx.db, step, err instanceof ConsoleError ? err.code : "INTERNAL");
    throw err;
  }
}
