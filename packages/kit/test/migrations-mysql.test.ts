import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { Knex } from "knex";
import {
  createLogger,
  ensureDatabase,
  ensureMigrationTables,
  migrate,
  MigrationLockTimeoutError,
  openDatabase,
  pendingMigrations,
  PendingMigrationsError,
  serviceMigrations,
  startServices,
  unlockMigrations,
  type Migration,
  type RunningServices,
  type ServiceModule,
} from "../src/index.js";
import { createTestDatabase } from "@payments/testing";
import { openGuard } from "./fixtures/open-guard.js";

// Migrations against the real MariaDB: replicas starting at the same moment on a fresh
// database, a lock another process holds (or left behind), MIGRATE_ON_START=0.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service of tables only, whose migrations take a moment (so replicas overlap while one migrates). */
function probeMigrations(): Migration[] {
  return [
    {
      name: "20260101000000_a",
      async up(db) {
        await db.schema.createTable("probe_a", (t) => {
          t.string("id", 32).primary();
        });
        await sleep(150);
      },
    },
    {
      name: "20260101000001_b",
      async up(db) {
        await db.schema.createTable("probe_b", (t) => {
          t.string("id", 32).primary();
          t.bigInteger("n").notNullable();
        });
        await sleep(150);
      },
    },
  ];
}

const probeModule: ServiceModule = {
  name: "probe",
  services: [],
  migrations: probeMigrations(),
  createContext: (base) => base,
  access: () => [],
  routes: () => {},
};
// What a start applies: the kit's outbox, operator audit and approval tables, then the module's own.
const everyMigration = serviceMigrations(probeModule);

function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ service: "probe", level: "info", destination }), lines };
}

async function freshDatabase(t: { teardown(fn: () => Promise<void>): void }): Promise<{ url: string; db: Knex }> {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  return { url: database.url, db };
}

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: url, GRPC_PORT: "0", LOG_LEVEL: "warn", ...extra };
}

async function lockRows(db: Knex): Promise<Array<{ index: number; is_locked: number }>> {
  return await db("knex_migrations_lock").select<Array<{ index: number; is_locked: number }>>("index", "is_locked");
}

for (const replicas of [2, 5]) {
  test.serial(`${replicas} replicas started at the same moment on a fresh database all become ready (5 rounds)`, async (t) => {
    for (let round = 1; round <= 5; round++) {
      const database = await createTestDatabase();
      try {
        const starts = await Promise.allSettled(
          Array.from({ length: replicas }, () => startServices([probeModule], { guard: openGuard, mode: "split", env: env(database.url), logger: createLogger({ service: "probe", level: "silent" }) })),
        );
        const failures = starts.filter((s): s is PromiseRejectedResult => s.status === "rejected").map((s) => String((s.reason as Error).message));
        t.deepEqual(failures, [], `round ${round}`);
        await Promise.all(starts.filter((s): s is PromiseFulfilledResult<RunningServices> => s.status === "fulfilled").map((s) => s.value.stop()));
        const db = openDatabase({ url: database.url });
        try {
          const applied = await db("knex_migrations").select<Array<{ name: string }>>("name");
          t.deepEqual(applied.map((r) => r.name).sort(), everyMigration.map((m) => m.name).sort(), `round ${round}: each migration applied once`);
          t.deepEqual(await lockRows(db), [{ index: 1, is_locked: 0 }], `round ${round}: one lock row, free`);
        } finally {
          await db.destroy();
        }
      } finally {
        await database.drop();
      }
    }
  });
}

test("plain migrate() calls racing on a fresh database all succeed (the lock tables' creation races too)", async (t) => {
  const { url } = await freshDatabase(t);
  const dbs = Array.from({ length: 6 }, () => openDatabase({ url }));
  try {
    const results = await Promise.all(dbs.map((db) => migrate(db, everyMigration)));
    t.is(results.flat().length, everyMigration.length, "every migration applied by exactly one of them");
  } finally {
    await Promise.all(dbs.map((db) => db.destroy()));
  }
});

test("a stale lock makes a start wait, then fail with a clear error; unlocking lets the next start succeed", async (t) => {
  const { url, db } = await freshDatabase(t);
  await ensureMigrationTables(db);
  await db("knex_migrations_lock").update({ is_locked: 1 });
  const { logger, lines } = capturingLogger();
  const started = Date.now();
  const err = await t.throwsAsync(startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATION_LOCK_TIMEOUT: "1s" }), logger }), {
    instanceOf: MigrationLockTimeoutError,
  });
  t.true(Date.now() - started >= 900, "it waited for MIGRATION_LOCK_TIMEOUT");
  t.regex(err.message, /MIGRATION_LOCK_TIMEOUT=1s/);
  t.regex(err.message, /migrate unlock/);
  t.regex(err.message, /knex_migrations_lock/);
  t.is(lines.filter((l) => l.msg === "waiting for the migration lock held by another process").length, 1, "the wait is logged once");
  t.deepEqual(await pendingMigrations(db, everyMigration), everyMigration.map((m) => m.name), "nothing was applied");

  t.true(await unlockMigrations(db));
  t.false(await unlockMigrations(db), "a second unlock finds it free");
  const running = await startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATION_LOCK_TIMEOUT: "1s" }), logger });
  await running.stop();
  t.deepEqual(await pendingMigrations(db, everyMigration), []);
});

test("a start waits while another process holds the lock and goes on when it is released", async (t) => {
  const { url, db } = await freshDatabase(t);
  await ensureMigrationTables(db);
  await db("knex_migrations_lock").update({ is_locked: 1 });
  const release = sleep(800).then(() => db("knex_migrations_lock").update({ is_locked: 0 }));
  const started = Date.now();
  const running = await startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATION_LOCK_TIMEOUT: "20s" }), logger: createLogger({ service: "probe", level: "silent" }) });
  await release;
  t.true(Date.now() - started >= 700);
  await running.stop();
  t.deepEqual(await pendingMigrations(db, everyMigration), []);
  t.deepEqual(await lockRows(db), [{ index: 1, is_locked: 0 }]);
});

test("a stale lock does not block a start when nothing is pending", async (t) => {
  const { url, db } = await freshDatabase(t);
  await migrate(db, everyMigration);
  await db("knex_migrations_lock").update({ is_locked: 1 });
  const running = await startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATION_LOCK_TIMEOUT: "1s" }), logger: createLogger({ service: "probe", level: "silent" }) });
  await running.stop();
  t.pass();
});

test("two lock rows left by the old race are repaired", async (t) => {
  const { db } = await freshDatabase(t);
  await ensureMigrationTables(db);
  await db("knex_migrations_lock").insert({ index: 2, is_locked: 0 });
  t.is((await lockRows(db)).length, 2);
  t.is((await migrate(db, everyMigration)).length, everyMigration.length);
  t.deepEqual(await lockRows(db), [{ index: 1, is_locked: 0 }]);
});

test("pendingMigrations lists every migration on a fresh database (creating nothing), then none", async (t) => {
  const { db } = await freshDatabase(t);
  t.deepEqual(await pendingMigrations(db, everyMigration), everyMigration.map((m) => m.name));
  t.false(await db.schema.hasTable("knex_migrations"), "a read-only check");
  await migrate(db, everyMigration.slice(0, 1));
  t.deepEqual(await pendingMigrations(db, everyMigration), everyMigration.slice(1).map((m) => m.name));
  await migrate(db, everyMigration);
  t.deepEqual(await pendingMigrations(db, everyMigration), []);
});

test("MIGRATE_ON_START=0: a start refuses a database with pending migrations after MIGRATION_LOCK_TIMEOUT, migrating nothing", async (t) => {
  const { url, db } = await freshDatabase(t);
  const { logger, lines } = capturingLogger();
  const err = await t.throwsAsync(startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "500ms" }), logger }), {
    instanceOf: PendingMigrationsError,
  });
  t.regex(err.message, /20260101000001_b/);
  t.regex(err.message, /MIGRATE_ON_START=0/);
  t.regex(err.message, /migrate/);
  t.is(lines.filter((l) => String(l.msg).startsWith("waiting for pending migrations")).length, 1);
  t.false(await db.schema.hasTable("knex_migrations"), "it created nothing");
  t.false(await db.schema.hasTable("probe_a"));
});

test("MIGRATE_ON_START=0: a start waits for the migrate job, then becomes ready without migrating", async (t) => {
  const { url, db } = await freshDatabase(t);
  const job = sleep(500).then(() => migrate(db, everyMigration));
  const running = await startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "20s" }), logger: createLogger({ service: "probe", level: "silent" }) });
  t.is((await job).length, everyMigration.length, "the job applied them all");
  await running.stop();
  // Up to date: starts at once.
  const again = await startServices([probeModule], { guard: openGuard, mode: "split", env: env(url, { MIGRATE_ON_START: "0", MIGRATION_LOCK_TIMEOUT: "1ms" }), logger: createLogger({ service: "probe", level: "silent" }) });
  await again.stop();
});

test("a bad MIGRATE_ON_START or MIGRATION_LOCK_TIMEOUT is a configuration error", async (t) => {
  await t.throwsAsync(startServices([probeModule], { guard: openGuard, mode: "split", env: { GRPC_PORT: "0", MIGRATE_ON_START: "maybe" } }), { message: /MIGRATE_ON_START/ });
  await t.throwsAsync(startServices([probeModule], { guard: openGuard, mode: "split", env: { GRPC_PORT: "0", MIGRATION_LOCK_TIMEOUT: "soon" } }), { message: /MIGRATION_LOCK_TIMEOUT/ });
});

test("SQLite: migrate, pending, and the lock wait work there too", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "migrations-sqlite-"));
  const db = openDatabase({ sqliteFile: join(dir, "probe.sqlite") });
  t.teardown(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  t.is((await pendingMigrations(db, everyMigration)).length, everyMigration.length);
  t.is((await migrate(db, everyMigration)).length, everyMigration.length);
  t.deepEqual(await migrate(db, everyMigration), []);
  t.deepEqual(await pendingMigrations(db, everyMigration), []);
  const more: Migration = { name: "20260101000002_c", up: (k) => k.schema.createTable("probe_c", (tb) => tb.string("id")) };
  await db("knex_migrations_lock").update({ is_locked: 1 });
  await t.throwsAsync(migrate(db, [...everyMigration, more], { lockTimeoutMs: 200 }), { instanceOf: MigrationLockTimeoutError });
  t.true(await unlockMigrations(db));
  t.deepEqual(await migrate(db, [...everyMigration, more], { lockTimeoutMs: 200 }), ["20260101000002_c"]);
});
