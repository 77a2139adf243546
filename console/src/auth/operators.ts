import type { Knex } from "knex";
import { isOperatorRole, newId, OPERATOR_ROLES, type OperatorIdentity, type OperatorRole } from "@payments/kit";

/** An operator account as the console keeps it. */
export interface Operator {
  id: string;
  email: string;
  displayName: string;
  role: OperatorRole;
  kind: "human" | "service";
  disabled: boolean;
  createdAt: number;
  createdBy: string;
  lastSignInAt: number | null;
  passwordHash: string | null;
  /** As stored: sealed when CONSOLE_TOTP_KEY is set (see totp.ts). */
  totpSecret: string | null;
  totpLastStep: number | null;
}

interface OperatorRow {
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

/** Emails compare case-insensitively everywhere in the console, so they are stored lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A plausible address: something@something.tld, no spaces, at most 254 characters (RFC 5321's path limit). */
export function isEmail(email: string): boolean {
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email);
}

function fromRow(row: OperatorRow): Operator {
  // A role a newer console wrote that this one does not know reads as the least one, never more.
  const role: OperatorRole = isOperatorRole(row.role) ? row.role : OPERATOR_ROLES[0];
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role,
    kind: row.kind === "service" ? "service" : "human",
    disabled: Boolean(row.disabled),
    createdAt: Number(row.created_at),
    createdBy: row.created_by,
    lastSignInAt: row.last_sign_in_at === null ? null : Number(row.last_sign_in_at),
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    totpLastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
  };
}

/** The identity an assertion names for this operator. */
export function identityOf(operator: Pick<Operator, "email" | "displayName" | "role">): OperatorIdentity {
  return { subject: operator.email, name: operator.displayName, role: operator.role, kind: "human" };
}

/** What the admin API and the CLI show of an account: never its hash or TOTP secret. */
export function publicOperator(operator: Operator): Record<string, unknown> {
  return {
    id: operator.id,
    email: operator.email,
    displayName: operator.displayName,
    role: operator.role,
    kind: operator.kind,
    disabled: operator.disabled,
    createdAt: new Date(operator.createdAt).toISOString(),
    createdBy: operator.createdBy,
    lastSignInAt: operator.lastSignInAt === null ? null : new Date(operator.lastSignInAt).toISOString(),
    passwordSet: operator.passwordHash !== null,
    totpEnrolled: operator.totpSecret !== null,
  };
}

export async function findOperatorByEmail(db: Knex, email: string): Promise<Operator | undefined> {
  const row = (await db("operators").where({ email: normaliseEmail(email) }).first()) as OperatorRow | undefined;
  return row ? fromRow(row) : undefined;
}

export async function findOperatorById(db: Knex, id: string): Promise<Operator | undefined> {
  const row = (await db("operators").where({ id }).first()) as OperatorRow | undefined;
  return row ? fromRow(row) : undefined;
}

export interface NewOperator {
  email: string;
  displayName: string;
  role: OperatorRole;
  createdBy: string;
}

export async function insertOperator(db: Knex, input: NewOperator, now: number): Promise<Operator> {
  const row: OperatorRow = {
    id: newId("opr"),
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
  await db("operators").insert(row);
  return fromRow(row);
}

/** One page of accounts in creation order, after the (createdAt, id) key of the last one seen. */
export async function listOperators(db: Knex, options: { limit: number; after?: { createdAt: number; id: string } }): Promise<Operator[]> {
  const query = db("operators").orderBy([{ column: "created_at" }, { column: "id" }]).limit(options.limit);
  if (options.after) {
    const { createdAt, id } = options.after;
    query.where((q) => {
      void q.where("created_at", ">", createdAt).orWhere((q2) => {
        void q2.where("created_at", createdAt).andWhere("id", ">", id);
      });
    });
  }
  return ((await query) as OperatorRow[]).map(fromRow);
}

export async function updateOperator(
  db: Knex,
  id: string,
  patch: Partial<{ role: OperatorRole; disabled: boolean; passwordHash: string; totpSecret: string | null; totpLastStep: number | null; lastSignInAt: number }>,
): Promise<void> {
  const row: Partial<OperatorRow> = {};
  if (patch.role !== undefined) row.role = patch.role;
  if (patch.disabled !== undefined) row.disabled = patch.disabled;
  if (patch.passwordHash !== undefined) row.password_hash = patch.passwordHash;
  if (patch.totpSecret !== undefined) row.totp_secret = patch.totpSecret;
  if (patch.totpLastStep !== undefined) row.totp_last_step = patch.totpLastStep;
  if (patch.lastSignInAt !== undefined) row.last_sign_in_at = patch.lastSignInAt;
  if (Object.keys(row).length > 0) await db("operators").where({ id }).update(row);
}

/** Enabled human admins: who could approve a change another admin asked for. */
export async function countEnabledAdmins(db: Knex): Promise<number> {
  const row = (await db("operators").where({ role: "admin", disabled: false, kind: "human" }).count({ n: "*" }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}
