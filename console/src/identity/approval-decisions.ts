import type { Knex } from "knex";
import { nowMs, type ConsoleContext } from "../context.js";
import { conflict, forbidden, notFound } from "../errors.js";
import { decideApproval, findApproval, samePerson, type Approval } from "./approvals.js";
import { auditedChange } from "./console-audit.js";
import { applyMerchantUserChange, prepareMerchantUserChange } from "./merchant-team.js";
import { applyOperatorChange, type Actor, type ChangeOutcome } from "./operator-admin.js";

async function pendingApproval(db: Knex, id: string, now: number): Promise<Approval> {
  const approval = await findApproval(db, id, now);
  if (!approval) throw notFound(`no approval ${id}`);
  if (approval.status !== "pending") throw conflict("APPROVAL_NOT_PENDING", `this request is ${approval.status}`);
  return approval;
}

const MERCHANT_USER_ACTIONS: ReadonlySet<string> = new Set(["invite_merchant_user", "reset_merchant_user"]);

/**
 * A second admin says yes: the change is applied exactly as it was asked, in one transaction with
 * the decision and its audit row, so of two admins approving at once one applies it and a failed
 * change leaves the request pending. Never by whoever asked, under any spelling of their name
 * (samePerson). A link the change makes is in the answer, for the approver alone.
 */
export async function approveChange(ctx: ConsoleContext, actor: Actor, id: string): Promise<{ approval: Approval; outcome: ChangeOutcome }> {
  // What must be asked of a service (that the merchant exists, as the approver may see it) is asked
  // before the transaction: nothing waits on the network while the console's database is held.
  const asked = await findApproval(ctx.db, id, nowMs(ctx));
  if (asked && asked.status === "pending" && !samePerson(asked.requestedBy, actor.subject) && MERCHANT_USER_ACTIONS.has(asked.action)) {
    await prepareMerchantUserChange(ctx, actor, asked);
  }
  return auditedChange(ctx, { actor, action: "ApproveChange", targets: [id], approvalId: id }, async (trx) => {
    const now = nowMs(ctx);
    const approval = await pendingApproval(trx, id, now);
    if (samePerson(approval.requestedBy, actor.subject)) throw forbidden("OWN_REQUEST", "the admin who asked for a change cannot approve it: another admin must");
    if (!(await decideApproval(trx, id, "approved", actor.subject, now))) throw conflict("APPROVAL_NOT_PENDING", "this request is no longer waiting for approval");
    const outcome = MERCHANT_USER_ACTIONS.has(approval.action) ? await applyMerchantUserChange(ctx, trx, approval, actor) : await applyOperatorChange(ctx, trx, approval, actor);
    ctx.logger.info({ approval: id, action: approval.action, target: approval.targetEmail, by: actor.subject }, "change approved");
    const merchantId = typeof approval.payload.merchantId === "string" ? approval.payload.merchantId : undefined;
    return {
      result: { approval: { ...approval, status: "approved", decidedBy: actor.subject, decidedAt: now }, outcome },
      reason: `${approval.action} ${approval.targetEmail}`,
      step: { targets: [id, approval.targetEmail, merchantId], maker: approval.requestedBy, ...(merchantId ? { merchantId } : {}) },
    };
  });
}

/** Another admin says no; the admin who asked may withdraw it the same way. Nothing is applied. */
export async function rejectChange(ctx: ConsoleContext, actor: Actor, id: string): Promise<Approval> {
  return auditedChange(ctx, { actor, action: "RejectChange", targets: [id], approvalId: id }, async (trx) => {
    const now = nowMs(ctx);
    const approval = await pendingApproval(trx, id, now);
    if (!(await decideApproval(trx, id, "rejected", actor.subject, now))) throw conflict("APPROVAL_NOT_PENDING", "this request is no longer waiting for approval");
    return {
      result: { ...approval, status: "rejected", decidedBy: actor.subject, decidedAt: now },
      reason: `${approval.action} ${approval.targetEmail}`,
      step: { targets: [id, approval.targetEmail], maker: approval.requestedBy },
    };
  });
}
