import test from "ava";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { allModules } from "@payments/all-in-one";
import { bankCatalogModule } from "@payments/bank-catalog-service";
import { deriveDatabaseUrl, ensureDatabase, ensureMigrationTables, MigrationLockTimeoutError, openDatabase, pendingMigrations, serviceMigrations, type RunningServices } from "@payments/kit";
import { accessMigrations, startServices } from "@payments/access";
import { createTestDatabase, TEST_OPERATOR_ENV } from "@payments/testing";
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
  t.regex(usage.stderr, /usage: migrate \[up\|status\|unlock\]/);
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
  t.true(up.lines.some((l) => l.msg === "waiting for the migration lock held by another process"));
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
