import type { Knex } from "knex";
import { isMerchantRole, MERCHANT_ROLES, newId, type MerchantRole, type MerchantUserIdentity } from "@payments/kit";
import { normaliseEmail } from "./operators.js";

/**
 * A merchant's own user (the merchant dashboard), kept apart from the operators: its own table
 * (`merchant_users`), sessions (`merchant_sessions`, cookie `console_merchant_session`) and
 * one-time links (`merchant_sign_in_links`, `/merchant/set-password`). It belongs to exactly one
 * merchant; every service call made for it carries an assertion naming that merchant.
 */
export interface MerchantUser {
  id: string;
  merchantId: string;
  email: string;
  displayName: string;
  role: MerchantRole;
  disabled: boolean;
  createdAt: number;
  createdBy: string;
  lastSignInAt: number | null;
  passwordHash: string | null;
  /** As stored: sealed when CONSOLE_TOTP_KEY is set (see totp.ts). TOTP is optional for merchant users. */
  totpSecret: string | null;
  totpLastStep: number | null;
}

interface MerchantUserRow {
  id: string;
  merchant_id: string;
  email: string;
  display_name: string;
  role: string;
  kind: string;
  disabled: number | boolean;
  created_at: number;
  created_by: string;
  last_sign_in_at: number | null;
  password_hash: string | null;
  totp_secret: string | null;
  totp_last_step: number | null;
}

const TABLE = "merchant_users";

function fromRow(row: MerchantUserRow): MerchantUser {
  // A role a newer console wrote that this one does not know reads as the least one (viewer), never more.
  const role: MerchantRole = isMerchantRole(row.role) ? row.role : MERCHANT_ROLES[MERCHANT_ROLES.length - 1]!;
  return {
    id: row.id,
    merchantId: row.merchant_id,
    email: row.email,
    displayName: row.display_name,
    role,
    disabled: Boolean(row.disabled),
    createdAt: Number(row.created_at),
    createdBy: row.created_by,
    lastSignInAt: row.last_sign_in_at === null ? null : Number(row.last_sign_in_at),
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    totpLastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
  };
}

/** The identity an assertion names for this user: subject = email, the merchant the services scope every call to. */
export function merchantIdentityOf(user: Pick<MerchantUser, "email" | "displayName" | "role" | "merchantId">): MerchantUserIdentity {
  return { subject: user.email, name: user.displayName, role: user.role, kind: "human", merchantId: user.merchantId };
}

/** What the admin API, the CLI and the Team page show of a user: never its hash or TOTP secret. */
export function publicMerchantUser(user: MerchantUser): Record<string, unknown> {
  return {
    id: user.id,
    merchantId: user.merchantId,
    email: user.email,
    displayName: user.displayName,
    role: user.role,
    disabled: user.disabled,
    createdAt: new Date(user.createdAt).toISOString(),
    createdBy: user.createdBy,
    lastSignInAt: user.lastSignInAt === null ? null : new Date(user.lastSignInAt).toISOString(),
    passwordSet: user.passwordHash !== null,
    totpEnrolled: user.totpSecret !== null,
  };
}

export async function findMerchantUserByEmail(db: Knex, email: string): Promise<MerchantUser | undefined> {
  const row = (await db(TABLE).where({ email: normaliseEmail(email) }).first()) as MerchantUserRow | undefined;
  return row ? fromRow(row) : undefined;
}

export async function findMerchantUserById(db: Knex, id: string): Promise<MerchantUser | undefined> {
  const row = (await db(TABLE).where({ id }).first()) as MerchantUserRow | undefined;
  return row ? fromRow(row) : undefined;
}

/** A user of `merchantId` only: another merchant's user id finds nothing (the Team page's IDOR guard). */
export async function findMerchantUserOf(db: Knex, merchantId: string, id: string): Promise<MerchantUser | undefined> {
  const row = (await db(TABLE).where({ id, merchant_id: merchantId }).first()) as MerchantUserRow | undefined;
  return row ? fromRow(row) : undefined;
}

export interface NewMerchantUser {
  merchantId: string;
  email: string;
  displayName: string;
  role: MerchantRole;
  createdBy: string;
}

/** Inserts a user (the email must be new among merchant users: a unique violation otherwise). */
export async function insertMerchantUser(db: Knex, input: NewMerchantUser, now: number): Promise<MerchantUser> {
  const row: MerchantUserRow = {
    id: newId("mus"),
    merchant_id: input.merchantId,
    email: normaliseEmail(input.email),
    display_name: input.displayName,
    role: input.role,
    kind: "human",
    disabled: false,
    created_at: now,
    created_by: input.createdBy,
    last_sign_in_at: null,
    password_hash: null,
    totp_secret: null,
    totp_last_step: null,
  };
  await db(TABLE).insert(row);
  return fromRow(row);
}

/** A merchant's users in creation order (at most `limit`, 500 by default: a team, not a ledger). */
export async function listMerchantUsers(db: Knex, merchantId: string, options: { limit?: number; includeDisabled?: boolean } = {}): Promise<MerchantUser[]> {
  const query = db(TABLE)
    .where({ merchant_id: merchantId })
    .orderBy([{ column: "created_at" }, { column: "id" }])
    .limit(options.limit ?? 500);
  if (!options.includeDisabled) void query.andWhere({ disabled: false });
  return ((await query) as MerchantUserRow[]).map(fromRow);
}

export type MerchantUserPatch = Partial<{ role: MerchantRole; disabled: boolean; passwordHash: string; totpSecret: string | null; totpLastStep: number | null; lastSignInAt: number }>;

export async function updateMerchantUser(db: Knex, id: string, patch: MerchantUserPatch): Promise<void> {
  const row: Partial<MerchantUserRow> = {};
  if (patch.role !== undefined) row.role = patch.role;
  if (patch.disabled !== undefined) row.disabled = patch.disabled;
  if (patch.passwordHash !== undefined) row.password_hash = patch.passwordHash;
  if (patch.totpSecret !== undefined) row.totp_secret = patch.totpSecret;
  if (patch.totpLastStep !== undefined) row.totp_last_step = patch.totpLastStep;
  if (patch.lastSignInAt !== undefined) row.last_sign_in_at = patch.lastSignInAt;
  if (Object.keys(row).length > 0) await db(TABLE).where({ id }).update(row);
}

/** Changes a user's role (their sessions go on: the role is read from the row on every request). */
export async function updateMerchantUserRole(db: Knex, id: string, role: MerchantRole): Promise<void> {
  await updateMerchantUser(db, id, { role });
}

/** Removes a user: disabled (kept for the audit's sake) and every session of theirs ended, in one transaction. */
export async function disableMerchantUser(db: Knex, id: string, now: number): Promise<void> {
  await db.transaction(async (trx) => {
    await trx(TABLE).where({ id }).update({ disabled: true });
    await trx("merchant_sessions").where({ merchant_user_id: id }).delete();
    await trx("merchant_sign_in_links").where({ merchant_user_id: id }).whereNull("used_at").update({ used_at: now });
  });
}

/** Enabled owners of a merchant: the last one is never removed or demoted. */
export async function countEnabledOwners(db: Knex, merchantId: string): Promise<number> {
  const row = (await db(TABLE).where({ merchant_id: merchantId, role: "owner", disabled: false }).count({ n: "*" }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}
