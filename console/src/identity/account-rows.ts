import type { Knex } from "knex";
import { canonicalSubject } from "@payments/access";

/*
 * What the console's two kinds of account share in storage: an operator (`operators`,
 * auth/operators.ts) and a merchant user (`merchant_users`, auth/merchant-users.ts) have the same
 * sign-in columns. Only the mapping lives here; each kind keeps its own table, type and
 * functions, so one is never read or written as the other.
 */

/** The account tables: each kind's module names its own. */
export type AccountTable = "operators" | "merchant_users";

/** The columns both account tables have. */
export interface AccountRow {
  id: string;
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

/** The fields both account types have, with the kind's own roles. */
export interface AccountFields<R extends string> {
  id: string;
  email: string;
  displayName: string;
  role: R;
  disabled: boolean;
  createdAt: number;
  createdBy: string;
  lastSignInAt: number | null;
  passwordHash: string | null;
  /** As stored: sealed when CONSOLE_TOTP_KEY is set (see totp.ts). */
  totpSecret: string | null;
  totpLastStep: number | null;
}

/** What may change on an account row. */
export type AccountPatch<R extends string> = Partial<{ role: R; disabled: boolean; passwordHash: string; totpSecret: string | null; totpLastStep: number | null; lastSignInAt: number }>;

/**
 * Emails are stored and compared as the services compare assertion subjects (canonicalSubject:
 * trimmed, NFKC, case-folded), so one person has one spelling everywhere: in the accounts, in
 * the maker check of four-eyes and in the audit.
 */
export function normaliseEmail(email: string): string {
  return canonicalSubject(email);
}

/** A plausible address: something@something.tld, no spaces, at most 254 characters (RFC 5321's path limit). */
export function isEmail(email: string): boolean {
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email);
}

/** The shared fields of a row, with the role the kind's module read from it (it knows its roles and which is least). */
export function accountFields<R extends string>(row: AccountRow, role: R): AccountFields<R> {
  return {
    id: row.id,
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

/**
 * What the admin API, the CLI and the pages show of an account: never its hash or TOTP secret.
 * `afterId` and `afterRole` are the kind's own fields, in their place in the answer.
 */
export function publicAccount(
  account: AccountFields<string>,
  own: { afterId?: Record<string, unknown>; afterRole?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    id: account.id,
    ...own.afterId,
    email: account.email,
    displayName: account.displayName,
    role: account.role,
    ...own.afterRole,
    disabled: account.disabled,
    createdAt: new Date(account.createdAt).toISOString(),
    createdBy: account.createdBy,
    lastSignInAt: account.lastSignInAt === null ? null : new Date(account.lastSignInAt).toISOString(),
    passwordSet: account.passwordHash !== null,
    totpEnrolled: account.totpSecret !== null,
  };
}

/** A new human account's row (no password, no TOTP, never signed in), but for its id and the kind's own columns. */
export function newAccountRow(input: { email: string; displayName: string; role: string; createdBy: string }, now: number): Omit<AccountRow, "id"> {
  return {
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
}

/** The first row of `table` matching `where`, as the kind's module maps it. */
export async function findAccount<Row extends AccountRow, A>(db: Knex, table: AccountTable, where: Record<string, string>, fromRow: (row: Row) => A): Promise<A | undefined> {
  const row = (await db(table).where(where).first()) as Row | undefined;
  return row ? fromRow(row) : undefined;
}

/** A kind's two lookups of one account: by email (normalised first) and by id. */
export function accountFinders<Row extends AccountRow, A>(table: AccountTable, fromRow: (row: Row) => A) {
  return {
    byEmail: (db: Knex, email: string): Promise<A | undefined> => findAccount(db, table, { email: normaliseEmail(email) }, fromRow),
    byId: (db: Knex, id: string): Promise<A | undefined> => findAccount(db, table, { id }, fromRow),
  };
}

/** Writes the patch's fields (nothing when it is empty) to one account row of `table`. */
export async function updateAccount(db: Knex, table: AccountTable, id: string, patch: AccountPatch<string>): Promise<void> {
  const row: Partial<AccountRow> = {};
  if (patch.role !== undefined) row.role = patch.role;
  if (patch.disabled !== undefined) row.disabled = patch.disabled;
  if (patch.passwordHash !== undefined) row.password_hash = patch.passwordHash;
  if (patch.totpSecret !== undefined) row.totp_secret = patch.totpSecret;
  if (patch.totpLastStep !== undefined) row.totp_last_step = patch.totpLastStep;
  if (patch.lastSignInAt !== undefined) row.last_sign_in_at = patch.lastSignInAt;
  if (Object.keys(row).length > 0) await db(table).where({ id }).update(row);
}
