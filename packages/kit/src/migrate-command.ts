import { join } from "node:path";
import type { Knex } from "knex";
import { ConfigError, loadConfig, type Env } from "./config.js";
import { assertNotTooBroad, formatGrantee, grantsScript, grantStatements, inspectGrantee, parseGrantee, type Grantee } from "./database-grants.js";
import { deriveDatabaseUrl, openDatabase, withServerConnection, type Migration } from "./db.js";
import { createLogger, type Logger } from "./logger.js";
import {
  appliedMigrations,
  assertMigrationSettings,
  databaseNameOf,
  migrate,
  migrateDatabaseAt,
  migrationLockHeld,
  migrationUrlFor,
  pendingMigrations,
  RUNTIME_READ_ONLY_TABLES,
  unlockMigrations,
} from "./migrations.js";
import { serviceMigrations } from "./service-migrations.js";
import { baseConfigSchema, type AnyServiceModule, type CallGuard } from "./service.js";

const commandConfigSchema = baseConfigSchema.pick({
  DATABASE_URL: true,
  DATA_DIR: true,
  DATABASE_POOL_MAX: true,
  LOG_LEVEL: true,
  MIGRATION_LOCK_TIMEOUT: true,
  MIGRATE_DATABASE_URL: true,
  MIGRATE_GRANT_TO: true,
});

export const MIGRATE_USAGE = `usage: migrate [up [--grant-to USER] | status | unlock | grants --user USER]
  up       apply pending migrations (the default); waits up to MIGRATION_LOCK_TIMEOUT while another process holds the migration lock.
           With --grant-to (or MIGRATE_GRANT_TO), then grants the runtime user USER its tables: read and write, the audit only read
           and append, knex's migration tables only read; nothing else (no DDL)
  status   applied and pending migrations, and whether the migration lock is held
  unlock   clear a stale migration lock (left by a process that died while migrating); never while a migration runs
  grants   print, as SQL, the grants of the runtime user USER on the tables of the migrated database (applies nothing)
  USER is 'name'@'host' (name alone: 'name'@'%'); it must exist (CREATE USER) before grants are applied
settings: DATABASE_URL (mysql://…; unset: SQLite files in DATA_DIR), MIGRATE_DATABASE_URL (the user that migrates and grants,
  default DATABASE_URL's), MIGRATE_GRANT_TO, MIGRATION_LOCK_TIMEOUT (60s), LOG_LEVEL
exit status: 0 done, 1 failed, 2 usage`;

export interface MigrateCommandOptions {
  env?: Env;
  /** "split" (one service, DATABASE_URL as is) or "all-in-one" (one database per module, as the all-in-one start derives them). Default: split for one module. */
  mode?: "split" | "all-in-one";
  logger?: Logger;
  /**
   * The CallGuard the services run with: its tables (audit, approvals) are migrated too, and the
   * runtime user's grants on its append-only ones (the audit) leave out UPDATE and DELETE.
   */
  guard?: Pick<CallGuard, "migrations" | "appendOnlyTables">;
  /** Where usage goes (default process.stdout / process.stderr). */
  out?: (text: string) => void;
  err?: (text: string) => void;
}

type Subcommand = "up" | "status" | "unlock" | "grants";

interface Arguments {
  command: Subcommand;
  /** `up --grant-to`, `grants --user`. */
  grantee?: Grantee;
}

/** The command line, or what is wrong with it. */
function parseArguments(args: readonly string[]): Arguments | string {
  const words: string[] = [];
  let grantee: Grantee | undefined;
  let option: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const named = /^(--grant-to|--user)(?:=(.*))?$/.exec(arg);
    if (!named) {
      if (arg.startsWith("-")) return `unknown option ${arg}`;
      words.push(arg);
      continue;
    }
    const value = named[2] ?? args[++i];
    if (value === undefined) return `${named[1]} needs a user ('name'@'host')`;
    grantee = parseGrantee(value);
    if (!grantee) return `${named[1]} ${value} is not a database user: write 'name'@'host' ('name' alone is 'name'@'%')`;
    option = named[1];
  }
  if (words.length > 1 || (words[0] !== undefined && !["up", "status", "unlock", "grants"].includes(words[0]))) return `unknown arguments: ${words.join(" ")}`;
  const command = (words[0] ?? "up") as Subcommand;
  if (command === "grants" && option !== "--user") return "grants needs --user 'name'@'host'";
  if (option && (command === "grants" ? option !== "--user" : command !== "up" || option !== "--grant-to")) return `${option} does not go with ${command}`;
  return { command, grantee };
}

/**
 * The `migrate` command of a service (one module) or of the all-in-one (every module):
 * `up` (default), `status`, `unlock`, `grants`. Opens each module's database exactly as the start
 * does (as MIGRATE_DATABASE_URL's user when set), logs JSON lines through the kit logger (`grants`
 * prints SQL on stdout and its problems on stderr instead, so its output can be piped into a
 * client), and returns the exit status: 0 done, 1 failed, 2 usage. A service's `src/migrate.ts` is
 * `process.exitCode = await runMigrateCommand([xModule], process.argv.slice(2))`.
 */
export async function runMigrateCommand(modules: readonly AnyServiceModule[], argv: readonly string[], options: MigrateCommandOptions = {}): Promise<number> {
  const out = options.out ?? ((text: string) => process.stdout.write(text));
  const errOut = options.err ?? ((text: string) => process.stderr.write(text));
  const args = argv.filter((a) => a !== "--");
  if (args.some((a) => a === "-h" || a === "--help" || a === "help")) {
    out(`${MIGRATE_USAGE}\n`);
    return 0;
  }
  const parsed = parseArguments(args);
  if (typeof parsed === "string") {
    errOut(`migrate: ${parsed}\n${MIGRATE_USAGE}\n`);
    return 2;
  }
  const { command } = parsed;
  const mode = options.mode ?? (modules.length === 1 ? "split" : "all-in-one");
  const processName = mode === "split" && modules.length === 1 ? modules[0]!.name : "all-in-one";
  const env = options.env ?? process.env;

  let config: ReturnType<typeof loadConfig<typeof commandConfigSchema>>;
  try {
    config = loadConfig(commandConfigSchema, env);
    assertMigrationSettings(config, config.DATABASE_URL);
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : `migrate ${command} failed: ${(err as Error).message}`;
    if (command === "grants") errOut(`migrate grants: ${message}\n`);
    else (options.logger ?? createLogger({ service: processName, level: "info" })).error({ command: `migrate ${command}` }, message);
    return 1;
  }
  // What the command reports is its output: shown at LOG_LEVEL=warn too (only `silent` hides it).
  const level = ["fatal", "error", "warn"].includes(config.LOG_LEVEL) ? "info" : config.LOG_LEVEL;
  // `grants` keeps stdout for its SQL: whatever it logs goes to stderr.
  const logger = options.logger ?? createLogger({ service: processName, level, ...(command === "grants" ? { destination: process.stderr } : {}) });
  const unlockHint = mode === "split" ? `the service's \`migrate unlock\` command (pnpm --filter <service> migrate unlock)` : "`pnpm migrate unlock`";
  const grantee = command === "up" ? (parsed.grantee ?? config.MIGRATE_GRANT_TO) : parsed.grantee;

  let failed = false;
  const scripts: string[] = [];
  for (const module of modules) {
    const log = logger.child({ component: module.name, command: `migrate ${command}` });
    const runtimeUrl = config.DATABASE_URL ? (mode === "all-in-one" ? deriveDatabaseUrl(config.DATABASE_URL, module.name) : config.DATABASE_URL) : undefined;
    // The migrating user's view of the database: every subcommand runs as it (unlock writes the lock).
    const url = migrationUrlFor(config, runtimeUrl) ?? runtimeUrl;
    const where = url ? { database: databaseNameOf(url) } : { sqliteFile: join(config.DATA_DIR, `${module.name}.sqlite`) };
    const task: ModuleTask = { module, url, where, list: serviceMigrations(module, options.guard?.migrations), log, config, grantee, appendOnlyTables: options.guard?.appendOnlyTables ?? [], unlockHint };
    try {
      if (command === "up") await up(task);
      else if (command === "status") await status(task);
      else if (command === "unlock") await unlock(task);
      else scripts.push(await grants(task));
    } catch (err) {
      failed = true;
      if (command === "grants") errOut(`migrate grants (${module.name}): ${(err as Error).message}\n`);
      else log.error({ ...where, err }, `migrate ${command} failed: ${(err as Error).message}`);
      if (command !== "status") break;
    }
  }
  // All of it or nothing: a script cut after one database would look complete to whoever applies it.
  if (!failed && scripts.length > 0) out(scripts.join("\n"));
  return failed ? 1 : 0;
}

/** One module's database, as one subcommand sees it. */
interface ModuleTask {
  module: AnyServiceModule;
  /** The migrating user's URL of the module's database; undefined: its SQLite file. */
  url: string | undefined;
  where: { database: string } | { sqliteFile: string };
  list: Migration[];
  log: Logger;
  config: { DATA_DIR: string; DATABASE_POOL_MAX: number; MIGRATION_LOCK_TIMEOUT: number };
  grantee: Grantee | undefined;
  appendOnlyTables: readonly string[];
  unlockHint: string;
}

function open(task: ModuleTask): Knex {
  return task.url ? openDatabase({ url: task.url, poolMax: task.config.DATABASE_POOL_MAX, logger: task.log }) : openDatabase({ sqliteFile: join(task.config.DATA_DIR, `${task.module.name}.sqlite`), logger: task.log });
}

async function withDatabase<T>(task: ModuleTask, fn: (db: Knex) => Promise<T>): Promise<T> {
  const db = open(task);
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

/** `up`: create, migrate, and with a grantee grant (MySQL); SQLite's file is made by opening it. */
async function up(task: ModuleTask): Promise<void> {
  const { url, where, log, grantee } = task;
  if (grantee && !url) throw new Error("--grant-to: SQLite has no database users (grants need a MySQL DATABASE_URL)");
  const options = { lockTimeoutMs: task.config.MIGRATION_LOCK_TIMEOUT, logger: log, unlockHint: task.unlockHint, grantee, appendOnlyTables: task.appendOnlyTables };
  const { applied, granted } = url ? await migrateDatabaseAt(url, task.list, options) : await withDatabase(task, async (db) => ({ applied: await migrate(db, task.list, options), granted: 0 }));
  const grantNote = grantee ? `; the runtime user ${formatGrantee(grantee)} granted its tables` : "";
  log.info({ ...where, applied, ...(grantee ? { grantee: formatGrantee(grantee), grants: granted } : {}) }, `${applied.length > 0 ? `applied ${applied.length} migration(s)` : "no pending migration"}${grantNote}`);
}

async function status(task: ModuleTask): Promise<void> {
  const { url, where, log, list } = task;
  if (url && (await databaseMissing(url))) {
    const pending = list.map((m) => m.name).sort((a, b) => a.localeCompare(b));
    log.info({ ...where, databaseExists: false, applied: [], pending, locked: false }, `${pending.length} pending migration(s) (the database does not exist yet)`);
    return;
  }
  await withDatabase(task, async (db) => {
    const applied = await appliedMigrations(db);
    const pending = await pendingMigrations(db, list);
    const locked = await migrationLockHeld(db);
    log.info({ ...where, databaseExists: true, applied, pending, locked }, `${pending.length} pending migration(s)${locked ? ", migration lock held" : ""}`);
  });
}

async function unlock(task: ModuleTask): Promise<void> {
  const { url, where, log } = task;
  if (url && (await databaseMissing(url))) {
    log.info({ ...where }, "the database does not exist: no lock to clear");
    return;
  }
  await withDatabase(task, async (db) => {
    const wasLocked = await unlockMigrations(db);
    log.info({ ...where, wasLocked }, wasLocked ? "migration lock cleared" : "the migration lock was not held");
  });
}

/**
 * `grants`: the SQL that gives the runtime user its grants on the module's database as migrated,
 * read (never applied) as the migrating user. A database not migrated yet, or a user these grants
 * cannot make least-privileged (assertGranteeUsable), is an error: the SQL would be incomplete.
 */
async function grants(task: ModuleTask): Promise<string> {
  const { url, list, module } = task;
  const grantee = task.grantee!;
  if (!url) throw new Error("SQLite has no database users: grants need a MySQL DATABASE_URL");
  const database = databaseNameOf(url);
  if (await databaseMissing(url)) throw new Error(`the database ${database} does not exist yet: run \`migrate up\` first (the grants name the tables it creates)`);
  return withDatabase(task, async (db) => {
    const pending = await pendingMigrations(db, list);
    if (pending.length > 0) throw new Error(`${pending.length} migration(s) of ${database} not applied (${pending.join(", ")}): run \`migrate up\` first (the grants name the tables they create)`);
    // A user that does not exist yet is fine here (the script says to create it first); one with database-wide rights is not.
    assertNotTooBroad(grantee, await inspectGrantee(db, database, grantee));
    const statements = await grantStatements(db, database, grantee, { appendOnlyTables: task.appendOnlyTables, readOnlyTables: RUNTIME_READ_ONLY_TABLES });
    return grantsScript(database, grantee, statements, `${module.name}`);
  });
}
/** Whether the MySQL database named in url is absent (asked without connecting to it, so nothing is logged). */
async function databaseMissing(url: string): Promise<boolean> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  return withServerConnection(url, async (admin) => (await admin("information_schema.SCHEMATA").where("SCHEMA_NAME", name).select("SCHEMA_NAME")).length === 0);
}
