import { z } from "zod";
import { OPERATOR_ROLES, recordAudit } from "@payments/access";
import { publicApproval } from "../auth/approvals.js";
import { approveChange, createOperator, disableOperator, enableOperator, rejectChange, resetOperator, setOperatorRole, type ChangeOutcome } from "../auth/operator-admin.js";
import { listOperators, publicOperator } from "../auth/operators.js";
import { listApprovals } from "../auth/approvals.js";
import { nowMs, type ConsoleContext } from "../context.js";
import { badRequest, ConsoleError } from "../errors.js";
import type { ConsoleRoute } from "../route.js";
import type { ConsoleContextKoa } from "../state.js";
import { jsonBody } from "./body.js";

const createSchema = z.object({
  email: z.string().min(3).max(254),
  displayName: z.string().min(1).max(200),
  role: z.enum(OPERATOR_ROLES),
});
const roleSchema = z.object({ role: z.enum(OPERATOR_ROLES) });
const resetSchema = z.object({ clearTotp: z.boolean().optional() });

function actorOf(ctx: ConsoleContextKoa) {
  const actor = ctx.state.actor;
  if (!actor) throw new ConsoleError(401, "UNAUTHENTICATED", "no admin");
  return actor;
}

/** 201/200 with the account (and its one-time link), or 202 with the approval it now waits for. */
function answer(ctx: ConsoleContextKoa, outcome: ChangeOutcome, created = false): void {
  if (outcome.status === "pending_approval") {
    ctx.status = 202;
    ctx.body = { status: "pending_approval", approval: publicApproval(outcome.approval) };
    return;
  }
  ctx.status = created ? 201 : 200;
  ctx.body = {
    status: "done",
    operator: publicOperator(outcome.operator),
    ...(outcome.link ? { link: { url: outcome.link.url, expiresAt: new Date(outcome.link.expiresAt).toISOString() } } : {}),
  };
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
 * Every change of an operator account and every approval step, done or refused, appended to the
 * console's audit (the kit's table, as each service keeps its own): who, as what role, which
 * account or approval, and how it ended (`ok`, `APPROVAL_REQUIRED`, or the refusal's code).
 */
function audited(deps: ConsoleContext, action: string, targets: (ctx: ConsoleContextKoa) => string[], handler: ConsoleRoute["handler"]): ConsoleRoute["handler"] {
  return async (ctx, next) => {
    const record = (outcome: string) =>
      recordAudit(deps.db, deps.clock, deps.logger, {
        service: "console",
        rpc: `console/${action}`,
        actor: ctx.state.actor?.subject ?? "",
        actorKind: ctx.state.actor?.kind ?? "",
        role: ctx.state.actor?.role ?? "",
        targets: targets(ctx),
        reason: "",
        outcome,
      });
    try {
      await handler(ctx, next);
    } catch (err) {
      await record(err instanceof ConsoleError ? err.code : "INTERNAL");
      throw err;
    }
    await record(ctx.status === 202 ? "APPROVAL_REQUIRED" : "ok");
  };
}

/** The admin API the CLI's `operator …` commands call (adminAuth in front of each). */
export function operatorRoutes(deps: ConsoleContext): ConsoleRoute[] {
  const email = (ctx: ConsoleContextKoa) => decodeURIComponent((ctx.params as Record<string, string>).email ?? "");
  const bodyEmail = (ctx: ConsoleContextKoa) => {
    const body = ctx.state.json as { email?: unknown } | undefined;
    return typeof body?.email === "string" ? [body.email.toLowerCase()] : [];
  };
  const byEmail = (ctx: ConsoleContextKoa) => [email(ctx)];
  const byId = (ctx: ConsoleContextKoa) => [(ctx.params as Record<string, string>).id ?? ""];
  return [
    {
      method: "POST",
      path: "/api/operators",
      access: "admin",
      handler: audited(deps, "CreateOperator", bodyEmail, async (ctx) => answer(ctx, await createOperator(deps, actorOf(ctx), jsonBody(ctx, createSchema)), true)),
    },
    {
      method: "GET",
      path: "/api/operators",
      access: "admin",
      handler: async (ctx) => {
        const page = pageOf(ctx);
        const operators = await listOperators(deps.db, { ...page, limit: page.limit + 1 });
        const shown = operators.slice(0, page.limit);
        const last = shown.at(-1);
        ctx.body = {
          operators: shown.map(publicOperator),
          next: operators.length > page.limit && last ? Buffer.from(`${last.createdAt}|${last.id}`).toString("base64url") : null,
        };
      },
    },
    {
      method: "POST",
      path: "/api/operators/:email/disable",
      access: "admin",
      handler: audited(deps, "DisableOperator", byEmail, async (ctx) => {
        ctx.body = { status: "done", operator: publicOperator(await disableOperator(deps, actorOf(ctx), email(ctx))) };
      }),
    },
    {
      method: "POST",
      path: "/api/operators/:email/enable",
      access: "admin",
      handler: audited(deps, "EnableOperator", byEmail, async (ctx) => {
        ctx.body = { status: "done", operator: publicOperator(await enableOperator(deps, actorOf(ctx), email(ctx))) };
      }),
    },
    {
      method: "POST",
      path: "/api/operators/:email/role",
      access: "admin",
      handler: audited(deps, "SetOperatorRole", byEmail, async (ctx) => answer(ctx, await setOperatorRole(deps, actorOf(ctx), email(ctx), jsonBody(ctx, roleSchema).role))),
    },
    {
      method: "POST",
      path: "/api/operators/:email/reset",
      access: "admin",
      handler: audited(deps, "ResetOperator", byEmail, async (ctx) => {
        const { operator, link } = await resetOperator(deps, actorOf(ctx), email(ctx), { clearTotp: jsonBody(ctx, resetSchema).clearTotp === true });
        ctx.body = { status: "done", operator: publicOperator(operator), link: { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() } };
      }),
    },
    {
      method: "GET",
      path: "/api/approvals",
      access: "admin",
      handler: async (ctx) => {
        const status = typeof ctx.query.status === "string" ? ctx.query.status : "pending";
        if (!["pending", "approved", "rejected", "expired", "all"].includes(status)) throw badRequest("VALIDATION_ERROR", "status: pending, approved, rejected, expired or all");
        const approvals = await listApprovals(deps.db, {
          ...(status === "all" ? {} : { status: status as "pending" | "approved" | "rejected" | "expired" }),
          now: nowMs(deps),
          limit: 200,
        });
        ctx.body = { approvals: approvals.map(publicApproval) };
      },
    },
    {
      method: "POST",
      path: "/api/approvals/:id/approve",
      access: "admin",
      handler: audited(deps, "ApproveChange", byId, async (ctx) => {
        const { approval, outcome } = await approveChange(deps, actorOf(ctx), ctx.params.id ?? "");
        answer(ctx, outcome);
        ctx.body = { ...(ctx.body as Record<string, unknown>), approval: publicApproval(approval) };
      }),
    },
    {
      method: "POST",
      path: "/api/approvals/:id/reject",
      access: "admin",
      handler: audited(deps, "RejectChange", byId, async (ctx) => {
        ctx.body = { status: "done", approval: publicApproval(await rejectChange(deps, actorOf(ctx), ctx.params.id ?? "")) };
      }),
    },
  ];
}
