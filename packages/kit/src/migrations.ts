import type { Knex } from "knex";
import { z } from "zod";
import { envVar } from "./config.js";
import { isRetryableConflict, isUniqueViolation, type Migration } from "./db.js";
import type { Logger } from "./logger.js";

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
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new MigrationLockTimeoutError(
          `the migration lock (table ${MIGRATIONS_LOCK_TABLE}) is still held by another process after waiting MIGRATION_LOCK_TIMEOUT=${formatMs(timeoutMs)}. ` +
            `If no migration is running (a process died while migrating), clear the stale lock with ${options.unlockHint ?? "`migrate unlock`"}; ` +
            `if a long migration is running, raise MIGRATION_LOCK_TIMEOUT`,
        );
      }
      if (!logged) {
        logged = true;
        options.logger?.warn({ timeoutMs }, "waiting for the migration lock held by another process");
      }
      await sleep(Math.min(left, delay + Math.floor(Math.random() * delay * 0.5)));
      delay = Math.min(delay * 2, 1_000);
    }
  }
}

/**
 * What a start does with its database. MIGRATE_ON_START=1: migrate (waiting for the lock).
 * MIGRATE_ON_START=0 (a migrate job applies them): wait, up to MIGRATION_LOCK_TIMEOUT, until
 * no migration is pending, then fail with a PendingMigrationsError naming them. Returns
 * the names applied here.
 */
export async function prepareDatabase(
  db: Knex,
  migrations: readonly Migration[],
  options: { config: MigrationConfig; logger?: Logger },
): Promise<string[]> {
  const { MIGRATE_ON_START, MIGRATION_LOCK_TIMEOUT } = options.config;
  if (MIGRATE_ON_START) return migrate(db, migrations, { lockTimeoutMs: MIGRATION_LOCK_TIMEOUT, logger: options.logger });
  const deadline = Date.now() + MIGRATION_LOCK_TIMEOUT;
  let delay = 100;
  let logged = false;
  for (;;) {
    const pending = await pendingMigrations(db, migrations);
    if (pending.length === 0) return [];
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new PendingMigrationsError(
        `${pending.length} migration(s) not applied (${pending.join(", ")}) after waiting MIGRATION_LOCK_TIMEOUT=${formatMs(MIGRATION_LOCK_TIMEOUT)}: ` +
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
