import test from "ava";
import { Code } from "@connectrpc/connect";
import type { Knex } from "knex";
import { ensureDatabase, errorInfo, openDatabase, readCommitted, repeatableRead, transactionWithRetry } from "../src/index.js";
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
