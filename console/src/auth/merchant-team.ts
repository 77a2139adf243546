import { forUpdate, isUniqueViolation, transactionWithRetry } from "@payments/kit";
import { recordAudit, type ActorIdentity, type MerchantRole } from "@payments/access";
import type { Knex } from "knex";
import { nowMs, type ConsoleContext } from "../context.js";
import { badRequest, conflict, ConsoleError, notFound } from "../errors.js";
import {
  disableMerchantUser,
  findMerchantUserByEmail,
  findMerchantUserOf,
  insertMerchantUser,
  merchantIdentityOf,
  updateMerchantUser,
  updateMerchantUserRole,
  type MerchantUser,
} from "./merchant-users.js";
import { isEmail, normaliseEmail } from "./operators.js";
import type { SignInLinkOut } from "./operator-admin.js";
import { deleteSessionsOf, MERCHANT_SESSIONS } from "./sessions.js";
import { createSignInLink, MERCHANT_LINKS } from "./sign-in-links.js";

/**
 * Who changes a merchant's team: an operator (admin API, the operator console's merchant page)
 * or the merchant's own owner (the Team page). Recorded as the actor of the audit row.
 */
export type TeamActor = ActorIdentity;

/** The one-time link of a merchant user: the merchant dashboard's set-password page. */
export function merchantSignInLinkUrl(ctx: Pick<ConsoleContext, "publicUrl" | "config">, token: string): string {
  // The merchant dashboard may be another deployment (CONSOLE_AUDIENCE=merchants) than the console that invites.
  return `${ctx.config.CONSOLE_MERCHANT_PUBLIC_URL ?? ctx.publicUrl}/merchant/set-password?token=${encodeURIComponent(token)}`;
}

/**
 * One row of the console's own audit for a team change, done or refused, naming the merchant
 * (merchant_id, and the merchant id among the targets) so the merchant's trail shows it.
 */
async function audit(ctx: ConsoleContext, actor: TeamActor, action: string, merchantId: string, targets: string[], outcome: string, reason = ""): Promise<void> {
  await recordAudit(ctx.db, ctx.clock, ctx.logger, {
    service: "console",
    rpc: `console/${action}`,
    actor: actor.subject,
    actorKind: actor.kind,
    role: actor.role,
    merchantId,
    targets: [merchantId, ...targets],
    reason,
    outcome,
  });
}

/** Runs a team change and audits it, whether it is done (`ok`) or refused (the refusal's code). */
async function audited<T>(ctx: ConsoleContext, actor: TeamActor, action: string, merchantId: string, targets: string[], change: () => Promise<{ result: T; reason?: string }>): Promise<T> {
  try {
    const { result, reason } = await change();
    await audit(ctx, actor, action, merchantId, targets, "ok", reason);
    return result;
  } catch (err) {
    await audit(ctx, actor, action, merchantId, targets, err instanceof ConsoleError ? err.code : "INTERNAL");
    throw err;
  }
}

export interface InviteInput {
  merchantId: string;
  email: string;
  displayName?: string | undefined;
  role: MerchantRole;
}

/**
 * A new user of `merchantId` and their one-time link (CONSOLE_SIGN_IN_LINK_TTL, used once). The
 * merchant's existence is the caller's to check (the admin API asks the merchant service; an
 * owner invites to their own merchant). An email already used by a merchant user is 409.
 */
export async function inviteMerchantUser(ctx: ConsoleContext, actor: TeamActor, input: InviteInput): Promise<{ user: MerchantUser; link: SignInLinkOut }> {
  const email = normaliseEmail(input.email);
  return audited(ctx, actor, "InviteMerchantUser", input.merchantId, [email], async () => {
    if (!isEmail(email)) throw badRequest("INVALID_EMAIL", "email must be an email address");
    const displayName = (input.displayName ?? "").trim() || email.split("@")[0] || email;
    if (displayName.length > 200) throw badRequest("INVALID_NAME", "display name must be at most 200 characters");
    if (await findMerchantUserByEmail(ctx.db, email)) throw conflict("MERCHANT_USER_EXISTS", `a merchant user ${email} exists already`);
    const result = await ctx.db.transaction(async (trx) => {
      let user: MerchantUser;
      try {
        user = await insertMerchantUser(trx, { merchantId: input.merchantId, email, displayName, role: input.role, createdBy: actor.subject }, nowMs(ctx));
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict("MERCHANT_USER_EXISTS", `a merchant user ${email} exists already`);
        throw err;
      }
      const { token, expiresAt } = await createSignInLink(trx, { operatorId: user.id, purpose: "create", createdBy: actor.subject, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_SIGN_IN_LINK_TTL }, MERCHANT_LINKS);
      return { user, link: { url: merchantSignInLinkUrl(ctx, token), expiresAt } };
    });
    return { result, reason: `${result.user.id} as ${input.role}` };
  });
}

async function userOf(ctx: ConsoleContext, merchantId: string, userId: string): Promise<MerchantUser> {
  // Another merchant's user (or none) is the same 404: an id tells nothing across merchants.
  const user = await findMerchantUserOf(ctx.db, merchantId, userId);
  if (!user || user.disabled) throw notFound("no such user in this team");
  return user;
}

/**
 * Runs `change` (a demotion or removal of `userId`) in a transaction that first locks the
 * merchant's enabled owners (FOR UPDATE on MySQL; SQLite has one writer) and refuses it when
 * `userId` is the last of them: nobody could manage the team afterwards. Two owners removing
 * each other at once are serialised here, so one of them always stays.
 */
async function keepingAnOwner(ctx: ConsoleContext, merchantId: string, userId: string, change: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
  await transactionWithRetry(ctx.db, async (trx) => {
    const owners = (await forUpdate(trx, trx("merchant_users").where({ merchant_id: merchantId, role: "owner", disabled: false }).select("id"))) as Array<{ id: string }>;
    if (owners.some((o) => o.id === userId) && owners.every((o) => o.id === userId)) throw conflict("LAST_OWNER", "this is the last owner: make another owner first");
    await change(trx);
  });
}

/** A new role for a user of `merchantId` (their sessions go on with the new role at once). */
export async function changeMerchantUserRole(ctx: ConsoleContext, actor: TeamActor, merchantId: string, userId: string, role: MerchantRole): Promise<MerchantUser> {
  return audited(ctx, actor, "SetMerchantUserRole", merchantId, [userId], async () => {
    const user = await userOf(ctx, merchantId, userId);
    if (role === "owner") await updateMerchantUserRole(ctx.db, user.id, role);
    else await keepingAnOwner(ctx, merchantId, user.id, (trx) => updateMerchantUserRole(trx, user.id, role));
    return { result: { ...user, role }, reason: `${user.email}: ${user.role} to ${role}` };
  });
}

/** Removes a user of `merchantId`: disabled, every session and unused link ended. */
export async function removeMerchantUser(ctx: ConsoleContext, actor: TeamActor, merchantId: string, userId: string): Promise<MerchantUser> {
  return audited(ctx, actor, "RemoveMerchantUser", merchantId, [userId], async () => {
    const user = await userOf(ctx, merchantId, userId);
    await keepingAnOwner(ctx, merchantId, user.id, (trx) => disableMerchantUser(trx, user.id, nowMs(ctx)));
    return { result: { ...user, disabled: true }, reason: `${user.email} removed` };
  });
}

/**
 * A new one-time link (`reset`, CONSOLE_SIGN_IN_LINK_TTL) for a user of `merchantId`: every
 * session of theirs ends and any earlier unused link stops working, as an operator's reset does.
 * Their password works until they use the link; `clearTotp` also turns their TOTP off (a lost
 * authenticator). Another merchant's user id (or a removed user) is 404.
 */
export async function resetMerchantUser(ctx: ConsoleContext, actor: TeamActor, merchantId: string, userId: string, options: { clearTotp?: boolean } = {}): Promise<{ user: MerchantUser; link: SignInLinkOut }> {
  return audited(ctx, actor, "ResetMerchantUser", merchantId, [userId], async () => {
    const user = await userOf(ctx, merchantId, userId);
    const result = await ctx.db.transaction(async (trx) => {
      await deleteSessionsOf(trx, user.id, MERCHANT_SESSIONS);
      if (options.clearTotp) await updateMerchantUser(trx, user.id, { totpSecret: null, totpLastStep: null });
      const { token, expiresAt } = await createSignInLink(trx, { operatorId: user.id, purpose: "reset", createdBy: actor.subject, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_SIGN_IN_LINK_TTL }, MERCHANT_LINKS);
      return { user: options.clearTotp ? { ...user, totpSecret: null, totpLastStep: null } : user, link: { url: merchantSignInLinkUrl(ctx, token), expiresAt } };
    });
    return { result, reason: `${user.email}: new sign-in link${options.clearTotp ? ", TOTP cleared" : ""}` };
  });
}

/** A merchant user's own TOTP enrolment or removal (the /merchant/totp page), done or refused, in the merchant's trail. */
export async function auditMerchantTotp(ctx: ConsoleContext, user: MerchantUser, change: { action: "enrol" | "remove"; outcome: string }): Promise<void> {
  const action = change.action === "enrol" ? "EnrolMerchantUserTotp" : "RemoveMerchantUserTotp";
  await audit(ctx, merchantIdentityOf(user), action, user.merchantId, [user.id], change.outcome, user.email);
}
