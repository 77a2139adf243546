import type { Knex } from "knex";
import { z } from "zod";
import { ConfigError, envVar } from "./config.js";
import { applyGrants, assertGranteeUsable, formatGrantee, parseGrantee, type Grantee } from "./database-grants.js";
import { ensureDatabase, isRetryableConflict, isUniqueViolation, openDatabase, withServerConnection, type Migration } from "./db.js";
import type { Logger } from "./logger.js";

export { formatGrantee, parseGrantee, type Grantee } from "./database-grants.js";

/** knex's bookkeeping tables: applied migrations, and the one-row lock every migrating process takes. */
export const MIGRATIONS_TABLE = "knex_migrations";
export const MIGRATIONS_LOCK_TABLE = "knex_migrations_lock";

/**
 * The migration settings of every service process (spread into kit's baseConfigSchema) and
 * of the `migrate` command.
 */
export const migrationConfigSchema = z.object({
  /** 1: apply pending migrations at start. 0: a migrate job applies them; the start only waits until none is pending. */
  MIGRATE_ON_START: envVar.flag(true),
  /** How long a start (or `migrate`) waits for the migration lock, or (MIGRATE_ON_START=0) for pending migrations to be applied. */
  MIGRATION_LOCK_TIMEOUT: envVar.duration("60s"),
  /**
   * The user that creates the database and migrates it (its DDL), on the same server and database
   * as DATABASE_URL (a URL naming no database takes DATABASE_URL's). Set, DATABASE_URL's user only
   * serves: it needs no CREATE, ALTER, DROP, INDEX or TRIGGER right, and cannot change the audit.
   */
  MIGRATE_DATABASE_URL: envVar.url(["mysql"]).optional(),
  /** The runtime user (`'name'@'host'`) the migrating user grants each table to after every migration (database-grants.ts). */
  MIGRATE_GRANT_TO: z
    .string()
    .optional()
    .transform((text, ctx): Grantee | undefined => {
      if (text === undefined) return undefined;
      const grantee = parseGrantee(text);
      if (!grantee) ctx.addIssue({ code: "custom", message: `"${text}" is not a database user: write 'name'@'host' ('name' alone is 'name'@'%')` });
      return grantee;
    }),
});
export type MigrationConfig = z.infer<typeof migrationConfigSchema>;

export const DEFAULT_MIGRATION_LOCK_TIMEOUT_MS = 60_000;

/** The migration lock stayed held for the whole MIGRATION_LOCK_TIMEOUT. */
export class MigrationLockTimeoutError extends Error {
  override name = "MigrationLockTimeoutError";
}

/** MIGRATE_ON_START=0 and migrations were still pending after MIGRATION_LOCK_TIMEOUT. */
export class PendingMigrationsError extends Error {
  override name = "PendingMigrationsError";
  constructor(
    message: string,
    readonly pending: string[],
  ) {
    super(message);
  }
}

/** The database a mysql:// URL names ("" when none). */
export function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/**
 * The settings of who migrates, checked before anything opens: MIGRATE_DATABASE_URL and
 * MIGRATE_GRANT_TO need a MySQL database (SQLite has no users; the audit's hash chain is what
 * shows tampering there), and MIGRATE_DATABASE_URL names the database of `configured` (the
 * process's DATABASE_URL, as given) or none: migrating one database while serving another would
 * start a service on tables nobody migrated.
 */
export function assertMigrationSettings(config: Pick<MigrationConfig, "MIGRATE_DATABASE_URL" | "MIGRATE_GRANT_TO">, configured: string | undefined): void {
  const problems: string[] = [];
  if (!configured) {
    if (config.MIGRATE_DATABASE_URL) problems.push("MIGRATE_DATABASE_URL: needs a MySQL DATABASE_URL (SQLite has no database users)");
    if (config.MIGRATE_GRANT_TO) problems.push("MIGRATE_GRANT_TO: needs a MySQL DATABASE_URL (SQLite has no database users)");
  } else if (config.MIGRATE_DATABASE_URL) {
    const named = databaseNameOf(config.MIGRATE_DATABASE_URL);
    const served = databaseNameOf(configured);
    if (named && named !== served) problems.push(`MIGRATE_DATABASE_URL: names the database "${named}", but DATABASE_URL names "${served}": name the same one, or none`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
}

/**
 * MIGRATE_DATABASE_URL's user and server on the database `runtimeUrl` names (the all-in-one's
 * derived `<db>_<service>` included); undefined when it is not set.
 */
export function migrationUrlFor(config: Pick<MigrationConfig, "MIGRATE_DATABASE_URL">, runtimeUrl: string | undefined): string | undefined {
  if (!config.MIGRATE_DATABASE_URL || !runtimeUrl) return undefined;
  const url = new URL(config.MIGRATE_DATABASE_URL);
  url.pathname = new URL(runtimeUrl).pathname;
  return url.toString();
}

export interface MigrateOptions {
  /** How long to wait for a lock another process holds; default 60 s. */
  lockTimeoutMs?: number;
  /** Where "waiting for the migration lock…" is logged (once per wait). */
  logger?: Logger;
  /** Hint on the command that clears a stale lock, quoted in the timeout error. */
  unlockHint?: string;
}

class ListMigrationSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly migrations: readonly Migration[]) {}
  async getMigrations(): Promise<Migration[]> {
    return sortMigrations(this.migrations);
  }
  getMigrationName(migration: Migration): string {
    return migration.name;
  }
  async getMigration(migration: Migration): Promise<Knex.Migration> {
    return { up: (db) => migration.up(db), down: (db) => (migration.down ? migration.down(db) : Promise.resolve()) };
  }
}

function sortMigrations(migrations: readonly Migration[]): Migration[] {
  return [...migrations].sort((a, b) => a.name.localeCompare(b.name));
}

function errorCode(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

/** CREATE TABLE lost a race: another process created the same table a moment earlier. */
function isTableExists(err: unknown): boolean {
  const code = errorCode(err);
  if (code === "ER_TABLE_EXISTS_ERROR") return true;
  return /already exists/i.test((err as Error | null)?.message ?? "");
}

function isMissingTable(err: unknown): boolean {
  const code = errorCode(err);
  return code === "ER_NO_SUCH_TABLE" || /no such table/i.test((err as Error | null)?.message ?? "");
}

function isMigrationLocked(err: unknown): boolean {
  return (err as Error | null)?.name === "MigrationLocked";
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * Creates knex_migrations, knex_migrations_lock and the lock's single row when missing, as
 * knex would, but safe against other processes doing the same at the same moment: a
 * CREATE TABLE that finds the table made meanwhile, or a lock row inserted twice, is
 * simply the other process having won. (knex's own check-then-create raced: two lock
 * rows leave the lock unobtainable forever, a lost CREATE TABLE fails the start.)
 */
export async function ensureMigrationTables(db: Knex): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (!(await db.schema.hasTable(MIGRATIONS_TABLE))) {
        await db.schema.createTable(MIGRATIONS_TABLE, (t) => {
          t.increments();
          t.string("name");
          t.integer("batch");
          t.timestamp("migration_time");
        });
      }
      if (!(await db.schema.hasTable(MIGRATIONS_LOCK_TABLE))) {
        await db.schema.createTable(MIGRATIONS_LOCK_TABLE, (t) => {
          t.increments("index").primary();
          t.integer("is_locked");
        });
      }
      const rows = (await db(MIGRATIONS_LOCK_TABLE).select("index", "is_locked").orderBy("index")) as Array<{ index: number; is_locked: number }>;
      if (rows.length === 0) {
        // A fixed key: of two processes inserting at once, the second gets a duplicate key.
        try {
          await db(MIGRATIONS_LOCK_TABLE).insert({ index: 1, is_locked: 0 });
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
        }
      } else if (rows.length > 1) {
        // Left by the old race: knex could then never take the lock (its UPDATE hits two rows).
        const keep = rows[0]!;
        await db(MIGRATIONS_LOCK_TABLE).where("index", ">", keep.index).del();
        if (rows.some((r) => r.is_locked)) await db(MIGRATIONS_LOCK_TABLE).where("index", keep.index).update({ is_locked: 1 });
      }
      return;
    } catch (err) {
      if (attempt >= 10 || !(isTableExists(err) || isRetryableConflict(err) || isUniqueViolation(err))) throw err;
      await sleep(10 * attempt + Math.floor(Math.random() * 20));
    }
  }
}

/** Names of the migrations recorded as applied (none when the table does not exist yet). */
export async function appliedMigrations(db: Knex): Promise<string[]> {
  try {
    const rows = (await db(MIGRATIONS_TABLE).select("name").orderBy("id")) as Array<{ name: string }>;
    return rows.map((r) => r.name);
  } catch (err) {
    if (isMissingTable(err)) return [];
    throw err;
  }
}

/**
 * Names of the migrations of `list` not applied yet, in the order they would run. Read only:
 * creates nothing (a database never migrated has every migration pending). Migrations the
 * database has but `list` lacks (a newer release applied them) are not counted.
 */
export async function pendingMigrations(db: Knex, list: readonly Migration[]): Promise<string[]> {
  const applied = new Set(await appliedMigrations(db));
  return sortMigrations(list)
    .map((m) => m.name)
    .filter((name) => !applied.has(name));
}

/** Whether the migration lock is taken (by a migrating process, or left behind by one that died). */
export async function migrationLockHeld(db: Knex): Promise<boolean> {
  try {
    const rows = await db<{ is_locked: number }>(MIGRATIONS_LOCK_TABLE).select("is_locked");
    return rows.some((r) => Number(r.is_locked) !== 0);
  } catch (err) {
    if (isMissingTable(err)) return false;
    throw err;
  }
}

/**
 * Clears the migration lock (`migrate unlock`): for a lock left by a process that died while
 * migrating. Returns whether it was held. Never run it while a migration is in progress.
 */
export async function unlockMigrations(db: Knex): Promise<boolean> {
  await ensureMigrationTables(db);
  const cleared = await db(MIGRATIONS_LOCK_TABLE).where("is_locked", "<>", 0).update({ is_locked: 0 });
  return Number(cleared) > 0;
}

/**
 * Applies pending migrations (sorted by name) and returns the names applied. While another
 * process holds the migration lock it waits, polling with back-off, up to `lockTimeoutMs`
 * (MIGRATION_LOCK_TIMEOUT), then fails with a MigrationLockTimeoutError that says how to
 * clear a stale lock. Nothing pending: returns at once, without the lock (so a stale lock
 * does not block replicas of an up-to-date database).
 */
export async function migrate(db: Knex, migrations: readonly Migration[], options: MigrateOptions = {}): Promise<string[]> {
  const timeoutMs = options.lockTimeoutMs ?? DEFAULT_MIGRATION_LOCK_TIMEOUT_MS;
  const migrationSource = new ListMigrationSource(migrations);
  await ensureMigrationTables(db);
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  let logged = false;
  for (;;) {
    if ((await pendingMigrations(db, migrations)).length === 0) return [];
    try {
      const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
      return applied;
    } catch (err) {
      if (!isMigrationLocked(err)) throw err;
      // Said once, even when the first try already took the whole timeout (a slow start): the log shows what it waited for.
      if (!logged) {
        logged = true;
        options.logger?.warn({ timeoutMs }, "waiting for the migration lock held by another process");
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new MigrationLockTimeoutError(
          `the migration lock (table ${MIGRATIONS_LOCK_TABLE}) is still held by another process after waiting MIGRATION_LOCK_TIMEOUT=${formatMs(timeoutMs)}. ` +
            `If no migration is running (a process died while migrating), clear the stale lock with ${options.unlockHint ?? "`migrate unlock`"}; ` +
            `if a long migration is running, raise MIGRATION_LOCK_TIMEOUT`,
        );
      }
      await sleep(Math.min(left, delay + Math.floor(Math.random() * delay * 0.5)));
      delay = Math.min(delay * 2, 1_000);
    }
  }
}

/** knex's bookkeeping tables are the migrating user's: the runtime user only reads them (to wait for the migrate job). */
export const RUNTIME_READ_ONLY_TABLES: readonly string[] = [MIGRATIONS_TABLE, MIGRATIONS_LOCK_TABLE];

/** Who the migrating user grants the runtime tables to, after migrating. */
export interface GrantOptions {
  /** MIGRATE_GRANT_TO (or `migrate up --grant-to`): unset, no grant is made. */
  grantee?: Grantee;
  /** The tables the runtime user only reads and appends to (CallGuard.appendOnlyTables): its grants on them leave out UPDATE and DELETE. */
  appendOnlyTables?: readonly string[];
}

/**
 * Migrates `db` (the database `database`), then gives the grantee its grants on every table as
 * they now are. The grantee is checked first unless the caller did (`checked`): a refused one
 * changes nothing.
 */
async function migrateAndGrant(db: Knex, database: string, migrations: readonly Migration[], options: MigrateOptions & GrantOptions & { checked?: boolean }): Promise<{ applied: string[]; granted: number }> {
  const { grantee, logger } = options;
  if (grantee && !options.checked) await assertGranteeUsable(db, database, grantee, (message) => logger?.warn(message));
  const applied = await migrate(db, migrations, options);
  if (!grantee) return { applied, granted: 0 };
  const statements = await applyGrants(db, database, grantee, { appendOnlyTables: options.appendOnlyTables ?? [], readOnlyTables: RUNTIME_READ_ONLY_TABLES });
  logger?.info({ grantee: formatGrantee(grantee), database, statements: statements.length }, "granted the runtime user its tables");
  return { applied, granted: statements.length };
}

/**
 * As the user of `url` (MIGRATE_DATABASE_URL, or the migrate command's): creates the database if
 * missing, migrates it, then grants the runtime user its tables. The grantee is checked on the
 * server before the database is even created, so a refused one changes nothing.
 */
export async function migrateDatabaseAt(url: string, migrations: readonly Migration[], options: MigrateOptions & GrantOptions = {}): Promise<{ applied: string[]; granted: number }> {
  const database = databaseNameOf(url);
  const { grantee, logger } = options;
  if (grantee) await withServerConnection(url, (server) => assertGranteeUsable(server, database, grantee, (message) => logger?.warn(message)));
  await ensureDatabase(url);
  const migrator = openDatabase({ url, logger });
  try {
    return await migrateAndGrant(migrator, database, migrations, { ...options, checked: true });
  } finally {
    await migrator.destroy();
  }
}

export interface PrepareOptions {
  config: MigrationConfig;
  logger?: Logger;
  /**
   * MIGRATE_DATABASE_URL on this database (migrationUrlFor): with MIGRATE_ON_START=1 the database
   * is created if missing, migrated and granted by that user, and `db` (the runtime user) only serves.
   */
  migrateUrl?: string;
  /** CallGuard.appendOnlyTables (GrantOptions). */
  appendOnlyTables?: readonly string[];
}

/**
 * What a start does with its database. MIGRATE_ON_START=1: migrate (waiting for the lock), as
 * the user of `options.migrateUrl` when given, else as `db`'s; then, with MIGRATE_GRANT_TO, grant
 * the runtime user its tables (the grantee is checked before anything changes).
 * MIGRATE_ON_START=0 (a migrate job applies them): wait, up to MIGRATION_LOCK_TIMEOUT, until no
 * migration is pending, then fail with a PendingMigrationsError naming them. Returns the names
 * applied here.
 */
export async function prepareDatabase(db: Knex, migrations: readonly Migration[], options: PrepareOptions): Promise<string[]> {
  const { config, logger, migrateUrl } = options;
  if (!config.MIGRATE_ON_START) return waitForMigrations(db, migrations, options);
  const grantee = config.MIGRATE_GRANT_TO;
  const migrateOptions = { lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT, logger, grantee, appendOnlyTables: options.appendOnlyTables };
  if (!migrateUrl) return (await migrateAndGrant(db, grantee ? await currentDatabase(db) : "", migrations, migrateOptions)).applied;
  const { applied } = await migrateDatabaseAt(migrateUrl, migrations, migrateOptions);
  if (!grantee && applied.length > 0) {
    logger?.warn({ applied }, "MIGRATE_GRANT_TO is not set: the runtime user gets no grants on the tables these migrations created (`migrate grants` prints them)");
  }
  return applied;
}

async function currentDatabase(db: Knex): Promise<string> {
  const [rows] = (await db.raw("SELECT DATABASE() AS name")) as [Array<{ name: string }>];
  return rows[0]!.name;
}

/**
 * A database not created yet, or not granted to the runtime user yet (the migrate job creates it,
 * migrates, then grants): the same as every migration pending, for a start that waits for the job.
 */
function notMigratedYet(err: unknown): boolean {
  return ["ER_BAD_DB_ERROR", "ER_DBACCESS_DENIED_ERROR", "ER_TABLEACCESS_DENIED_ERROR"].includes(errorCode(err) ?? "");
}

/** MIGRATE_ON_START=0: reads knex_migrations (nothing else, nothing written) until none of `migrations` is pending. */
async function waitForMigrations(db: Knex, migrations: readonly Migration[], options: PrepareOptions): Promise<string[]> {
  const { MIGRATION_LOCK_TIMEOUT } = options.config;
  const deadline = Date.now() + MIGRATION_LOCK_TIMEOUT;
  let delay = 100;
  let logged = false;
  for (;;) {
    let why = "";
    const pending = await pendingMigrations(db, migrations).catch((err: unknown) => {
      if (!notMigratedYet(err)) throw err;
      why = ` (${(err as Error).message})`;
      return sortMigrations(migrations).map((m) => m.name);
    });
    if (pending.length === 0) return [];
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new PendingMigrationsError(
        `${pending.length} migration(s) not applied (${pending.join(", ")})${why} after waiting MIGRATION_LOCK_TIMEOUT=${formatMs(MIGRATION_LOCK_TIMEOUT)}: ` +
          "MIGRATE_ON_START=0, so this process does not migrate. Run the service's `migrate` command (the migrate job) first, or set MIGRATE_ON_START=1",
        pending,
      );
    }
    if (!logged) {
      logged = true;
      options.logger?.warn({ pending, timeoutMs: MIGRATION_LOCK_TIMEOUT }, "waiting for pending migrations to be applied by the migrate job (MIGRATE_ON_START=0)");
    }
    await sleep(Math.min(left, delay));
    delay = Math.min(delay * 2, 1_000);
  }
}
