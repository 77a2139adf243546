import type { Knex } from "knex";
import { isUniqueViolation } from "@payments/kit";
import { isOperatorRole, roleAtLeast, type OperatorIdentity, type OperatorRole } from "@payments/access";
import { nowMs, type ConsoleContext } from "../context.js";
import { badRequest, conflict, ConsoleError, forbidden, notFound } from "../errors.js";
import { needsSecondAdmin, requestApproval, samePerson, type Approval, type ApprovalAction } from "./approvals.js";
import { auditedChange, type StepResult } from "./console-audit.js";
import type { MerchantUser } from "./merchant-users.js";
import { countEnabledAdmins, findOperatorByEmail, insertOperator, isEmail, normaliseEmail, updateOperator, type Operator } from "./operators.js";
import { deleteSessionsOf } from "./sessions.js";
import { createSignInLink, type LinkPurpose } from "./sign-in-links.js";

/** Who asks for a change: a signed-in admin (CLI session) or the holder of an admin assertion. */
export type Actor = OperatorIdentity;

/** A one-time link to hand to the operator: where they set their password. */
export interface SignInLinkOut {
  url: string;
  expiresAt: number;
}

/**
 * What a change of an account did: done at once (with the one-time link, for whoever is to hand
 * it over: the admin who made the change, or the second admin who approved it), or stored as a
 * request that waits for a second admin (and no link: the maker never holds one).
 */
export type ChangeOutcome =
  | { status: "done"; operator: Operator; link?: SignInLinkOut }
  | { status: "done"; user: MerchantUser; link?: SignInLinkOut }
  | { status: "pending_approval"; approval: Approval };

export function signInLinkUrl(ctx: Pick<ConsoleContext, "publicUrl">, token: string): string {
  return `${ctx.publicUrl}/set-password?token=${encodeURIComponent(token)}`;
}

async function issueLink(ctx: ConsoleContext, db: Knex, operator: Operator, purpose: LinkPurpose, createdBy: string): Promise<SignInLinkOut> {
  const { token, expiresAt } = await createSignInLink(db, { operatorId: operator.id, purpose, createdBy, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_SIGN_IN_LINK_TTL });
  return { url: signInLinkUrl(ctx, token), expiresAt };
}

async function existing(db: Knex, email: string): Promise<Operator> {
  const operator = await findOperatorByEmail(db, email);
  if (!operator) throw notFound(`no operator ${normaliseEmail(email)}`);
  return operator;
}

/**
 * Stores the change as a request for a second admin, in the transaction that audits it
 * (`APPROVAL_REQUIRED`, with the approval's id).
 */
export async function askSecondAdmin(
  ctx: ConsoleContext,
  trx: Knex,
  actor: Actor,
  ask: { action: ApprovalAction; payload: Record<string, unknown>; targetEmail: string },
): Promise<StepResult<{ status: "pending_approval"; approval: Approval }>> {
  const approval = await requestApproval(trx, { ...ask, requestedBy: actor.subject, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_APPROVAL_TTL });
  return { result: { status: "pending_approval", approval }, outcome: "APPROVAL_REQUIRED", step: { approvalId: approval.id } };
}

export interface CreateOperatorInput {
  email: string;
  displayName: string;
  role: OperatorRole;
}

function checkedNewOperator(input: { email?: unknown; displayName?: unknown; role?: unknown }): CreateOperatorInput {
  const email = normaliseEmail(typeof input.email === "string" ? input.email : "");
  if (!isEmail(email)) throw badRequest("INVALID_EMAIL", "email must be an email address");
  const displayName = typeof input.displayName === "string" ? input.displayName.trim() : "";
  if (displayName.length === 0 || displayName.length > 200) throw badRequest("INVALID_NAME", "display name must be 1 to 200 characters");
  if (typeof input.role !== "string" || !isOperatorRole(input.role)) throw badRequest("INVALID_ROLE", "role must be an operator role");
  return { email, displayName, role: input.role };
}

/** The account and its link, in `trx`: the link is for `linkFor`, who hands it over. */
async function insertWithLink(ctx: ConsoleContext, trx: Knex, input: CreateOperatorInput, createdBy: string, linkFor: string): Promise<ChangeOutcome> {
  let operator: Operator;
  try {
    operator = await insertOperator(trx, { ...input, createdBy }, nowMs(ctx));
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("OPERATOR_EXISTS", `an operator ${input.email} exists already`);
    throw err;
  }
  return { status: "done", operator, link: await issueLink(ctx, trx, operator, "create", linkFor) };
}

/** A new account of any role waits for a second admin, who gets its one-time link (bootstrap aside: approvals.ts). */
export async function createOperator(ctx: ConsoleContext, actor: Actor, input: CreateOperatorInput): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, { actor, action: "CreateOperator", targets: [normaliseEmail(input.email)] }, async (trx) => {
    const checked = checkedNewOperator(input);
    if (await findOperatorByEmail(trx, checked.email)) throw conflict("OPERATOR_EXISTS", `an operator ${checked.email} exists already`);
    const reason = `${checked.email} as ${checked.role}`;
    if (await needsSecondAdmin(trx)) return { ...(await askSecondAdmin(ctx, trx, actor, { action: "create_operator", payload: { ...checked }, targetEmail: checked.email })), reason };
    return { result: await insertWithLink(ctx, trx, checked, actor.subject, actor.subject), reason };
  });
}

/** The last enabled admin is never demoted or disabled: nobody could manage accounts afterwards. */
async function keepOneAdmin(trx: Knex): Promise<void> {
  if ((await countEnabledAdmins(trx)) <= 1) throw conflict("LAST_ADMIN", "this is the last enabled admin: make another admin first");
}

/** Raising any role waits for a second admin; lowering one is done at once (it only takes access away). */
export async function setOperatorRole(ctx: ConsoleContext, actor: Actor, email: string, role: OperatorRole): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, { actor, action: "SetOperatorRole", targets: [normaliseEmail(email)] }, async (trx) => {
    const operator = await existing(trx, email);
    const reason = `${operator.role} to ${role}`;
    if (operator.role === role) return { result: { status: "done", operator }, reason };
    if (!roleAtLeast(operator.role, role) && (await needsSecondAdmin(trx))) {
      return { ...(await askSecondAdmin(ctx, trx, actor, { action: "set_role", payload: { email: operator.email, from: operator.role, role }, targetEmail: operator.email })), reason };
    }
    if (operator.role === "admin" && !operator.disabled) await keepOneAdmin(trx);
    await updateOperator(trx, operator.id, { role });
    return { result: { status: "done", operator: { ...operator, role } }, reason };
  });
}

/** Disabling ends every session of the account at once (browser and CLI); it takes access away, so one admin may. */
export async function disableOperator(ctx: ConsoleContext, actor: Actor, email: string): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, { actor, action: "DisableOperator", targets: [normaliseEmail(email)] }, async (trx) => {
    const operator = await existing(trx, email);
    if (samePerson(operator.email, actor.subject)) throw forbidden("OWN_ACCOUNT", "you cannot disable your own account");
    if (!operator.disabled && operator.role === "admin") await keepOneAdmin(trx);
    await updateOperator(trx, operator.id, { disabled: true });
    await deleteSessionsOf(trx, operator.id);
    return { result: { status: "done", operator: { ...operator, disabled: true } } };
  });
}

/** Enabling gives an account its access back: it waits for a second admin. */
export async function enableOperator(ctx: ConsoleContext, actor: Actor, email: string): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, { actor, action: "EnableOperator", targets: [normaliseEmail(email)] }, async (trx) => {
    const operator = await existing(trx, email);
    if (!operator.disabled) return { result: { status: "done", operator } };
    if (await needsSecondAdmin(trx)) return askSecondAdmin(ctx, trx, actor, { action: "enable_operator", payload: { email: operator.email }, targetEmail: operator.email });
    return { result: await applyEnable(trx, operator) };
  });
}

/** Enabled with no session carried over: any left from before the account was disabled ends. */
async function applyEnable(trx: Knex, operator: Operator): Promise<ChangeOutcome> {
  await updateOperator(trx, operator.id, { disabled: false });
  await deleteSessionsOf(trx, operator.id);
  return { status: "done", operator: { ...operator, disabled: false } };
}

/**
 * A new one-time link (earlier ones stop working) and every session ended; with `clearTotp` the
 * second factor too (a lost phone). Whoever holds the link can take the account over, so it waits
 * for a second admin, who gets the link; an admin alone would otherwise sign in as anyone.
 */
export async function resetOperator(ctx: ConsoleContext, actor: Actor, email: string, options: { clearTotp?: boolean } = {}): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, { actor, action: "ResetOperator", targets: [normaliseEmail(email)] }, async (trx) => {
    const operator = await existing(trx, email);
    const clearTotp = options.clearTotp === true;
    const reason = clearTotp ? "new sign-in link, TOTP cleared" : "new sign-in link";
    if (await needsSecondAdmin(trx)) return { ...(await askSecondAdmin(ctx, trx, actor, { action: "reset_operator", payload: { email: operator.email, clearTotp }, targetEmail: operator.email })), reason };
    return { result: await applyReset(ctx, trx, operator, clearTotp, actor.subject), reason };
  });
}

async function applyReset(ctx: ConsoleContext, trx: Knex, operator: Operator, clearTotp: boolean, linkFor: string): Promise<ChangeOutcome> {
  await deleteSessionsOf(trx, operator.id);
  if (clearTotp) await updateOperator(trx, operator.id, { totpSecret: null, totpLastStep: null });
  const link = await issueLink(ctx, trx, operator, "reset", linkFor);
  return { status: "done", operator: clearTotp ? { ...operator, totpSecret: null, totpLastStep: null } : operator, link };
}

/**
 * Applies an approved change to an operator account as it was asked, in the approval's
 * transaction; a link it makes is the approver's to hand over, never the maker's.
 */
export async function applyOperatorChange(ctx: ConsoleContext, trx: Knex, approval: Approval, approver: Actor): Promise<ChangeOutcome> {
  const payload = approval.payload;
  switch (approval.action) {
    case "create_operator":
      return insertWithLink(ctx, trx, checkedNewOperator(payload), approval.requestedBy, approver.subject);
    case "set_role": {
      const operator = await existing(trx, approval.targetEmail);
      const role = payload.role;
      if (typeof role !== "string" || !isOperatorRole(role)) throw new ConsoleError(500, "INTERNAL_ERROR", "an approval names a role that is not one");
      await updateOperator(trx, operator.id, { role });
      return { status: "done", operator: { ...operator, role } };
    }
    case "enable_operator":
      return applyEnable(trx, await existing(trx, approval.targetEmail));
    case "reset_operator":
      return applyReset(ctx, trx, await existing(trx, approval.targetEmail), payload.clearTotp === true, approver.subject);
    default:
      throw conflict("UNKNOWN_CHANGE", `this console cannot apply a ${approval.action} request`);
  }
}
