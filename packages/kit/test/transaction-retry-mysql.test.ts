import test from "ava";
import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { ensureDatabase, errorInfo, openDatabase, readCommitted, repeatableRead, runTransaction, transactionWithRetry } from "../src/index.js";
import { createTestDatabase } from "@payments/testing";

// transactionWithRetry on a real MariaDB/MySQL: a deadlock is run again inside the service,
// never handed to the caller as a driver error.

let db: Knex;
let dbUrl: string;
let drop: (() => Promise<void>) | undefined;

test.before(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  dbUrl = database.url;
  await ensureDatabase(database.url);
  db = openDatabase({ url: database.url, poolMax: 4 });
  await db.schema.createTable("rows", (t) => {
    t.string("id", 8).primary();
    t.integer("n").notNullable();
  });
  await db("rows").insert([
    { id: "a", n: 0 },
    { id: "b", n: 0 },
  ]);
  // runTransaction's own (issue 22), apart from the rows the deadlock tests count.
  await db.schema.createTable("rt_rows", (t) => {
    t.string("id", 8).primary();
    t.integer("n").notNullable();
  });
});

// Unset when the before hook failed.
test.after.always(async () => {
  await (db as Knex | undefined)?.destroy();
  await drop?.();
});

/** Two transactions that lock a and b in opposite orders, each waiting for the other to hold its first row. */
async function crossedUpdates(): Promise<[number, number]> {
  let held = 0;
  const bothHold = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (held === 2) {
        clearInterval(check);
        resolve();
      }
    }, 2);
  });
  let attemptsA = 0;
  let attemptsB = 0;
  const run = (first: string, second: string, count: () => void) =>
    transactionWithRetry(db, async (trx) => {
      count();
      await trx("rows").where({ id: first }).increment("n", 1);
      held++;
      // Only the first attempts cross: a retry runs alone once the other committed.
      if (held <= 2) await bothHold;
      await trx("rows").where({ id: second }).increment("n", 1);
    });
  await Promise.all([run("a", "b", () => attemptsA++), run("b", "a", () => attemptsB++)]);
  return [attemptsA, attemptsB];
}

test("a real deadlock is retried inside the call: both changes land, one of them on a second attempt", async (t) => {
  const [a, b] = await crossedUpdates();
  t.is(a + b, 3, "exactly one of the two transactions was run again");
  const rows = (await db("rows").orderBy("id")) as Array<{ id: string; n: number }>;
  t.deepEqual(
    rows.map((r) => Number(r.n)),
    [2, 2],
  );
});

test("conflicts that outlast every attempt are UNAVAILABLE DATABASE_BUSY, not the driver's error", async (t) => {
  let runs = 0;
  const err = await t.throwsAsync(
    transactionWithRetry(
      db,
      async () => {
        runs++;
        throw Object.assign(new Error("Deadlock found when trying to get lock"), { code: "ER_LOCK_DEADLOCK" });
      },
      { attempts: 3 },
    ),
  );
  t.is(runs, 3);
  t.like(errorInfo(err), { code: Code.Unavailable, reason: "DATABASE_BUSY" });
  t.false(errorInfo(err).message.includes("Deadlock"), "no driver text in what the caller sees");
});

test("retryOn runs it again for a reason of the caller's, without spending an attempt", async (t) => {
  let runs = 0;
  const result = await transactionWithRetry(
    db,
    async (trx) => {
      runs++;
      if (runs < 4) throw new Error("stale");
      return await trx("rows").where({ id: "a" }).first<{ id: string }>("id");
    },
    { attempts: 1, retryOn: (err) => (err as Error).message === "stale", config: readCommitted(db) },
  );
  t.is(runs, 4);
  t.deepEqual(result, { id: "a" });
});

test("a database opened with readCommitted runs its sessions at READ COMMITTED, so its transactions ask nothing; repeatableRead still gets one snapshot", async (t) => {
  const rc = openDatabase({ url: dbUrl, poolMax: 1, readCommitted: true });
  await db.schema.createTable("snap", (tb) => {
    tb.string("id", 8).primary();
    tb.integer("n").notNullable();
  });
  await db("snap").insert({ id: "x", n: 1 });
  try {
    t.is(readCommitted(rc), undefined, "nothing to SET per transaction");
    t.deepEqual(readCommitted(db), { isolationLevel: "read committed" }, "a database without it still asks");
    // Reads twice with a commit by another connection in between: a snapshot sees the first value again.
    const twice = (config?: Knex.TransactionConfig) =>
      rc.transaction(async (trx) => {
        const first = Number((await trx("snap").where({ id: "x" }).first<{ n: number }>("n")).n);
        await db("snap").where({ id: "x" }).increment("n", 1);
        const second = Number((await trx("snap").where({ id: "x" }).first<{ n: number }>("n")).n);
        return second - first;
      }, config);
    t.is(await twice(), 1, "READ COMMITTED: the second read sees the other commit");
    t.is(await twice(repeatableRead(rc)), 0, "REPEATABLE READ: one snapshot");
  } finally {
    await rc.destroy();
  }
});

// Issue 22: on MySQL the hot transactions run on one pooled connection with the database's
// builders bound to it, not knex's transaction object; what they can do must not change.

test("runTransaction: commits what fn did, rolls all of it back when fn throws, and gives the connection back either way", async (t) => {
  await runTransaction(db, async (trx) => {
    await trx("rt_rows").insert({ id: "rt1", n: 1 });
    await trx.raw("UPDATE `rt_rows` SET n = n + 1 WHERE id = ?", ["rt1"]);
  });
  t.is(((await db("rt_rows").where({ id: "rt1" }).first()) as { n: number }).n, 2);
  await t.throwsAsync(
    runTransaction(db, async (trx) => {
      await trx("rt_rows").insert({ id: "rt2", n: 1 });
      await trx("rt_rows").where({ id: "rt1" }).update({ n: 99 });
      throw new Error("changed my mind");
    }),
    { message: "changed my mind" },
  );
  t.is(await db("rt_rows").where({ id: "rt2" }).first(), undefined, "the insert rolled back");
  t.is(((await db("rt_rows").where({ id: "rt1" }).first()) as { n: number }).n, 2, "the update rolled back");
  // Far more transactions than the pool has connections: none was kept.
  await Promise.all(Array.from({ length: 20 }, (_, i) => runTransaction(db, (trx) => trx("rt_rows").where({ id: "rt1" }).update({ n: i }))));
  t.pass();
});

test("runTransaction: another session sees nothing before the commit; a row locked in it waits for the commit", async (t) => {
  await db("rt_rows").insert({ id: "rt3", n: 0 });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const first = runTransaction(db, async (trx) => {
    await trx("rt_rows").where({ id: "rt3" }).forUpdate().first();
    await trx("rt_rows").where({ id: "rt3" }).update({ n: 1 });
    locked();
    await held;
  });
  await isLocked;
  t.is(((await db("rt_rows").where({ id: "rt3" }).first()) as { n: number }).n, 0, "uncommitted, unseen");
  const second = runTransaction(db, async (trx) => {
    const row = (await trx("rt_rows").where({ id: "rt3" }).forUpdate().first()) as { n: number };
    await trx("rt_rows").where({ id: "rt3" }).update({ n: row.n + 10 });
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  release();
  await Promise.all([first, second]);
  t.is(((await db("rt_rows").where({ id: "rt3" }).first()) as { n: number }).n, 11, "the second waited for the first's lock and read its commit");
});

test("runTransaction: a query after the end, or a transaction inside, throws; the isolation level asked for holds", async (t) => {
  let kept: Knex.Transaction | undefined;
  await runTransaction(db, async (trx) => {
    kept = trx;
    await trx("rt_rows").first();
  });
  t.throws(() => kept!("rows"), { message: /has ended/ });
  await t.throwsAsync(runTransaction(db, async (trx) => trx.transaction(async () => undefined)), { message: /not supported/ });
  // READ COMMITTED asked for: a second read sees what another session committed in between.
  await db("rt_rows").insert({ id: "rt4", n: 0 });
  const reads = await runTransaction(
    db,
    async (trx) => {
      const before = ((await trx("rt_rows").where({ id: "rt4" }).first()) as { n: number }).n;
      await db("rt_rows").where({ id: "rt4" }).update({ n: 5 });
      const after = ((await trx("rt_rows").where({ id: "rt4" }).first()) as { n: number }).n;
      return [before, after];
    },
    { isolationLevel: "read committed" },
  );
  t.deepEqual(reads, [0, 5]);
});
