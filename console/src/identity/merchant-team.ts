import { Code, ConnectError } from "@connectrpc/connect";
import type { Knex } from "knex";
import { MerchantService } from "@payments/contracts/merchant";
import { forUpdate, isUniqueViolation } from "@payments/kit";
import { createAssertionSigner, isMerchantRole, type ActorIdentity, type MerchantRole, type MerchantUserIdentity } from "@payments/access";
import { nowMs, type ConsoleContext } from "../context.js";
import { badRequest, conflict, ConsoleError, notFound } from "../errors.js";
import { needsSecondAdmin, type Approval } from "./approvals.js";
import { auditedChange, recordStep, type AuditStep } from "./console-audit.js";
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
import { askSecondAdmin, type Actor, type ChangeOutcome, type SignInLinkOut } from "./operator-admin.js";
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

/** A team change, done or refused, in the console's audit with the merchant (merchant_id and among the targets), so the merchant's trail shows it. */
function teamStep(actor: TeamActor, action: string, merchantId: string, targets: string[]): AuditStep {
  return { actor, action, merchantId, targets: [merchantId, ...targets] };
}

/**
 * Checks that the merchant exists, as the merchant service tells `actor` (their own assertion):
 * 404 when it does not, 403 when the service refuses them, 503 when it does not answer.
 */
export async function checkMerchantFor(ctx: ConsoleContext, actor: ActorIdentity, merchantId: string): Promise<void> {
  if (!ctx.privateKey) throw new ConsoleError(503, "NO_ASSERTION_KEY", "the console cannot sign assertions");
  const signer = createAssertionSigner(ctx.privateKey, actor, { now: () => ctx.clock.now() });
  try {
    await ctx.services.client(MerchantService, signer).getMerchant({ merchantId });
  } catch (err) {
    const code = err instanceof ConnectError ? err.code : undefined;
    if (code === Code.NotFound) throw notFound(`no merchant ${merchantId}`);
    if (code === Code.PermissionDenied) throw new ConsoleError(403, "FORBIDDEN", "the merchant service refused to show this merchant");
    ctx.logger.warn({ err, merchant: merchantId }, "merchant check failed");
    throw new ConsoleError(503, "UNAVAILABLE", "the merchant service does not answer");
  }
}

export interface InviteInput {
  merchantId: string;
  email: string;
  displayName?: string | undefined;
  role: MerchantRole;
}

function checkedInvite(input: InviteInput): InviteInput & { displayName: string } {
  const email = normaliseEmail(input.email);
  if (!isEmail(email)) throw badRequest("INVALID_EMAIL", "email must be an email address");
  if (!isMerchantRole(input.role)) throw badRequest("INVALID_ROLE", "role must be owner, developer, finance or viewer");
  const displayName = (input.displayName ?? "").trim() || email.split("@")[0] || email;
  if (displayName.length > 200) throw badRequest("INVALID_NAME", "display name must be at most 200 characters");
  return { merchantId: input.merchantId, email, displayName, role: input.role };
}

/** The user and their link, in `trx`: the link is for `linkFor`, who hands it over. */
async function insertUserWithLink(ctx: ConsoleContext, trx: Knex, input: ReturnType<typeof checkedInvite>, createdBy: string, linkFor: string): Promise<{ user: MerchantUser; link: SignInLinkOut }> {
  if (await findMerchantUserByEmail(trx, input.email)) throw conflict("MERCHANT_USER_EXISTS", `a merchant user ${input.email} exists already`);
  let user: MerchantUser;
  try {
    user = await insertMerchantUser(trx, { ...input, createdBy }, nowMs(ctx));
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict("MERCHANT_USER_EXISTS", `a merchant user ${input.email} exists already`);
    throw err;
  }
  const { token, expiresAt } = await createSignInLink(trx, { operatorId: user.id, purpose: "create", createdBy: linkFor, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_SIGN_IN_LINK_TTL }, MERCHANT_LINKS);
  return { user, link: { url: merchantSignInLinkUrl(ctx, token), expiresAt } };
}

/**
 * A merchant's owner invites a colleague (the Team page): a new user of their own merchant and
 * the one-time link (CONSOLE_SIGN_IN_LINK_TTL, used once), at once. The merchant's team is the
 * owner's to run: they may also change the merchant's withdrawal threshold, so a second owner's
 * approval here would protect nothing. An email already used by a merchant user is 409.
 */
export async function inviteMerchantUser(ctx: ConsoleContext, owner: MerchantUserIdentity, input: InviteInput): Promise<{ user: MerchantUser; link: SignInLinkOut }> {
  return auditedChange(ctx, teamStep(owner, "InviteMerchantUser", input.merchantId, [normaliseEmail(input.email)]), async (trx) => {
    const result = await insertUserWithLink(ctx, trx, checkedInvite({ ...input, merchantId: owner.merchantId }), owner.subject, owner.subject);
    return { result, reason: `${result.user.id} as ${input.role}`, step: { targets: [input.merchantId, result.user.email, result.user.id] } };
  });
}

/**
 * An operator (admin) invites a user of any merchant (the admin API, the merchant's page). It
 * waits for a second admin, who gets the link: an admin who could hand themselves links to two
 * users of one merchant would be both people of that merchant's four-eyes. The merchant's
 * existence is the caller's to check (checkMerchantFor), as the approver's is at approval.
 */
export async function operatorInvitesMerchantUser(ctx: ConsoleContext, actor: Actor, input: InviteInput): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, teamStep(actor, "InviteMerchantUser", input.merchantId, [normaliseEmail(input.email)]), async (trx) => {
    const checked = checkedInvite(input);
    const reason = `${checked.email} as ${checked.role}`;
    if (await findMerchantUserByEmail(trx, checked.email)) throw conflict("MERCHANT_USER_EXISTS", `a merchant user ${checked.email} exists already`);
    if (await needsSecondAdmin(trx)) return { ...(await askSecondAdmin(ctx, trx, actor, { action: "invite_merchant_user", payload: { ...checked }, targetEmail: checked.email })), reason };
    const { user, link } = await insertUserWithLink(ctx, trx, checked, actor.subject, actor.subject);
    return { result: { status: "done", user, link }, reason: `${user.id} as ${checked.role}`, step: { targets: [checked.merchantId, user.email, user.id] } };
  });
}

async function userOf(db: Knex, merchantId: string, userId: string): Promise<MerchantUser> {
  // Another merchant's user (or none) is the same 404: an id tells nothing across merchants.
  const user = await findMerchantUserOf(db, merchantId, userId);
  if (!user || user.disabled) throw notFound("no such user in this team");
  return user;
}

/**
 * Refuses, in `trx`, a demotion or removal of `userId` when it is the last of the merchant's
 * enabled owners (locked FOR UPDATE on MySQL first; SQLite has one writer): nobody could manage
 * the team afterwards. Two owners removing each other at once are serialised here, so one stays.
 */
async function keepAnOwner(trx: Knex.Transaction, merchantId: string, userId: string): Promise<void> {
  const owners = (await forUpdate(trx, trx("merchant_users").where({ merchant_id: merchantId, role: "owner", disabled: false }).select("id"))) as Array<{ id: string }>;
  if (owners.some((o) => o.id === userId) && owners.every((o) => o.id === userId)) throw conflict("LAST_OWNER", "this is the last owner: make another owner first");
}

/** A new role for a user of `merchantId` (their sessions go on with the new role at once). */
export async function changeMerchantUserRole(ctx: ConsoleContext, actor: TeamActor, merchantId: string, userId: string, role: MerchantRole): Promise<MerchantUser> {
  return auditedChange(ctx, teamStep(actor, "SetMerchantUserRole", merchantId, [userId]), async (trx) => {
    const user = await userOf(trx, merchantId, userId);
    if (role !== "owner") await keepAnOwner(trx, merchantId, user.id);
    await updateMerchantUserRole(trx, user.id, role);
    return { result: { ...user, role }, reason: `${user.email}: ${user.role} to ${role}` };
  });
}

/** Removes a user of `merchantId`: disabled, every session and unused link ended. */
export async function removeMerchantUser(ctx: ConsoleContext, actor: TeamActor, merchantId: string, userId: string): Promise<MerchantUser> {
  return auditedChange(ctx, teamStep(actor, "RemoveMerchantUser", merchantId, [userId]), async (trx) => {
    const user = await userOf(trx, merchantId, userId);
    await keepAnOwner(trx, merchantId, user.id);
    await disableMerchantUser(trx, user.id, nowMs(ctx));
    return { result: { ...user, disabled: true }, reason: `${user.email} removed` };
  });
}

async function applyUserReset(ctx: ConsoleContext, trx: Knex, user: MerchantUser, clearTotp: boolean, linkFor: string): Promise<{ user: MerchantUser; link: SignInLinkOut }> {
  await deleteSessionsOf(trx, user.id, MERCHANT_SESSIONS);
  if (clearTotp) await updateMerchantUser(trx, user.id, { totpSecret: null, totpLastStep: null });
  const { token, expiresAt } = await createSignInLink(trx, { operatorId: user.id, purpose: "reset", createdBy: linkFor, now: nowMs(ctx), ttlMs: ctx.config.CONSOLE_SIGN_IN_LINK_TTL }, MERCHANT_LINKS);
  return { user: clearTotp ? { ...user, totpSecret: null, totpLastStep: null } : user, link: { url: merchantSignInLinkUrl(ctx, token), expiresAt } };
}

const resetReason = (user: MerchantUser, clearTotp: boolean) => `${user.email}: new sign-in link${clearTotp ? ", TOTP cleared" : ""}`;

/**
 * A merchant's owner gives a user of their merchant a new one-time link (`reset`,
 * CONSOLE_SIGN_IN_LINK_TTL): every session of theirs ends and any earlier unused link stops
 * working, as an operator's reset does. Their password works until they use the link;
 * `clearTotp` also turns their TOTP off (a lost authenticator). Another merchant's user id (or a
 * removed user) is 404.
 */
export async function resetMerchantUser(ctx: ConsoleContext, owner: MerchantUserIdentity, userId: string, options: { clearTotp?: boolean } = {}): Promise<{ user: MerchantUser; link: SignInLinkOut }> {
  return auditedChange(ctx, teamStep(owner, "ResetMerchantUser", owner.merchantId, [userId]), async (trx) => {
    const user = await userOf(trx, owner.merchantId, userId);
    const clearTotp = options.clearTotp === true;
    return { result: await applyUserReset(ctx, trx, user, clearTotp, owner.subject), reason: resetReason(user, clearTotp) };
  });
}

/** An operator's reset of a merchant user: whoever holds the link takes the account, so it waits for a second admin, who gets it. */
export async function operatorResetsMerchantUser(ctx: ConsoleContext, actor: Actor, merchantId: string, userId: string, options: { clearTotp?: boolean } = {}): Promise<ChangeOutcome> {
  return auditedChange<ChangeOutcome>(ctx, teamStep(actor, "ResetMerchantUser", merchantId, [userId]), async (trx) => {
    const user = await userOf(trx, merchantId, userId);
    const clearTotp = options.clearTotp === true;
    const reason = resetReason(user, clearTotp);
    if (await needsSecondAdmin(trx)) return { ...(await askSecondAdmin(ctx, trx, actor, { action: "reset_merchant_user", payload: { merchantId, userId, clearTotp }, targetEmail: user.email })), reason };
    return { result: { status: "done", ...(await applyUserReset(ctx, trx, user, clearTotp, actor.subject)) }, reason };
  });
}

/** Before an approval of a merchant user's change: the approver must see the merchant too. */
export async function prepareMerchantUserChange(ctx: ConsoleContext, approver: Actor, approval: Approval): Promise<void> {
  const merchantId = approval.payload.merchantId;
  if (typeof merchantId !== "string") throw conflict("UNKNOWN_CHANGE", "this request names no merchant");
  await checkMerchantFor(ctx, approver, merchantId);
}

/** Applies an approved invite or reset of a merchant user, in the approval's transaction; the link is the approver's. */
export async function applyMerchantUserChange(ctx: ConsoleContext, trx: Knex, approval: Approval, approver: Actor): Promise<ChangeOutcome> {
  const { merchantId, userId, email, displayName, role, clearTotp } = approval.payload;
  if (typeof merchantId !== "string") throw conflict("UNKNOWN_CHANGE", "this request names no merchant");
  if (approval.action === "invite_merchant_user") {
    const checked = checkedInvite({ merchantId, email: typeof email === "string" ? email : "", displayName: typeof displayName === "string" ? displayName : undefined, role: role as MerchantRole });
    return { status: "done", ...(await insertUserWithLink(ctx, trx, checked, approval.requestedBy, approver.subject)) };
  }
  if (approval.action === "reset_merchant_user" && typeof userId === "string") {
    return { status: "done", ...(await applyUserReset(ctx, trx, await userOf(trx, merchantId, userId), clearTotp === true, approver.subject)) };
  }
  throw conflict("UNKNOWN_CHANGE", `this console cannot apply a ${approval.action} request`);
}

/** A merchant user's own TOTP enrolment or removal (the /merchant/totp page), done or refused, in the merchant's trail. */
export async function auditMerchantTotp(ctx: ConsoleContext, user: MerchantUser, change: { action: "enrol" | "remove"; outcome: string }): Promise<void> {
  const action = change.action === "enrol" ? "EnrolMerchantUserTotp" : "RemoveMerchantUserTotp";
  await recordStep(ctx, ctx.db, { ...teamStep(merchantIdentityOf(user), action, user.merchantId, [user.id]), reason: user.email }, change.outcome);
}
