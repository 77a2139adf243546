import test from "ava";
import type { Knex } from "knex";
import { ensureDatabase, hotQuery, migrate, openDatabase, runTransaction, statementChanged, transactionWithRetry, withCommitParticipant, withoutCommitParticipant, type CommitParticipant } from "../src/index.js";
import { createTestDatabase } from "@payments/testing";

// The commit hook: while a call has a participant, the first transaction that changed a row
// offers it the open transaction before COMMIT, on every path a service opens one (the kit's
// runTransaction, knex's own db.transaction), on MySQL and SQLite; a read offers nothing.

test("a statement changed rows when it writes and its answer does not say 0", (t) => {
  t.false(statementChanged("select * from t", [{ a: 1 }]));
  t.false(statementChanged("SELECT 1 FOR UPDATE", []));
  t.false(statementChanged("BEGIN", undefined));
  t.true(statementChanged("insert into `t` (`a`) values (?)", [0]), "knex's insert ids (0 without auto-increment)");
  t.true(statementChanged("  INSERT INTO t VALUES (1)", { affectedRows: 1 }));
  t.false(statementChanged("insert ignore into t values (1)", [{ affectedRows: 0 }, undefined]), "mysql2's header, in knex's raw wrapper");
  t.true(statementChanged("update `t` set `a` = ?", 2));
  t.false(statementChanged("update `t` set `a` = ? where 0", 0));
  t.false(statementChanged("delete from t where 0", { changes: 0, lastInsertRowid: 0 }), "better-sqlite3's run()");
  t.true(statementChanged("delete from t", { changes: 3 }));
  t.true(statementChanged("replace into t values (1)", undefined), "a write whose answer says nothing counts");
});

class Recorder implements CommitParticipant {
  offered = 0;
  committedCount = 0;
  rolledBackCount = 0;
  constructor(
    private readonly db: Knex,
    private readonly write: boolean,
    private readonly fail = false,
  ) {}
  async beforeCommit(trx: Knex.Transaction, db: Knex): Promise<boolean> {
    if (db !== this.db) return false;
    this.offered++;
    if (this.fail) throw new Error("participant refused");
    if (this.write) await trx("hook_rows").insert({ name: `participant-${this.offered}` });
    return this.write;
  }
  committed(): void {
    this.committedCount++;
  }
  rolledBack(): void {
    this.rolledBackCount++;
  }
}

async function names(db: Knex): Promise<string[]> {
  return ((await db("hook_rows").select("name").orderBy("name")) as Array<{ name: string }>).map((r) => r.name);
}

for (const dialect of ["mysql", "sqlite"] as const) {
  test.serial(`${dialect}: the first transaction that changed something offers the participant its transaction before COMMIT; reads and no-op updates offer nothing`, async (t) => {
    let db: Knex;
    let drop = () => Promise.resolve();
    if (dialect === "mysql") {
      const database = await createTestDatabase();
      await ensureDatabase(database.url);
      db = openDatabase({ url: database.url });
      drop = () => database.drop();
    } else db = openDatabase({ sqliteFile: ":memory:" });
    try {
      await migrate(db, [{ name: "20990101000000_hook_rows", up: (d) => d.schema.createTable("hook_rows", (tb) => void tb.string("name", 100).primary()) }]);
      const ways: Record<string, (fn: (trx: Knex.Transaction) => Promise<unknown>) => Promise<unknown>> = {
        runTransaction: (fn) => runTransaction(db, fn),
        transactionWithRetry: (fn) => transactionWithRetry(db, fn),
        "db.transaction": (fn) => db.transaction(fn),
      };
      for (const [way, run] of Object.entries(ways)) {
        await db("hook_rows").del();
        const p = new Recorder(db, true);
        await withCommitParticipant(p, async () => {
          await run((trx) => trx("hook_rows").select("*"));
          await run((trx) => trx("hook_rows").where({ name: "nobody" }).update({ name: "still nobody" }));
          await run((trx) => hotQuery(trx, "SELECT 1 AS one", []));
          t.is(p.offered, 0, `${way}: a read, a no-op UPDATE`);
          await run((trx) => trx("hook_rows").insert({ name: `${way}-change` }));
          t.is(p.offered, 1, `${way}: the change`);
          t.is(p.committedCount, 1);
          await run((trx) => hotQuery(trx, "INSERT INTO hook_rows (name) VALUES (?)", [`${way}-hot`]));
          t.is(p.offered, 2, `${way}: a hot statement's change counts`);
        });
        t.deepEqual(await names(db), [`${way}-change`, `${way}-hot`, "participant-1", "participant-2"].sort(), way);
      }
      // No participant: nothing offered, nothing written beside the change.
      await db("hook_rows").del();
      const idle = new Recorder(db, true);
      await runTransaction(db, (trx) => trx("hook_rows").insert({ name: "alone" }));
      await withCommitParticipant(idle, () => withoutCommitParticipant(() => runTransaction(db, (trx) => trx("hook_rows").insert({ name: "without" }))));
      t.is(idle.offered, 0);
      t.deepEqual(await names(db), ["alone", "without"]);
    } finally {
      await db.destroy();
      await drop();
    }
  });

  test.serial(`${dialect}: a participant that throws rolls the change back; one that declines is not told how it ended; a nested transaction is not offered apart`, async (t) => {
    let db: Knex;
    let drop = () => Promise.resolve();
    if (dialect === "mysql") {
      const database = await createTestDatabase();
      await ensureDatabase(database.url);
      db = openDatabase({ url: database.url });
      drop = () => database.drop();
    } else db = openDatabase({ sqliteFile: ":memory:" });
    try {
      await migrate(db, [{ name: "20990101000000_hook_rows", up: (d) => d.schema.createTable("hook_rows", (tb) => void tb.string("name", 100).primary()) }]);
      for (const run of [(fn: (trx: Knex.Transaction) => Promise<unknown>) => runTransaction(db, fn), (fn: (trx: Knex.Transaction) => Promise<unknown>) => db.transaction(fn)]) {
        const failing = new Recorder(db, true, true);
        await t.throwsAsync(withCommitParticipant(failing, () => run((trx) => trx("hook_rows").insert({ name: "refused" }))), { message: "participant refused" });
        t.deepEqual(await names(db), [], "the change rolled back with the participant's refusal");
        const declining = new Recorder(db, false);
        await withCommitParticipant(declining, () => run((trx) => trx("hook_rows").insert({ name: "declined" })));
        t.deepEqual([declining.offered, declining.committedCount, declining.rolledBackCount], [1, 0, 0]);
        await db("hook_rows").del();
      }
      // The participant's own write fails (its row clashes with the change's): the change rolls back with it.
      const told = new Recorder(db, true);
      await t.throwsAsync(
        withCommitParticipant(told, () =>
          db.transaction(async (trx) => {
            await trx("hook_rows").insert({ name: "participant-1" });
          }),
        ),
        { any: true },
      );
      t.deepEqual([told.offered, told.committedCount, told.rolledBackCount], [1, 0, 0]);
      t.deepEqual(await names(db), []);
      // Nested: offered once, by the outer transaction.
      const nested = new Recorder(db, true);
      await withCommitParticipant(nested, () => db.transaction(async (trx) => trx.transaction(async (inner) => inner("hook_rows").insert({ name: "inner" }))));
      t.is(nested.offered, 1);
      t.deepEqual(await names(db), ["inner", "participant-1"]);
    } finally {
      await db.destroy();
      await drop();
    }
  });
}
