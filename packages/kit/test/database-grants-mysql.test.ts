import test from "ava";
import type { Knex } from "knex";
import {
  ConfigError,
  createLogger,
  migrate,
  migrateDatabaseAt,
  openDatabase,
  parseGrantee,
  serviceMigrations,
  startServices,
  withServerConnection,
  type CallGuard,
  type Migration,
  type ServiceModule,
} from "../src/index.js";
import { DatabaseGrantsError, grantStatements } from "../src/database-grants.js";
import { RUNTIME_READ_ONLY_TABLES } from "../src/migrations.js";
import { createLeastPrivilegeDatabase, type LeastPrivilegeDatabase } from "@payments/testing";
import { openGuard } from "./fixtures/open-guard.js";

// The runtime database user of a least-privilege deployment, on the real MariaDB: a start with
// MIGRATE_DATABASE_URL creates, migrates and grants as root, then serves as a user that holds only
// its tables' grants, and cannot truncate, alter or drop the append-only audit or its triggers.

const AUDIT = "probe_audit";

/** An audit like @payments/access's: append-only, and its triggers refuse UPDATE and DELETE. */
const auditMigration: Migration = {
  name: "00000000000010_probe_audit",
  async up(db) {
    await db.schema.createTable(AUDIT, (t) => {
      t.string("id", 40).primary();
      t.string("what", 200).notNullable();
    });
    for (const op of ["UPDATE", "DELETE"]) {
      await db.raw(`CREATE TRIGGER ${AUDIT}_no_${op.toLowerCase()} BEFORE ${op} ON ${AUDIT} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '${AUDIT} is append-only'`);
    }
  },
};

const tableA: Migration = {
  name: "20260101000000_a",
  async up(db) {
    await db.schema.createTable("probe_a", (t) => {
      t.string("id", 32).primary();
      t.bigInteger("n").notNullable();
    });
  },
};

/** What "a later release" adds. */
const tableC: Migration = {
  name: "20260201000000_c",
  async up(db) {
    await db.schema.createTable("probe_c", (t) => {
      t.string("id", 32).primary();
    });
  },
};

const guard: CallGuard = { ...openGuard, migrations: [auditMigration], appendOnlyTables: [AUDIT] };

function probeModule(migrations: readonly Migration[]): ServiceModule {
  return { name: "probe", services: [], migrations, createContext: (base) => base, access: () => [], routes: () => {} };
}

const silent = createLogger({ service: "probe", level: "silent" });

async function leastPrivilege(t: { teardown(fn: () => Promise<void>): void }): Promise<LeastPrivilegeDatabase> {
  const database = await createLeastPrivilegeDatabase();
  t.teardown(() => database.drop());
  return database;
}

function start(database: LeastPrivilegeDatabase, migrations: readonly Migration[], extra: Record<string, string> = {}) {
  return startServices([probeModule(migrations)], { guard, mode: "split", env: { ...database.env, GRPC_PORT: "0", LOG_LEVEL: "silent", ...extra }, logger: silent });
}

/** A connection as the runtime user, closed with the test. */
function asRuntime(t: { teardown(fn: () => Promise<void>): void }, database: LeastPrivilegeDatabase): Knex {
  const db = openDatabase({ url: database.env.DATABASE_URL, poolMax: 2 });
  t.teardown(() => db.destroy());
  return db;
}

const DENIED = ["ER_TABLEACCESS_DENIED_ERROR", "ER_DBACCESS_DENIED_ERROR", "ER_SPECIFIC_ACCESS_DENIED_ERROR", "ER_COLUMNACCESS_DENIED_ERROR"];

/** Refused for want of a privilege (not by the audit's triggers: without the grant they would never run). */
async function refused(t: { true(value: boolean, message?: string): void }, statement: Promise<unknown>, what: string): Promise<void> {
  const code = await statement.then(
    () => "succeeded",
    (err: unknown) => (err as { code?: string }).code ?? String(err),
  );
  t.true(DENIED.includes(code), `${what}: ${code}`);
}

test("grantees: 'name'@'host', name@host, a name alone ('name'@'%'); quotes, backslashes and spaces inside refused", (t) => {
  t.deepEqual(parseGrantee("'payments_deposit'@'%'"), { user: "payments_deposit", host: "%" });
  t.deepEqual(parseGrantee("payments@10.0.%"), { user: "payments", host: "10.0.%" });
  t.deepEqual(parseGrantee("`svc`@`localhost`"), { user: "svc", host: "localhost" });
  t.deepEqual(parseGrantee("svc"), { user: "svc", host: "%" });
  for (const bad of ["", "'a'b'@'%'", "a\\b", "a b@%", "'a'@", "@host", "a@b@c", "'a\"@'%'"]) t.is(parseGrantee(bad), undefined, bad);
});

test("a start with MIGRATE_DATABASE_URL: root creates, migrates and grants; the runtime user, which may create no database, serves", async (t) => {
  const database = await leastPrivilege(t);
  // The runtime user alone cannot make its database: a start that tried would fail.
  await refused(t, withServerConnection(database.env.DATABASE_URL, (server) => server.raw("CREATE DATABASE IF NOT EXISTS ??", [database.name])), "CREATE DATABASE as the runtime user");

  const running = await start(database, [tableA]);
  const served = running.contexts.get("probe")!.db;
  // The context's database is the runtime user's.
  const [[who]] = (await served.raw("SELECT CURRENT_USER() AS who")) as [[{ who: string }]];
  t.is(who.who, `${database.runtime.user}@%`);
  await served("probe_a").insert({ id: "a1", n: 1 });
  await served.transaction(async (trx) => {
    // A row lock needs SELECT and UPDATE only, no LOCK TABLES.
    await trx("probe_a").where({ id: "a1" }).forUpdate().first();
    await trx("probe_a").where({ id: "a1" }).update({ n: 2 });
  });
  await served(AUDIT).insert({ id: "e1", what: "appended" });
  t.deepEqual(await served(AUDIT).select("id", "what"), [{ id: "e1", what: "appended" }]);
  await served("probe_a").where({ id: "a1" }).del();
  await running.stop();
});

test("as the runtime user, truncating, deleting, updating, altering or dropping the audit or its triggers, and any DDL, is refused; knex's tables are read-only", async (t) => {
  const database = await leastPrivilege(t);
  const running = await start(database, [tableA]);
  await running.stop();
  const runtime = asRuntime(t, database);
  await runtime(AUDIT).insert({ id: "e1", what: "kept" });

  await refused(t, runtime.raw(`TRUNCATE ${AUDIT}`), "TRUNCATE");
  await refused(t, runtime(AUDIT).del(), "DELETE");
  await refused(t, runtime(AUDIT).update({ what: "rewritten" }), "UPDATE");
  await refused(t, runtime.raw(`ALTER TABLE ${AUDIT} ADD COLUMN x INT`), "ALTER TABLE");
  await refused(t, runtime.raw(`DROP TABLE ${AUDIT}`), "DROP TABLE");
  await refused(t, runtime.raw(`DROP TRIGGER ${AUDIT}_no_delete`), "DROP TRIGGER");
  await refused(t, runtime.raw(`CREATE TRIGGER sneaky BEFORE INSERT ON ${AUDIT} FOR EACH ROW SET NEW.what = 'x'`), "CREATE TRIGGER");
  await refused(t, runtime.raw(`RENAME TABLE ${AUDIT} TO gone`), "RENAME TABLE");
  await refused(t, runtime.raw("CREATE TABLE probe_new (id INT)"), "CREATE TABLE");
  await refused(t, runtime.raw("DROP TABLE probe_a"), "DROP TABLE of its own table");
  await refused(t, runtime.raw("CREATE INDEX probe_a_n ON probe_a (n)"), "CREATE INDEX");
  await refused(t, runtime.raw("LOCK TABLES probe_a WRITE"), "LOCK TABLES");
  await refused(t, runtime("knex_migrations").insert({ name: "forged", batch: 99, migration_time: new Date() }), "a knex_migrations row");
  await refused(t, runtime("knex_migrations_lock").update({ is_locked: 1 }), "the migration lock");
  t.true((await runtime("knex_migrations").select("name")).length > 0, "knex_migrations is readable (MIGRATE_ON_START=0 waits on it)");

  const admin = openDatabase({ url: database.url });
  t.teardown(() => admin.destroy());
  t.deepEqual(await admin(AUDIT).select("id", "what"), [{ id: "e1", what: "kept" }], "the audit is as it was");
  t.is((await admin("information_schema.TRIGGERS").where({ TRIGGER_SCHEMA: database.name, EVENT_OBJECT_TABLE: AUDIT })).length, 2, "its triggers are there");
});

test("a table a later migration adds gets its grants on the next migrate, not before", async (t) => {
  const database = await leastPrivilege(t);
  await (await start(database, [tableA])).stop();
  // The new release's migration applied by hand, without grants: the runtime user cannot use its table.
  const admin = openDatabase({ url: database.url });
  t.teardown(() => admin.destroy());
  await migrate(admin, serviceMigrations(probeModule([tableA, tableC]), guard.migrations));
  const runtime = asRuntime(t, database);
  await refused(t, runtime("probe_c").insert({ id: "c1" }), "before the grants");

  // The next start with MIGRATE_GRANT_TO grants it, and still only reads and appends to the audit.
  await (await start(database, [tableA, tableC])).stop();
  await runtime("probe_c").insert({ id: "c1" });
  await runtime("probe_c").where({ id: "c1" }).del();
  await refused(t, runtime(AUDIT).del(), "DELETE of the audit after the second migrate");
});

test("rights the runtime user holds on a table beyond its grants (UPDATE on the audit, granted by hand) are taken away on the next migrate", async (t) => {
  const database = await leastPrivilege(t);
  await (await start(database, [tableA])).stop();
  await withServerConnection(database.url, (server) => server.raw(`GRANT UPDATE, DELETE, DROP ON ??.?? TO ${database.runtime.grantee} WITH GRANT OPTION`, [database.name, AUDIT]));
  const admin = openDatabase({ url: database.url });
  t.teardown(() => admin.destroy());
  const planned = await grantStatements(admin, database.name, parseGrantee(database.runtime.grantee)!, { appendOnlyTables: [AUDIT], readOnlyTables: RUNTIME_READ_ONLY_TABLES });
  t.true(
    planned.some((s) => /^REVOKE (?=.*UPDATE)(?=.*DELETE)(?=.*DROP)(?=.*GRANT OPTION).* ON `[^`]+`\.`probe_audit` FROM /.test(s)),
    planned.join("\n"),
  );

  await (await start(database, [tableA])).stop();
  const runtime = asRuntime(t, database);
  await refused(t, runtime.raw(`DROP TABLE ${AUDIT}`), "DROP after the migrate");
  await refused(t, runtime(AUDIT).update({ what: "x" }), "UPDATE after the migrate");
  const held = await admin("information_schema.TABLE_PRIVILEGES").where({ GRANTEE: database.runtime.grantee, TABLE_SCHEMA: database.name, TABLE_NAME: AUDIT }).select("PRIVILEGE_TYPE", "IS_GRANTABLE");
  t.deepEqual(held.map((h: { PRIVILEGE_TYPE: string }) => h.PRIVILEGE_TYPE).sort(), ["INSERT", "SELECT"]);
  t.true(held.every((h: { IS_GRANTABLE: string }) => h.IS_GRANTABLE === "NO"));
});

test("a runtime user with rights on the whole database, or one that does not exist, is refused before anything changes", async (t) => {
  const database = await leastPrivilege(t);
  const schemaExists = () => withServerConnection(database.url, async (server) => (await server("information_schema.SCHEMATA").where("SCHEMA_NAME", database.name)).length > 0);

  // A pattern that matches its database counts as much as the database's own name.
  const pattern = `${database.name.slice(0, 5)}%`;
  await withServerConnection(database.url, (server) => server.raw(`GRANT ALTER, DROP ON ??.* TO ${database.runtime.grantee} WITH GRANT OPTION`, [pattern]));
  const broad = await t.throwsAsync(start(database, [tableA]), { instanceOf: DatabaseGrantsError });
  t.regex(broad.message, /holds privileges on more than its tables.*\(REVOKE DROP, ALTER, GRANT OPTION ON `pgt_[0-9a-f]%`\.\* FROM 'pgu_[0-9a-f]+'@'%';\)/s);
  t.false(await schemaExists(), "the database was not even created");

  // The REVOKE the message names is the one to run.
  await withServerConnection(database.url, (server) => server.raw(/\((REVOKE [^;]+);\)/.exec(broad.message)![1]!));
  const missing = await t.throwsAsync(start(database, [tableA], { MIGRATE_GRANT_TO: "'nobody_here'@'%'" }), { instanceOf: DatabaseGrantsError });
  t.regex(missing.message, /'nobody_here'@'%' does not exist.*CREATE USER/);
  t.false(await schemaExists());

  await (await start(database, [tableA])).stop();
  t.true(await schemaExists(), "once its rights are its tables' alone, it starts");
});

test("MIGRATE_ON_START=0: the runtime user reads knex_migrations until the migrate job has created, migrated and granted; it writes nothing of its own", async (t) => {
  const database = await leastPrivilege(t);
  const list = serviceMigrations(probeModule([tableA]), guard.migrations);
  const starting = start(database, [tableA], { MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "20s" });
  await new Promise((resolve) => setTimeout(resolve, 400));
  // The job: root, with the grants (the service's own migrate command does the same).
  const job = await migrateDatabaseAt(database.url, list, { grantee: parseGrantee(database.runtime.grantee), appendOnlyTables: [AUDIT] });
  t.is(job.applied.length, list.length);
  const running = await starting;
  await running.contexts.get("probe")!.db("probe_a").insert({ id: "w1", n: 1 });
  await running.stop();

  const timedOut = await t.throwsAsync(start({ ...database, env: { ...database.env, DATABASE_URL: database.env.DATABASE_URL.replace(database.name, `${database.name}_never`) } }, [tableA], { MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "300ms", MIGRATE_DATABASE_URL: "" }));
  t.regex(timedOut.message, /not applied .*Access denied.*MIGRATE_ON_START=0/s, "a database it may not see is every migration pending, named at the timeout");
});

test("settings: MIGRATE_DATABASE_URL naming another database, or either setting on SQLite, or a grantee that is no user, stop the start before anything opens", async (t) => {
  const database = await leastPrivilege(t);
  const other = new URL(database.url);
  other.pathname = "/somewhere_else";
  const mismatch = await t.throwsAsync(start(database, [tableA], { MIGRATE_DATABASE_URL: other.toString() }), { instanceOf: ConfigError });
  t.regex(mismatch.message, /MIGRATE_DATABASE_URL: names the database "somewhere_else", but DATABASE_URL names "pgt_/);
  const sqlite = await t.throwsAsync(
    startServices([probeModule([tableA])], { guard, mode: "split", env: { GRPC_PORT: "0", MIGRATE_DATABASE_URL: database.url, MIGRATE_GRANT_TO: "svc" }, logger: silent }),
    { instanceOf: ConfigError },
  );
  t.regex(sqlite.message, /MIGRATE_DATABASE_URL: needs a MySQL DATABASE_URL.*\n.*MIGRATE_GRANT_TO: needs a MySQL DATABASE_URL/);
  const bad = await t.throwsAsync(start(database, [tableA], { MIGRATE_GRANT_TO: "it's me" }), { instanceOf: ConfigError });
  t.regex(bad.message, /MIGRATE_GRANT_TO: "it's me" is not a database user/);

  // A MIGRATE_DATABASE_URL naming no database takes DATABASE_URL's.
  const bare = new URL(database.url);
  bare.pathname = "/";
  const running = await start(database, [tableA], { MIGRATE_DATABASE_URL: bare.toString() });
  t.teardown(() => running.stop());
  t.is((await running.contexts.get("probe")!.db("knex_migrations").select("name")).length, serviceMigrations(probeModule([tableA]), guard.migrations).length);
});
