import { join } from "node:path";
import type { Knex } from "knex";
import { ConfigError, loadConfig, type Env } from "./config.js";
import { deriveDatabaseUrl, ensureDatabase, openDatabase, withServerConnection } from "./db.js";
import { createLogger, type Logger } from "./logger.js";
import { appliedMigrations, migrate, migrationLockHeld, pendingMigrations, unlockMigrations } from "./migrations.js";
import { serviceMigrations } from "./service-migrations.js";
import { baseConfigSchema, type AnyServiceModule, type CallGuard } from "./service.js";


const commandConfigSchema = baseConfigSchema.pick({
  DATABASE_URL: true,
  DATA_DIR: true,
  DATABASE_POOL_MAX: true,
  LOG_LEVEL: true,
  MIGRATION_LOCK_TIMEOUT: true,
});

export const MIGRATE_USAGE = `usage: migrate [up|status|unlock]
  up       apply pending migrations (the default); waits up to MIGRATION_LOCK_TIMEOUT while another process holds the migration lock
  status   applied and pending migrations, and whether the migration lock is held
  unlock   clear a stale migration lock (left by a process that died while migrating); never while a migration runs
settings: DATABASE_URL (mysql://…; unset: SQLite files in DATA_DIR), MIGRATION_LOCK_TIMEOUT (60s), LOG_LEVEL
exit status: 0 done, 1 failed, 2 usage`;

export interface MigrateCommandOptions {
  env?: Env;
  /** "split" (one service, DATABASE_URL as is) or "all-in-one" (one database per module, as the all-in-one start derives them). Default: split for one module. */
  mode?: "split" | "all-in-one";
  logger?: Logger;
  /** The CallGuard the services run with: its tables (audit, approvals) are migrated too. */
  guard?: Pick<CallGuard, "migrations">;
  /** Where usage goes (default process.stdout / process.stderr). */
  out?: (text: string) => void;
  err?: (text: string) => void;
}

type Subcommand = "up" | "status" | "unlock";

/**
 * The `migrate` command of a service (one module) or of the all-in-one (every module):
 * `up` (default), `status`, `unlock`. Opens each module's database exactly as the start
 * does, logs JSON lines through the kit logger, and returns the exit status: 0 done,
 * 1 failed, 2 usage. A service's `src/migrate.ts` is
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
  if (args.length > 1 || (args[0] !== undefined && !["up", "status", "unlock"].includes(args[0]))) {
    errOut(`migrate: unknown arguments: ${args.join(" ")}\n${MIGRATE_USAGE}\n`);
    return 2;
  }
  const command = (args[0] ?? "up") as Subcommand;
  const mode = options.mode ?? (modules.length === 1 ? "split" : "all-in-one");
  const processName = mode === "split" && modules.length === 1 ? modules[0]!.name : "all-in-one";
  const env = options.env ?? process.env;

  let config: ReturnType<typeof loadConfig<typeof commandConfigSchema>>;
  try {
    config = loadConfig(commandConfigSchema, env);
  } catch (err) {
    const logger = options.logger ?? createLogger({ service: processName, level: "info" });
    logger.error({ command: `migrate ${command}` }, err instanceof ConfigError ? err.message : `migrate ${command} failed: ${(err as Error).message}`);
    return 1;
  }
  // What the command reports is its output: shown at LOG_LEVEL=warn too (only `silent` hides it).
  const level = ["fatal", "error", "warn"].includes(config.LOG_LEVEL) ? "info" : config.LOG_LEVEL;
  const logger = options.logger ?? createLogger({ service: processName, level });
  const unlockHint = mode === "split" ? `the service's \`migrate unlock\` command (pnpm --filter <service> migrate unlock)` : "`pnpm migrate unlock`";

  let failed = false;
  for (const module of modules) {
    const log = logger.child({ component: module.name, command: `migrate ${command}` });
    const url = config.DATABASE_URL ? (mode === "all-in-one" ? deriveDatabaseUrl(config.DATABASE_URL, module.name) : config.DATABASE_URL) : undefined;
    const where = url ? { database: new URL(url).pathname.slice(1) } : { sqliteFile: join(config.DATA_DIR, `${module.name}.sqlite`) };
    const list = serviceMigrations(module, options.guard?.migrations);
    let db: Knex | undefined;
    try {
      if (url && command === "up") await ensureDatabase(url);
      const missing = url && command !== "up" ? await databaseMissing(url) : false;
      if (missing && command === "status") {
        const pending = list.map((m) => m.name).sort((a, b) => a.localeCompare(b));
        log.info({ ...where, databaseExists: false, applied: [], pending, locked: false }, `${pending.length} pending migration(s) (the database does not exist yet)`);
        continue;
      }
      if (missing) {
        log.info({ ...where }, "the database does not exist: no lock to clear");
        continue;
      }
      db = url ? openDatabase({ url, poolMax: config.DATABASE_POOL_MAX, logger: log }) : openDatabase({ sqliteFile: where.sqliteFile!, logger: log });
      if (command === "up") {
        const applied = await migrate(db, list, { lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT, logger: log, unlockHint });
        log.info({ ...where, applied }, applied.length > 0 ? `applied ${applied.length} migration(s)` : "no pending migration");
      } else if (command === "status") {
        const applied = await appliedMigrations(db);
        const pending = await pendingMigrations(db, list);
        const locked = await migrationLockHeld(db);
        log.info({ ...where, databaseExists: true, applied, pending, locked }, `${pending.length} pending migration(s)${locked ? ", migration lock held" : ""}`);
      } else {
        const wasLocked = await unlockMigrations(db);
        log.info({ ...where, wasLocked }, wasLocked ? "migration lock cleared" : "the migration lock was not held");
      }
    } catch (err) {
      failed = true;
      log.error({ ...where, err }, `migrate ${command} failed: ${(err as Error).message}`);
      if (command !== "status") break;
    } finally {
      await db?.destroy();
    }
  }
  return failed ? 1 : 0;
}

/** Whether the MySQL database named in url is absent (asked without connecting to it, so nothing is logged). */
async function databaseMissing(url: string): Promise<boolean> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  return withServerConnection(url, async (admin) => (await admin("information_schema.SCHEMATA").where("SCHEMA_NAME", name).select("SCHEMA_NAME")).length === 0);
}
