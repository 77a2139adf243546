import type { Knex } from "knex";
import { newId } from "@payments/kit";
import { isOperatorRole, OPERATOR_ROLES, type OperatorIdentity, type OperatorRole } from "@payments/access";
import { accountFields, accountFinders, newAccountRow, publicAccount, updateAccount, type AccountFields, type AccountPatch, type AccountRow } from "./account-rows.js";

export { isEmail, normaliseEmail } from "./account-rows.js";

/** An operator account as the console keeps it. */
export interface Operator extends AccountFields<OperatorRole> {
  kind: "human" | "service";
}

/** The `operators` table has no columns of its own. */
type OperatorRow = AccountRow;

const TABLE = "operators";

function fromRow(row: OperatorRow): Operator {
  // A role a newer console wrote that this one does not know reads as the least one, never more.
  const role: OperatorRole = isOperatorRole(row.role) ? row.role : OPERATOR_ROLES[0];
  return { ...accountFields(row, role), kind: row.kind === "service" ? "service" : "human" };
}

/** The identity an assertion names for this operator. */
export function identityOf(operator: Pick<Operator, "email" | "displayName" | "role">): OperatorIdentity {
  return { subject: operator.email, name: operator.displayName, role: operator.role, kind: "human" };
}

/** What the admin API and the CLI show of an account: never its hash or TOTP secret. */
export function publicOperator(operator: Operator): Record<string, unknown> {
  return publicAccount(operator, { afterRole: { kind: operator.kind } });
}

const finders = accountFinders(TABLE, fromRow);
export const findOperatorByEmail = finders.byEmail;
export const findOperatorById = finders.byId;

export interface NewOperator {
  email: string;
  displayName: string;
  role: OperatorRole;
  createdBy: string;
}

export async function insertOperator(db: Knex, input: NewOperator, now: number): Promise<Operator> {
  const row: OperatorRow = { id: newId("opr"), ...newAccountRow(input, now) };
  await db(TABLE).insert(row);
  return fromRow(row);
}

/** One page of accounts in creation order, after the (createdAt, id) key of the last one seen. */
export async function listOperators(db: Knex, options: { limit: number; after?: { createdAt: number; id: string } }): Promise<Operator[]> {
  const query = db(TABLE).orderBy([{ column: "created_at" }, { column: "id" }]).limit(options.limit);
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

export async function updateOperator(db: Knex, id: string, patch: AccountPatch<OperatorRole>): Promise<void> {
  await updateAccount(db, TABLE, id, patch);
}

/** Enabled human admins: who could approve a change another admin asked for. */
export async function countEnabledAdmins(db: Knex): Promise<number> {
  const row = (await db(TABLE).where({ role: "admin", disabled: false, kind: "human" }).count({ n: "*" }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}
