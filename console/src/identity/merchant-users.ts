import type { Knex } from "knex";
import { newId } from "@payments/kit";
import { isMerchantRole, MERCHANT_ROLES, type MerchantRole, type MerchantUserIdentity } from "@payments/access";
import { accountFields, accountFinders, findAccount, newAccountRow, publicAccount, updateAccount, type AccountFields, type AccountPatch, type AccountRow } from "./account-rows.js";

/**
 * A merchant's own user (the merchant dashboard), kept apart from the operators: its own table
 * (`merchant_users`), sessions (`merchant_sessions`, cookie `console_merchant_session`) and
 * one-time links (`merchant_sign_in_links`, `/merchant/set-password`). It belongs to exactly one
 * merchant; every service call made for it carries an assertion naming that merchant. TOTP is
 * optional for merchant users. Its fields are an operator's but for the roles and `merchantId`
 * (auth/account-rows.ts); the two types stay apart.
 */
export interface MerchantUser extends AccountFields<MerchantRole> {
  merchantId: string;
}

interface MerchantUserRow extends AccountRow {
  merchant_id: string;
}

const TABLE = "merchant_users";

function fromRow(row: MerchantUserRow): MerchantUser {
  // A role a newer console wrote that this one does not know reads as the least one (viewer), never more.
  const role: MerchantRole = isMerchantRole(row.role) ? row.role : MERCHANT_ROLES[MERCHANT_ROLES.length - 1]!;
  return { ...accountFields(row, role), merchantId: row.merchant_id };
}

/** The identity an assertion names for this user: subject = email, the merchant the services scope every call to. */
export function merchantIdentityOf(user: Pick<MerchantUser, "email" | "displayName" | "role" | "merchantId">): MerchantUserIdentity {
  return { subject: user.email, name: user.displayName, role: user.role, kind: "human", merchantId: user.merchantId };
}

/** What the admin API, the CLI and the Team page show of a user: never its hash or TOTP secret. */
export function publicMerchantUser(user: MerchantUser): Record<string, unknown> {
  return publicAccount(user, { afterId: { merchantId: user.merchantId } });
}

const finders = accountFinders(TABLE, fromRow);
export const findMerchantUserByEmail = finders.byEmail;
export const findMerchantUserById = finders.byId;

/** A user of `merchantId` only: another merchant's user id finds nothing (the Team page's IDOR guard). */
export async function findMerchantUserOf(db: Knex, merchantId: string, id: string): Promise<MerchantUser | undefined> {
  return findAccount(db, TABLE, { id, merchant_id: merchantId }, fromRow);
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
  const row: MerchantUserRow = { id: newId("mus"), merchant_id: input.merchantId, ...newAccountRow(input, now) };
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

export type MerchantUserPatch = AccountPatch<MerchantRole>;

export async function updateMerchantUser(db: Knex, id: string, patch: MerchantUserPatch): Promise<void> {
  await updateAccount(db, TABLE, id, patch);
}

/** Changes a user's role (their sessions go on: the role is read from the row on every request). */
export async function updateMerchantUserRole(db: Knex, id: string, role: MerchantRole): Promise<void> {
  await updateMerchantUser(db, id, { role });
}

/** Removes a user: disabled (kept for the audit's sake), every session and unused link ended; in the caller's transaction, with the team's owners locked (merchant-team.ts). */
export async function disableMerchantUser(trx: Knex.Transaction, id: string, now: number): Promise<void> {
  await trx(TABLE).where({ id }).update({ disabled: true });
  await trx("merchant_sessions").where({ merchant_user_id: id }).delete();
  await trx("merchant_sign_in_links").where({ merchant_user_id: id }).whereNull("used_at").update({ used_at: now });
}

