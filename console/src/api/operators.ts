import { z } from "zod";
import { OPERATOR_ROLES } from "@payments/access";
import { approveChange, rejectChange } from "../identity/approval-decisions.js";
import { recordStep } from "../identity/console-audit.js";
import { listApprovals, publicApproval } from "../identity/approvals.js";
import { createOperator, disableOperator, enableOperator, resetOperator, setOperatorRole, type ChangeOutcome } from "../identity/operator-admin.js";
import { publicMerchantUser } from "../identity/merchant-users.js";
import { listOperators, publicOperator } from "../identity/operators.js";
import { mailChangeLink, makerLabel, personLabel, purposeOfAction, type LinkDelivery } from "../identity/mail/deliver.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { badRequest, ConsoleError } from "../errors.js";
import type { ConsoleRoute } from "../route.js";
import type { ConsoleContextKoa } from "../state.js";
import { apiRoute, jsonBody } from "./body.js";

const createSchema = z.object({
  email: z.string().min(3).max(254),
  displayName: z.string().min(1).max(200),
  role: z.enum(OPERATOR_ROLES),
});
const roleSchema = z.object({ role: z.enum(OPERATOR_ROLES) });
const resetSchema = z.object({ clearTotp: z.boolean().optional() });

export function actorOf(ctx: ConsoleContextKoa) {
  const actor = ctx.state.actor;
  if (!actor) throw new ConsoleError(401, "UNAUTHENTICATED", "no admin");
  return actor;
}

/**
 * 201/200 with the account (and its one-time link, for whoever is to hand it over), or 202 with
 * the approval it now waits for (no link: the admin who asked never gets one). A link that was
 * mailed (`delivery`) is not in the answer, only `mail: { status: "sent", to }`; one whose mail
 * failed is, with `mail: { status: "failed", to }`.
 */
export function answerChange(ctx: ConsoleContextKoa, outcome: ChangeOutcome, created = false, delivery: LinkDelivery = { status: "shown" }): void {
  if (outcome.status === "pending_approval") {
    ctx.status = 202;
    ctx.body = { status: "pending_approval", approval: publicApproval(outcome.approval) };
    return;
  }
  ctx.status = created ? 201 : 200;
  const link = delivery.status === "sent" ? undefined : outcome.link;
  // A link is a password to be: never kept by a cache on the way.
  if (link) ctx.set("Cache-Control", "no-store");
  ctx.body = {
    status: "done",
    ...("operator" in outcome ? { operator: publicOperator(outcome.operator) } : { user: publicMerchantUser(outcome.user) }),
    ...(link ? { link: { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() } } : {}),
    ...(delivery.status === "shown" ? {} : { mail: { status: delivery.status, to: delivery.to } }),
  };
}

/** Mails the link a change of the admin API made (mail/deliver.ts), in the caller's language, from the admin who made it. */
export function mailedByActor(deps: ConsoleContext, ctx: ConsoleContextKoa, outcome: ChangeOutcome, purpose: "create" | "reset"): Promise<LinkDelivery> {
  const actor = actorOf(ctx);
  return mailChangeLink(deps, actor, outcome, { lang: ctx.state.lang, purpose, by: personLabel(actor.name, actor.subject) });
}

/**
 * The request's JSON body as `schema` says; a body refused here (400, 415) is a refused step of
 * `action` and is audited as such, as the change itself audits its own refusals.
 */
export async function auditedBody<S extends z.ZodType>(deps: ConsoleContext, ctx: ConsoleContextKoa, action: string, targets: string[], schema: S): Promise<z.infer<S>> {
  try {
    return jsonBody(ctx, schema);
  } catch (err) {
    if (err instanceof ConsoleError) await recordStep(deps, deps.db, { actor: actorOf(ctx), action, targets }, err.code);
    throw err;
  }
}

/** A page of the list: `limit` (1-200, default 50) and `after`, the cursor the previous page gave. */
function pageOf(ctx: ConsoleContextKoa): { limit: number; after?: { createdAt: number; id: string } } {
  const limit = ctx.query.limit === undefined ? 50 : Number(ctx.query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw badRequest("VALIDATION_ERROR", "limit: 1 to 200");
  const after = typeof ctx.query.after === "string" ? ctx.query.after : undefined;
  if (!after) return { limit };
  const [createdAt, id] = Buffer.from(after, "base64url").toString("utf8").split("|");
  if (!createdAt || !id || !/^\d+$/.test(createdAt)) throw badRequest("VALIDATION_ERROR", "after: not a cursor this list gave");
  return { limit, after: { createdAt: Number(createdAt), id } };
}

/**
 * The admin API the CLI's `operator …` commands call (adminAuth in front of each). Every change
 * and every approval step, done or refused, is in the console's audit (auth/console-audit.ts),
 * written with the change.
 */
export function operatorRoutes(deps: ConsoleContext): ConsoleRoute[] {
  const email = (ctx: ConsoleContextKoa) => decodeURIComponent((ctx.params as Record<string, string>).email ?? "");
  const id = (ctx: ConsoleContextKoa) => (ctx.params as Record<string, string>).id ?? "";
  return [
    apiRoute("POST", "/api/operators", "admin", async (ctx) => {
      const body = ctx.state.json as { email?: unknown } | undefined;
      const input = await auditedBody(deps, ctx, "CreateOperator", typeof body?.email === "string" ? [body.email.toLowerCase()] : [], createSchema);
      const outcome = await createOperator(deps, actorOf(ctx), input);
      answerChange(ctx, outcome, true, await mailedByActor(deps, ctx, outcome, "create"));
    }),
    apiRoute("GET", "/api/operators", "admin", async (ctx) => {
      const page = pageOf(ctx);
      const operators = await listOperators(deps.db, { ...page, limit: page.limit + 1 });
      const shown = operators.slice(0, page.limit);
      const last = shown.at(-1);
      ctx.body = {
        operators: shown.map(publicOperator),
        next: operators.length > page.limit && last ? Buffer.from(`${last.createdAt}|${last.id}`).toString("base64url") : null,
      };
    }),
    apiRoute("POST", "/api/operators/:email/disable", "admin", async (ctx) => answerChange(ctx, await disableOperator(deps, actorOf(ctx), email(ctx)))),
    apiRoute("POST", "/api/operators/:email/enable", "admin", async (ctx) => answerChange(ctx, await enableOperator(deps, actorOf(ctx), email(ctx)))),
    apiRoute("POST", "/api/operators/:email/role", "admin", async (ctx) => {
      const { role } = await auditedBody(deps, ctx, "SetOperatorRole", [email(ctx)], roleSchema);
      answerChange(ctx, await setOperatorRole(deps, actorOf(ctx), email(ctx), role));
    }),
    apiRoute("POST", "/api/operators/:email/reset", "admin", async (ctx) => {
      const { clearTotp } = await auditedBody(deps, ctx, "ResetOperator", [email(ctx)], resetSchema);
      const outcome = await resetOperator(deps, actorOf(ctx), email(ctx), { clearTotp: clearTotp === true });
      answerChange(ctx, outcome, false, await mailedByActor(deps, ctx, outcome, "reset"));
    }),
    apiRoute("GET", "/api/approvals", "admin", async (ctx) => {
      const status = typeof ctx.query.status === "string" ? ctx.query.status : "pending";
      if (!["pending", "approved", "rejected", "expired", "all"].includes(status)) throw badRequest("VALIDATION_ERROR", "status: pending, approved, rejected, expired or all");
      const approvals = await listApprovals(deps.db, {
        ...(status === "all" ? {} : { status: status as "pending" | "approved" | "rejected" | "expired" }),
        now: nowMs(deps),
        limit: 200,
      });
      ctx.body = { approvals: approvals.map(publicApproval) };
    }),
    apiRoute("POST", "/api/approvals/:id/approve", "admin", async (ctx) => {
      const { approval, outcome } = await approveChange(deps, actorOf(ctx), id(ctx));
      // The mail says who asked for the change: the approver only lets it through.
      const by = deps.mailer ? await makerLabel(deps.db, approval.requestedBy) : approval.requestedBy;
      answerChange(ctx, outcome, false, await mailChangeLink(deps, actorOf(ctx), outcome, { lang: ctx.state.lang, purpose: purposeOfAction(approval.action), by }));
      ctx.body = { ...(ctx.body as Record<string, unknown>), approval: publicApproval(approval) };
    }),
    apiRoute("POST", "/api/approvals/:id/reject", "admin", async (ctx) => {
      ctx.body = { status: "done", approval: publicApproval(await rejectChange(deps, actorOf(ctx), id(ctx))) };
    }),
  ];
}
