import type { Knex } from "knex";
import { isUniqueViolation } from "@payments/kit";
import { roleAtLeast, type OperatorIdentity, type OperatorRole } from "@payments/access";
import { nowMs, type ConsoleContext } from "../context.js";
import { badRequest, conflict, ConsoleError, forbidden, notFound } from "../errors.js";
import { decideApproval, findApproval, requestApproval, type Approval } from "./approvals.js";
import { countEnabledAdmins, findOperatorByEmail, insertOperator, isEmail, normaliseEmail, updateOperator, type Operator } from "./operators.js";
import { deleteSessionsOf } from "./sessions.js";
import { createSignInLink, type LinkPurpose } from "./sign-in-links.js";

/** Who asks for a change: a signed-in admin (CLI session) or the holder of an admin assertion. */
export type Actor = OperatorIdentity;

/** Roles a change to needs a second admin (four-eyes): they move money or grant access. */
const GUARDED_ROLES: ReadonlySet<OperatorRole> = new Set(["finance", "admin"]);

/** A one-time link to hand to the operator: where they set their password. */
export interface SignInLinkOut {
  url: string;
  expiresAt: number;
}

export type ChangeOutcome =
  | { status: "done"; operator: Operator; link?: SignInLinkOut }
  | { status: "pending_approval"; approval: Approval };

export function signInLinkUrl(ctx: Pick<ConsoleContext, "publicUrl">, token: string): string {
  return `${ctx.publicUrl}/set-password?token=${encodeURIComponent(token)}`;
}

async function issueLink(ctx: ConsoleContext, db: Knex, operator: Operator, purpose: LinkPurpose, createdBy: string): Promise<SignInLinkOut> {
  const { token, expiresAt } = await createSignInLink(db, { operatorId: operator.id, purpose, createdBy, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_SIGN_IN_LINK_TTL });
  return { url: signInLinkUrl(ctx, token), expiresAt };
}

/**
 * Whether a change to a guarded role waits for a second admin. Always, except for the very first
 * admin: with no enabled admin account yet there is nobody to approve, and whoever holds an admin
 * assertion then holds the signing key (a service token minted with it) and could do anything anyway.
 */
async function needsSecondAdmin(ctx: ConsoleContext, role: OperatorRole): Promise<boolean> {
  if (!GUARDED_ROLES.has(role)) return false;
  return (await countEnabledAdmins(ctx.db)) > 0;
}

async function existing(ctx: ConsoleContext, email: string): Promise<Operator> {
  const operator = await findOperatorByEmail(ctx.db, email);
  if (!operator) throw notFound(`no operator ${normaliseEmail(email)}`);
  return operator;
}

export interface CreateOperatorInput {
  email: string;
  displayName: string;
  role: OperatorRole;
}

function checkedNewOperator(input: CreateOperatorInput): CreateOperatorInput {
  const email = normaliseEmail(input.email);
  if (!isEmail(email)) throw badRequest("INVALID_EMAIL", "email must be an email address");
  const displayName = input.displayName.trim();
  if (displayName.length === 0 || displayName.length > 200) throw badRequest("INVALID_NAME", "display name must be 1 to 200 characters");
  return { email, displayName, role: input.role };
}

async function applyCreate(ctx: ConsoleContext, input: CreateOperatorInput, createdBy: string): Promise<ChangeOutcome> {
  return ctx.db.transaction(async (trx) => {
    let operator: Operator;
    try {
      operator = await insertOperator(trx, { ...input, createdBy }, nowMs(ctx));
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict("OPERATOR_EXISTS", `an operator ${input.email} exists already`);
      throw err;
    }
    return { status: "done", operator, link: await issueLink(ctx, trx, operator, "create", createdBy) };
  });
}

/** A new account and its one-time link; a finance or admin account waits for a second admin. */
export async function createOperator(ctx: ConsoleContext, actor: Actor, input: CreateOperatorInput): Promise<ChangeOutcome> {
  const checked = checkedNewOperator(input);
  if (await findOperatorByEmail(ctx.db, checked.email)) throw conflict("OPERATOR_EXISTS", `an operator ${checked.email} exists already`);
  if (await needsSecondAdmin(ctx, checked.role)) {
    const approval = await requestApproval(ctx.db, {
      action: "create_operator",
      payload: { ...checked },
      targetEmail: checked.email,
      requestedBy: actor.subject,
      now: nowMs(ctx),
      ttlMs: ctx.config.CONSOLE_APPROVAL_TTL,
    });
    return { status: "pending_approval", approval };
  }
  return applyCreate(ctx, checked, actor.subject);
}

/** Raising someone to finance or admin waits for a second admin; any other change is made at once. */
export async function setOperatorRole(ctx: ConsoleContext, actor: Actor, email: string, role: OperatorRole): Promise<ChangeOutcome> {
  const operator = await existing(ctx, email);
  if (operator.role === role) return { status: "done", operator };
  const raises = !roleAtLeast(operator.role, role);
  if (raises && (await needsSecondAdmin(ctx, role))) {
    const approval = await requestApproval(ctx.db, {
      action: "set_role",
      payload: { email: operator.email, from: operator.role, role },
      targetEmail: operator.email,
      requestedBy: actor.subject,
      now: nowMs(ctx),
      ttlMs: ctx.config.CONSOLE_APPROVAL_TTL,
    });
    return { status: "pending_approval", approval };
  }
  if (operator.role === "admin" && !operator.disabled) await keepOneAdmin(ctx);
  await updateOperator(ctx.db, operator.id, { role });
  return { status: "done", operator: { ...operator, role } };
}

/** The last enabled admin is never demoted or disabled: nobody could manage accounts afterwards. */
async function keepOneAdmin(ctx: ConsoleContext): Promise<void> {
  if ((await countEnabledAdmins(ctx.db)) <= 1) throw conflict("LAST_ADMIN", "this is the last enabled admin: make another admin first");
}

/** Disabling ends every session of the account at once (browser and CLI). */
export async function disableOperator(ctx: ConsoleContext, actor: Actor, email: string): Promise<Operator> {
  const operator = await existing(ctx, email);
  if (operator.email === actor.subject) throw forbidden("OWN_ACCOUNT", "you cannot disable your own account");
  if (!operator.disabled && operator.role === "admin") await keepOneAdmin(ctx);
  await ctx.db.transaction(async (trx) => {
    await updateOperator(trx, operator.id, { disabled: true });
    await deleteSessionsOf(trx, operator.id);
  });
  ctx.logger.info({ operator: operator.email, by: actor.subject }, "operator disabled");
  return { ...operator, disabled: true };
}

export async function enableOperator(ctx: ConsoleContext, actor: Actor, email: string): Promise<Operator> {
  const operator = await existing(ctx, email);
  await updateOperator(ctx.db, operator.id, { disabled: false });
  ctx.logger.info({ operator: operator.email, by: actor.subject }, "operator enabled");
  return { ...operator, disabled: false };
}

/**
 * A new one-time link (earlier ones stop working) and every session ended; with `clearTotp` the
 * second factor too (a lost phone), so the operator enrols again after setting a password.
 */
export async function resetOperator(ctx: ConsoleContext, actor: Actor, email: string, options: { clearTotp?: boolean } = {}): Promise<{ operator: Operator; link: SignInLinkOut }> {
  const operator = await existing(ctx, email);
  return ctx.db.transaction(async (trx) => {
    await deleteSessionsOf(trx, operator.id);
    if (options.clearTotp) await updateOperator(trx, operator.id, { totpSecret: null, totpLastStep: null });
    const link = await issueLink(ctx, trx, operator, "reset", actor.subject);
    return { operator: options.clearTotp ? { ...operator, totpSecret: null } : operator, link };
  });
}

/** A second admin says yes: the change is applied exactly as it was asked. Never by whoever asked. */
export async function approveChange(ctx: ConsoleContext, actor: Actor, id: string): Promise<{ approval: Approval; outcome: ChangeOutcome }> {
  const approval = await pendingApproval(ctx, id);
  if (approval.requestedBy === actor.subject) throw forbidden("OWN_REQUEST", "the admin who asked for a change cannot approve it: another admin must");
  // Decided first: of two approvals at once only one applies the change.
  if (!(await decideApproval(ctx.db, id, "approved", actor.subject, nowMs(ctx)))) throw conflict("APPROVAL_NOT_PENDING", "this request is no longer waiting for approval");
  const decided: Approval = { ...approval, status: "approved", decidedBy: actor.subject, decidedAt: nowMs(ctx) };
  const payload = approval.payload as Record<string, string>;
  let outcome: ChangeOutcome;
  if (approval.action === "create_operator") {
    outcome = await applyCreate(ctx, checkedNewOperator({ email: payload.email ?? "", displayName: payload.displayName ?? "", role: guardedRole(payload.role) }), approval.requestedBy);
  } else {
    const operator = await existing(ctx, approval.targetEmail);
    const role = guardedRole(payload.role);
    await updateOperator(ctx.db, operator.id, { role });
    outcome = { status: "done", operator: { ...operator, role } };
  }
  ctx.logger.info({ approval: id, action: approval.action, target: approval.targetEmail, by: actor.subject }, "change approved");
  return { approval: decided, outcome };
}

/** Another admin says no; the admin who asked may withdraw it the same way. */
export async function rejectChange(ctx: ConsoleContext, actor: Actor, id: string): Promise<Approval> {
  const approval = await pendingApproval(ctx, id);
  if (!(await decideApproval(ctx.db, id, "rejected", actor.subject, nowMs(ctx)))) throw conflict("APPROVAL_NOT_PENDING", "this request is no longer waiting for approval");
  return { ...approval, status: "rejected", decidedBy: actor.subject, decidedAt: nowMs(ctx) };
}

async function pendingApproval(ctx: ConsoleContext, id: string): Promise<Approval> {
  const approval = await findApproval(ctx.db, id, nowMs(ctx));
  if (!approval) throw notFound(`no approval ${id}`);
  if (approval.status !== "pending") throw conflict("APPROVAL_NOT_PENDING", `this request is ${approval.status}`);
  return approval;
}

function guardedRole(value: string | undefined): OperatorRole {
  if (value === "finance" || value === "admin") return value;
  throw new ConsoleError(500, "INTERNAL_ERROR", "an approval names a role it cannot");
}
