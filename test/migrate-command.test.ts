import test, { type ExecutionContext } from "ava";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { allModules } from "@payments/all-in-one";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { deriveDatabaseUrl, ensureDatabase, ensureMigrationTables, MigrationLockTimeoutError, openDatabase, pendingMigrations, serviceMigrations, withServerConnection, type RunningServices } from "@payments/kit";
import { accessMigrations, startServices } from "@payments/access";
import { createLeastPrivilegeDatabase, createServiceClient, createTestDatabase, createTestDatabaseUser, TEST_ADMIN, TEST_OPERATOR_ENV } from "@payments/testing";
import { merchantModule } from "@payments/merchant-service";

// The `migrate` commands as a deployment runs them (real child processes), and replicas of a
// real service starting at the same moment on a fresh MariaDB database.

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const MASTER_KEY = "b".repeat(64);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  lines: Array<Record<string, unknown>>;
}

function run(script: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", script, ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += String(d)));
    child.stderr.on("data", (d) => (stderr += String(d)));
    child.once("error", reject);
    child.once("exit", (code) => {
      const lines = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, stdout, stderr, lines });
    });
  });
}

const merchantMigrate = "services/merchant/src/migrate.ts";
const allMigrate = "packages/all-in-one/src/migrate.ts";
const merchantNames = serviceMigrations(merchantModule, accessMigrations)
  .map((m) => m.name)
  .sort();

test("per service: status lists pending, up applies, status lists none; exit codes", async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const env = { DATABASE_URL: database.url };

  const before = await run(merchantMigrate, ["status"], env);
  t.is(before.code, 0, before.stderr);
  t.like(before.lines[0], { service: "merchant", databaseExists: false, pending: merchantNames, applied: [] });

  const up = await run(merchantMigrate, [], env);
  t.is(up.code, 0, up.stderr);
  t.deepEqual(up.lines[0]?.applied, merchantNames);

  const again = await run(merchantMigrate, ["up"], env);
  t.is(again.code, 0);
  t.deepEqual(again.lines[0]?.applied, []);

  const after = await run(merchantMigrate, ["status"], env);
  t.is(after.code, 0);
  t.like(after.lines[0], { databaseExists: true, pending: [], applied: merchantNames, locked: false });

  const usage = await run(merchantMigrate, ["sideways"], env);
  t.is(usage.code, 2);
  t.regex(usage.stderr, /usage: migrate \[up \[--grant-to USER\] \| status \| unlock \| grants --user USER\]/);
  const help = await run(merchantMigrate, ["--help"], env);
  t.is(help.code, 0);
  t.regex(help.stdout, /usage: migrate/);

  const badConfig = await run(merchantMigrate, ["status"], { DATABASE_URL: "postgres://nowhere/x" });
  t.is(badConfig.code, 1);
  t.regex(badConfig.stdout, /DATABASE_URL/);
});

test("per service: a stale lock makes a start fail clearly; `migrate unlock` clears it; the next start succeeds", async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  t.teardown(() => db.destroy());
  await ensureMigrationTables(db);
  await db("knex_migrations_lock").update({ is_locked: 1 });
  const env = { DATABASE_URL: database.url, MIGRATION_LOCK_TIMEOUT: "1s" };

  const status = await run(merchantMigrate, ["status"], env);
  t.like(status.lines[0], { locked: true, pending: merchantNames });

  const start = startServices([merchantModule], { mode: "split", env: { ...TEST_OPERATOR_ENV, ...env, GRPC_PORT: "0", MASTER_KEY, LOG_LEVEL: "silent" } });
  const err = await t.throwsAsync(start, { instanceOf: MigrationLockTimeoutError });
  t.regex(err.message, /MIGRATION_LOCK_TIMEOUT=1s.*migrate unlock/s);

  const up = await run(merchantMigrate, ["up"], env);
  t.is(up.code, 1, "the migrate job fails too, after the timeout");
  t.true(up.lines.some((l) => l.msg === "waiting for the migration lock held by another process"), up.stdout);
  t.true(up.lines.some((l) => l.level === "error" && /migrate unlock/.test(String(l.msg))));
  t.notRegex(up.stdout + up.stderr, /knex migrate:unlock/, "knex's own advice is not shown");

  const unlock = await run(merchantMigrate, ["unlock"], env);
  t.is(unlock.code, 0, unlock.stderr);
  t.like(unlock.lines[0], { wasLocked: true, msg: "migration lock cleared" });

  const running = await startServices([merchantModule], { mode: "split", env: { ...TEST_OPERATOR_ENV, ...env, GRPC_PORT: "0", MASTER_KEY, LOG_LEVEL: "silent" } });
  await running.stop();
  t.deepEqual(await pendingMigrations(db, serviceMigrations(merchantModule, accessMigrations)), []);
});

test("per service: two migrate jobs at the same moment on a fresh database both succeed", async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const runs = await Promise.all([run(merchantMigrate, [], { DATABASE_URL: database.url }), run(merchantMigrate, [], { DATABASE_URL: database.url })]);
  t.deepEqual(
    runs.map((r) => r.code),
    [0, 0],
    runs.map((r) => r.stdout + r.stderr).join("\n"),
  );
  // The job that waited for the other's lock logs that first; its result line is the one with `applied`.
  const applied = runs.flatMap((r) => (r.lines.find((l) => Array.isArray(l.applied))?.applied as string[] | undefined) ?? []);
  t.deepEqual(applied.sort(), merchantNames, "each migration applied once");
});

test("all-in-one on MySQL: migrates every service's derived database; MIGRATE_ON_START=0 then starts", async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const env = { DATABASE_URL: database.url };
  const status = await run(allMigrate, ["status"], env);
  t.is(status.code, 0, status.stderr);
  t.is(status.lines.length, allModules.length);
  t.true(status.lines.every((l) => (l.pending as string[]).length > 0));

  // MIGRATE_ON_START=0 before the job: refused.
  await t.throwsAsync(
    startServices([...allModules], { mode: "all-in-one", env: { ...TEST_OPERATOR_ENV, ...env, GRPC_PORT: "0", MASTER_KEY, LOG_LEVEL: "silent", MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "300ms" } }),
    { message: /MIGRATE_ON_START=0/ },
  );

  const up = await run(allMigrate, ["up"], env);
  t.is(up.code, 0, up.stdout + up.stderr);
  t.deepEqual(
    up.lines.map((l) => l.component),
    allModules.map((m) => m.name),
  );
  for (const module of allModules) {
    const db = openDatabase({ url: deriveDatabaseUrl(database.url, module.name) });
    try {
      t.deepEqual(await pendingMigrations(db, serviceMigrations(module, accessMigrations)), [], module.name);
    } finally {
      await db.destroy();
    }
  }
  const after = await run(allMigrate, ["status"], env);
  t.true(after.lines.every((l) => (l.pending as string[]).length === 0 && l.locked === false));

  const running = await startServices([...allModules], {
    mode: "all-in-one",
    env: { ...TEST_OPERATOR_ENV, ...env, GRPC_PORT: "0", MASTER_KEY, LOG_LEVEL: "silent", MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "1ms" },
  });
  await running.stop();
  const unlock = await run(allMigrate, ["unlock"], env);
  t.is(unlock.code, 0);
  t.true(unlock.lines.every((l) => l.wasLocked === false));
});

test("all-in-one on SQLite: migrates DATA_DIR/<service>.sqlite", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "migrate-cmd-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { DATA_DIR: dir, DATABASE_URL: "" };
  const up = await run(allMigrate, [], env);
  t.is(up.code, 0, up.stdout + up.stderr);
  for (const module of allModules) t.true(existsSync(join(dir, `${module.name}.sqlite`)), module.name);
  const status = await run(allMigrate, ["status"], env);
  t.is(status.code, 0);
  t.true(status.lines.every((l) => (l.pending as string[]).length === 0));
  const one = await run("services/bank-catalog/src/migrate.ts", ["status"], env);
  t.is(one.code, 0);
  t.like(one.lines[0], { component: bankCatalogModule.name, pending: [] });
});

for (const replicas of [2, 5]) {
  test.serial(`merchant: ${replicas} replicas started at the same moment on a fresh database all become ready (5 rounds)`, async (t) => {
    for (let round = 1; round <= 5; round++) {
      const database = await createTestDatabase();
      try {
        const starts = await Promise.allSettled(
          Array.from({ length: replicas }, () =>
            startServices([merchantModule], { mode: "split", env: { ...TEST_OPERATOR_ENV, DATABASE_URL: database.url, GRPC_PORT: "0", MASTER_KEY, LOG_LEVEL: "silent" } }),
          ),
        );
        const failures = starts.filter((s): s is PromiseRejectedResult => s.status === "rejected").map((s) => String((s.reason as Error).message));
        t.deepEqual(failures, [], `round ${round}`);
        await Promise.all(starts.filter((s): s is PromiseFulfilledResult<RunningServices> => s.status === "fulfilled").map((s) => s.value.stop()));
      } finally {
        await database.drop();
      }
    }
  });
}

// Least privilege (issue 32): the migrate step runs as a user with DDL rights and grants the
// service's runtime user its tables; the service then serves as that user, which cannot alter,
// truncate or drop the audit.

const bankCatalogMigrate = "services/bank-catalog/src/migrate.ts";

/** Refused for want of a privilege (the audit's triggers never even run). */
async function refusedAsRuntime(t: ExecutionContext, statement: Promise<unknown>, what: string): Promise<void> {
  const code = await statement.then(
    () => "succeeded",
    (err: unknown) => (err as { code?: string }).code ?? String(err),
  );
  t.true(["ER_TABLEACCESS_DENIED_ERROR", "ER_DBACCESS_DENIED_ERROR"].includes(code), `${what}: ${code}`);
}

/** The printed script, one statement a line, applied as root as a DBA would pipe it into a client. */
async function applyScript(url: string, script: string): Promise<number> {
  const statements = script.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("--"));
  await withServerConnection(url, async (admin) => {
    for (const statement of statements) await admin.raw(statement.replace(/;$/, ""));
  });
  return statements.length;
}

test("per service, least privilege: `migrate up --grant-to` as root; the service serves as its runtime user, audits a person's change, and may not truncate, alter or drop the audit or its triggers", async (t) => {
  const database = await createLeastPrivilegeDatabase();
  t.teardown(() => database.drop());
  // The job shares the service's settings: DATABASE_URL is the runtime user's, MIGRATE_DATABASE_URL root's.
  const up = await run(bankCatalogMigrate, ["up", "--grant-to", database.runtime.grantee], { DATABASE_URL: database.env.DATABASE_URL, MIGRATE_DATABASE_URL: database.url });
  t.is(up.code, 0, up.stdout + up.stderr);
  t.like(up.lines.at(-1), { grantee: database.runtime.grantee });
  t.true((up.lines.at(-1)?.grants as number) > 10);
  // What `grants` prints now is what `up` applied: a GRANT a table, nothing to take away.
  const printed = await run(bankCatalogMigrate, ["grants", "--user", database.runtime.grantee], { DATABASE_URL: database.env.DATABASE_URL, MIGRATE_DATABASE_URL: database.url });
  t.is(printed.code, 0, printed.stderr);
  t.regex(printed.stdout, new RegExp(`^GRANT SELECT, INSERT ON \`${database.name}\`\\.\`operator_audit\` TO `, "m"));
  t.regex(printed.stdout, new RegExp(`^GRANT SELECT, INSERT, UPDATE, DELETE ON \`${database.name}\`\\.\`banks\` TO `, "m"));
  t.notRegex(printed.stdout, /^REVOKE/m);

  const running = await startServices([bankCatalogModule], {
    mode: "split",
    env: { ...TEST_OPERATOR_ENV, DATABASE_URL: database.env.DATABASE_URL, GRPC_PORT: "0", LOG_LEVEL: "silent", MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "1ms" },
  });
  t.teardown(() => running.stop());
  const catalog = createServiceClient(BankCatalogService, running.server.url);
  const bank = (await catalog.listBanks({})).banks[0]!;
  await catalog.updateBank({ bankId: bank.id, name: `${bank.name} (renamed)` });

  const runtime = openDatabase({ url: database.env.DATABASE_URL, poolMax: 1 });
  t.teardown(() => runtime.destroy());
  const rows = await runtime("operator_audit").where("rpc", "like", "%UpdateBank").select("actor", "outcome");
  t.deepEqual(rows, [{ actor: TEST_ADMIN.subject, outcome: "ok" }], "the person's change appended its audit row as the runtime user");
  const before = await runtime("operator_audit").count<Array<{ n: number }>>({ n: "*" });

  await refusedAsRuntime(t, runtime.raw("TRUNCATE operator_audit"), "TRUNCATE");
  await refusedAsRuntime(t, runtime("operator_audit").del(), "DELETE");
  await refusedAsRuntime(t, runtime("operator_audit").update({ actor: "someone else" }), "UPDATE");
  await refusedAsRuntime(t, runtime.raw("ALTER TABLE operator_audit DROP COLUMN actor"), "ALTER TABLE");
  await refusedAsRuntime(t, runtime.raw("DROP TABLE operator_audit"), "DROP TABLE");
  await refusedAsRuntime(t, runtime.raw("DROP TRIGGER operator_audit_no_delete"), "DROP TRIGGER");
  await refusedAsRuntime(t, runtime.raw("CREATE TABLE operator_audit_copy (id INT)"), "CREATE TABLE");
  t.deepEqual(await runtime("operator_audit").count<Array<{ n: number }>>({ n: "*" }), before, "the audit is as it was");
});

test("`migrate grants --user` prints SQL (nothing applied) that applies cleanly, for every database of the all-in-one", async (t) => {
  const database = await createTestDatabase();
  const runtime = await createTestDatabaseUser();
  t.teardown(async () => {
    await database.drop();
    await runtime.drop();
  });
  const env = { DATABASE_URL: database.url };
  const notYet = await run(allMigrate, ["grants", "--user", runtime.grantee], env);
  t.is(notYet.code, 1);
  t.regex(notYet.stderr, /does not exist yet: run `migrate up` first/);
  t.is(notYet.stdout, "", "nothing on stdout when it fails");
  t.is((await run(allMigrate, ["up"], env)).code, 0);

  const printed = await run(allMigrate, ["grants", "--user", runtime.grantee], env);
  t.is(printed.code, 0, printed.stderr);
  t.true(printed.stdout.split("\n").every((line) => line === "" || line.startsWith("--") || /^(GRANT|REVOKE) .+;$/.test(line)), printed.stdout);
  for (const module of allModules) {
    const name = `${database.name}_${module.name.replace(/-/g, "_")}`;
    t.regex(printed.stdout, new RegExp(`^GRANT SELECT, INSERT ON \`${name}\`\\.\`operator_audit\` TO ${runtime.grantee.replace(/[%']/g, ".")};$`, "m"), module.name);
    t.regex(printed.stdout, new RegExp(`^GRANT SELECT ON \`${name}\`\\.\`knex_migrations\` TO `, "m"));
  }
  t.notRegex(printed.stdout, /ALTER|DROP|CREATE [^U]|TRIGGER|INDEX|GRANT OPTION|ALL PRIVILEGES/, "no DDL right is ever granted");
  // Nothing was applied: the user still holds no table.
  const held = () => withServerConnection(database.url, (admin) => admin("information_schema.TABLE_PRIVILEGES").where("GRANTEE", runtime.grantee).count<Array<{ n: number }>>({ n: "*" }));
  t.deepEqual(await held(), [{ n: 0 }]);

  t.true((await applyScript(database.url, printed.stdout)) > 5 * 10);
  t.true((await held())[0]!.n > 0);
  // The all-in-one starts as that user (MIGRATE_ON_START=0: it reads knex_migrations, and serves).
  const running = await startServices([...allModules], {
    mode: "all-in-one",
    env: { ...TEST_OPERATOR_ENV, DATABASE_URL: runtime.urlFor(database.url), GRPC_PORT: "0", MASTER_KEY, LOG_LEVEL: "silent", MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "1ms" },
  });
  await running.stop();
  // Printed again, the same grants: nothing to take away.
  const again = await run(allMigrate, ["grants", "--user", runtime.grantee], env);
  t.is(again.stdout, printed.stdout);
});

test("migrate command, least privilege: usage errors (2), SQLite (1), and a runtime user with rights on the whole database refused before anything is migrated (1)", async (t) => {
  const database = await createLeastPrivilegeDatabase();
  t.teardown(() => database.drop());
  for (const args of [["grants"], ["grants", "--grant-to", "x"], ["status", "--grant-to", "x"], ["up", "--user", "x"], ["grants", "--user", "it's"], ["up", "--grant-to"], ["up", "--sideways"]]) {
    const usage = await run(merchantMigrate, args, { DATABASE_URL: database.url });
    t.is(usage.code, 2, args.join(" "));
    t.regex(usage.stderr, /usage: migrate/);
  }
  const sqlite = await run(merchantMigrate, ["grants", "--user", "svc"], { DATABASE_URL: "", DATA_DIR: mkdtempSync(join(tmpdir(), "migrate-grants-")) });
  t.is(sqlite.code, 1);
  t.regex(sqlite.stderr, /SQLite has no database users/);

  await withServerConnection(database.url, (admin) => admin.raw(`GRANT ALL PRIVILEGES ON ??.* TO ${database.runtime.grantee}`, [database.name]));
  const broad = await run(merchantMigrate, ["up", "--grant-to", database.runtime.grantee], { DATABASE_URL: database.url });
  t.is(broad.code, 1);
  t.true(broad.lines.some((l) => l.level === "error" && /holds privileges on more than its tables.*REVOKE SELECT, .*ALTER, .* ON `pgt_[0-9a-f]+`\.\* FROM/.test(String(l.msg))), broad.stdout);
  const status = await run(merchantMigrate, ["status"], { DATABASE_URL: database.url });
  t.like(status.lines[0], { databaseExists: false }, "nothing was created");
});
