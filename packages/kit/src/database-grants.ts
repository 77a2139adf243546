import type { Knex } from "knex";

/**
 * The least-privilege grants of a service's runtime database user (MySQL / MariaDB; SQLite has
 * no users). The runtime user gets, on each table of its service's database and nothing else:
 * SELECT, INSERT, UPDATE, DELETE; on the append-only tables (the audit, which the CallGuard
 * names) only SELECT and INSERT; on knex's bookkeeping tables only SELECT (a start with
 * MIGRATE_ON_START=0 reads them to wait for the migrate job). No ALTER, DROP, CREATE, INDEX,
 * TRIGGER, REFERENCES or LOCK TABLES: the services need none at runtime (row locks of
 * `SELECT … FOR UPDATE` need only SELECT and UPDATE), and without them the runtime user cannot
 * truncate, alter or drop the audit or its triggers. Grants are per table, so they are applied
 * again after every migration (a table a migration adds gets its grants then).
 */

/** A database account, `'user'@'host'`. */
export interface Grantee {
  user: string;
  host: string;
}

/** What one table's runtime user may do. */
export type TablePrivilege = "SELECT" | "INSERT" | "UPDATE" | "DELETE";

const READ_WRITE: readonly TablePrivilege[] = ["SELECT", "INSERT", "UPDATE", "DELETE"];
const APPEND_ONLY: readonly TablePrivilege[] = ["SELECT", "INSERT"];
const READ_ONLY: readonly TablePrivilege[] = ["SELECT"];

/** Which tables of the database get less than read and write. */
export interface GrantPlanInput {
  /** Tables the runtime user only reads and appends to (CallGuard.appendOnlyTables: the audit). */
  appendOnlyTables: readonly string[];
  /** Tables it only reads (knex's bookkeeping: migrations are another user's). */
  readOnlyTables: readonly string[];
}

/**
 * `'name'@'host'`, `name@host` (quotes `'`, `"` or backticks optional) or `name` alone
 * (`'name'@'%'`). Names with quotes, backslashes or control characters are refused, so the
 * quoted forms written into SQL need no escaping. Returns undefined when `text` is not one.
 */
export function parseGrantee(text: string): Grantee | undefined {
  const match = /^\s*(['"`]?)([^'"`@\\\s]+)\1(?:@(['"`]?)([^'"`@\\\s]+)\3)?\s*$/.exec(text);
  if (!match) return undefined;
  const user = match[2]!;
  const host = match[4] ?? "%";
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(user + host) || user.length > 80 || host.length > 255) return undefined;
  return { user, host };
}

/** `'user'@'host'`, as GRANT and information_schema's GRANTEE write it. */
export function formatGrantee(grantee: Grantee): string {
  return `'${grantee.user}'@'${grantee.host}'`;
}

/** A MySQL identifier in backticks (a backtick inside doubled). */
function quoteName(name: string): string {
  return `\`${name.replace(/`/g, "``")}\``;
}

/** What the runtime user may do on `table`. */
export function privilegesOf(table: string, input: GrantPlanInput): readonly TablePrivilege[] {
  if (input.readOnlyTables.includes(table)) return READ_ONLY;
  if (input.appendOnlyTables.includes(table)) return APPEND_ONLY;
  return READ_WRITE;
}

/** The grantee's privileges seen in information_schema: where they are, and how to take each away. */
interface HeldPrivilege {
  table: string;
  column?: string;
  privilege: string;
}

/** Access denied to the information the check reads: the migrating user may not read the mysql schema. */
const ACCESS_DENIED = new Set(["ER_DBACCESS_DENIED_ERROR", "ER_TABLEACCESS_DENIED_ERROR", "ER_SPECIFIC_ACCESS_DENIED_ERROR", "ER_ACCESS_DENIED_ERROR"]);

function errorCode(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

/** The runtime user named cannot be given these grants as it is: nothing was changed. */
export class DatabaseGrantsError extends Error {
  override name = "DatabaseGrantsError";
}

/** What the check found of the grantee. */
export interface GranteeState {
  /** false: no such account on the server (SHOW GRANTS says so). undefined: the migrating user may not tell. */
  exists: boolean | undefined;
  /**
   * Privileges beyond its tables' grants that would let it change the schema or the audit anyway
   * (on every database, or on this one as a whole), each as the REVOKE that takes it away.
   */
  tooBroad: string[];
}

/** A LIKE pattern of a database-level grant (`pay\_%`) as a test of a database name. */
function matchesPattern(pattern: string, name: string): boolean {
  let regex = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) regex += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    else if (c === "%") regex += ".*";
    else if (c === "_") regex += ".";
    else regex += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${regex}$`, "i").test(name);
}

/**
 * Reads, as the migrating user, whether `grantee` exists and whether it holds privileges on
 * every database (`*.*`, anything but USAGE) or on `database` as a whole (`db.*` or a pattern
 * matching it): those outlive any table grant, so with them the runtime user could still alter
 * or drop the audit. Changes nothing.
 */
export async function inspectGrantee(db: Knex, database: string, grantee: Grantee): Promise<GranteeState> {
  const name = formatGrantee(grantee);
  let exists: boolean | undefined = true;
  try {
    await db.raw(`SHOW GRANTS FOR ${name}`);
  } catch (err) {
    if (errorCode(err) === "ER_NONEXISTING_GRANT") return { exists: false, tooBroad: [] };
    if (!ACCESS_DENIED.has(errorCode(err) ?? "")) throw err;
    exists = undefined;
  }
  type Row = { TABLE_SCHEMA?: string; PRIVILEGE_TYPE: string; IS_GRANTABLE: string };
  const global = await db("information_schema.USER_PRIVILEGES").where("GRANTEE", name).whereNot("PRIVILEGE_TYPE", "USAGE").select<Row[]>("PRIVILEGE_TYPE", "IS_GRANTABLE");
  const schemas = await db("information_schema.SCHEMA_PRIVILEGES").where("GRANTEE", name).select<Row[]>("TABLE_SCHEMA", "PRIVILEGE_TYPE", "IS_GRANTABLE");
  const revoke = (rows: Row[], on: string) => {
    const privileges = [...rows.map((r) => r.PRIVILEGE_TYPE), ...(rows.some((r) => r.IS_GRANTABLE === "YES") ? ["GRANT OPTION"] : [])];
    return `REVOKE ${privileges.join(", ")} ON ${on} FROM ${name};`;
  };
  const tooBroad: string[] = [];
  if (global.length > 0) tooBroad.push(revoke(global, "*.*"));
  const patterns = [...new Set(schemas.map((s) => s.TABLE_SCHEMA!))].filter((pattern) => matchesPattern(pattern, database));
  for (const pattern of patterns) tooBroad.push(revoke(schemas.filter((s) => s.TABLE_SCHEMA === pattern), `${quoteName(pattern)}.*`));
  return { exists, tooBroad };
}

/** The base tables of `database`, by name. */
export async function databaseTables(db: Knex, database: string): Promise<string[]> {
  const rows = await db("information_schema.TABLES").where({ TABLE_SCHEMA: database, TABLE_TYPE: "BASE TABLE" }).orderBy("TABLE_NAME").select<Array<{ TABLE_NAME: string }>>("TABLE_NAME");
  return rows.map((r) => r.TABLE_NAME);
}

/** The grantee's table and column privileges on `database` (what the migrating user may see of them). */
async function heldPrivileges(db: Knex, database: string, grantee: Grantee): Promise<HeldPrivilege[]> {
  const name = formatGrantee(grantee);
  const tables = await db("information_schema.TABLE_PRIVILEGES")
    .where({ GRANTEE: name, TABLE_SCHEMA: database })
    .select<Array<{ TABLE_NAME: string; PRIVILEGE_TYPE: string; IS_GRANTABLE: string }>>("TABLE_NAME", "PRIVILEGE_TYPE", "IS_GRANTABLE");
  const columns = await db("information_schema.COLUMN_PRIVILEGES")
    .where({ GRANTEE: name, TABLE_SCHEMA: database })
    .select<Array<{ TABLE_NAME: string; COLUMN_NAME: string; PRIVILEGE_TYPE: string; IS_GRANTABLE: string }>>("TABLE_NAME", "COLUMN_NAME", "PRIVILEGE_TYPE", "IS_GRANTABLE");
  return [
    ...tables.flatMap((t) => [{ table: t.TABLE_NAME, privilege: t.PRIVILEGE_TYPE }, ...(t.IS_GRANTABLE === "YES" ? [{ table: t.TABLE_NAME, privilege: "GRANT OPTION" }] : [])]),
    ...columns.flatMap((c) => [{ table: c.TABLE_NAME, column: c.COLUMN_NAME, privilege: c.PRIVILEGE_TYPE }, ...(c.IS_GRANTABLE === "YES" ? [{ table: c.TABLE_NAME, privilege: "GRANT OPTION" }] : [])]),
  ];
}

/**
 * The statements that give `grantee` exactly its grants on every table of `database` as it is
 * now: a GRANT per table, then a REVOKE of what it holds there beyond them (a table that became
 * append-only, a grant made by hand). Each GRANT comes before any REVOKE of the same table, so a
 * running service never loses a right it needs while they are applied. Reads only.
 */
export async function grantStatements(db: Knex, database: string, grantee: Grantee, input: GrantPlanInput): Promise<string[]> {
  const name = formatGrantee(grantee);
  const tables = await databaseTables(db, database);
  const held = await heldPrivileges(db, database, grantee);
  const statements: string[] = [];
  for (const table of tables) {
    const target = `${quoteName(database)}.${quoteName(table)}`;
    const allowed = privilegesOf(table, input) as readonly string[];
    statements.push(`GRANT ${allowed.join(", ")} ON ${target} TO ${name};`);
    const mine = held.filter((h) => h.table === table);
    const tableExcess = [...new Set(mine.filter((h) => !h.column && !allowed.includes(h.privilege)).map((h) => h.privilege))];
    // A column's privilege counts as excess unless its table's grant already holds it.
    const columnExcess = mine.filter((h) => h.column && !allowed.includes(h.privilege)).map((h) => `${h.privilege} (${quoteName(h.column!)})`);
    if (tableExcess.length + columnExcess.length > 0) statements.push(`REVOKE ${[...tableExcess, ...columnExcess].join(", ")} ON ${target} FROM ${name};`);
  }
  return statements;
}

/** Refuses a grantee whose privileges beyond its tables would let it alter or drop the audit anyway. */
export function assertNotTooBroad(grantee: Grantee, state: GranteeState): void {
  if (state.tooBroad.length === 0) return;
  throw new DatabaseGrantsError(
    `the runtime user ${formatGrantee(grantee)} holds privileges on more than its tables, with which it could still alter or drop the audit: ` +
      `take them away (${state.tooBroad.join(" ")}), then migrate again. Nothing was changed`,
  );
}

/**
 * Refuses, changing nothing, a grantee these grants cannot make least-privileged: one that does
 * not exist (GRANT would fail or, on an old server, create it without a password), or one whose
 * privileges on every database or on this one would still let it alter or drop the audit. A
 * migrating user that may not read the mysql schema cannot tell: then it goes on (`warn` says so).
 */
export async function assertGranteeUsable(db: Knex, database: string, grantee: Grantee, warn?: (message: string) => void): Promise<void> {
  const state = await inspectGrantee(db, database, grantee);
  const name = formatGrantee(grantee);
  if (state.exists === false) {
    throw new DatabaseGrantsError(`the runtime user ${name} does not exist on the database server: create it first (CREATE USER ${name} IDENTIFIED BY '…'), then migrate again`);
  }
  assertNotTooBroad(grantee, state);
  if (state.exists === undefined) warn?.(`the migrating user may not read the grants of ${name} (the mysql schema): whether it exists and holds database-wide privileges is not checked`);
}

/**
 * Gives `grantee` its grants on `database` (checked first with assertGranteeUsable, before the
 * migration): the migrate step runs it after every migration, so tables added since get theirs.
 * Returns the statements run.
 */
export async function applyGrants(db: Knex, database: string, grantee: Grantee, input: GrantPlanInput): Promise<string[]> {
  const statements = await grantStatements(db, database, grantee, input);
  for (const statement of statements) await db.raw(statement.replace(/;$/, ""));
  return statements;
}

/** The SQL `migrate grants` prints for one database: what it is, how to create the user, then the statements. */
export function grantsScript(database: string, grantee: Grantee, statements: readonly string[], what: string): string {
  const name = formatGrantee(grantee);
  return [
    `-- ${what}: the runtime user ${name} on ${quoteName(database)}: read and write its tables, only read and append to the audit, only read knex's migration tables; no DDL.`,
    `-- The user must exist first: CREATE USER IF NOT EXISTS ${name} IDENTIFIED BY '…';`,
    ...statements,
    "",
  ].join("\n");
}
