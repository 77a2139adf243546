import test from "ava";
import type { Knex } from "knex";
import { fromBinary } from "@bufbuild/protobuf";
import { MerchantChangedSchema } from "@payments/contracts/merchant";
import { ensureDatabase, hotQuery, migrate, openDatabase, outboxMigrations, recordEvents, runTransaction, sqlName } from "../src/index.js";
import { createTestDatabase, manualClock } from "@payments/testing";

// Issue 22: the hottest statements (a state move's UPDATE, an outbox row) are written out as SQL
// that reads the same on both dialects and, in a MySQL transaction of runTransaction, go straight
// to its connection. What they do must be what the builder did, on both dialects, in a
// transaction or not.

async function table(db: Knex): Promise<void> {
  await db.schema.createTable("hot", (t) => {
    t.string("id", 8).primary();
    t.string("status", 16).notNullable();
    t.bigInteger("amount").notNullable();
    t.boolean("late").notNullable().defaultTo(false);
    t.binary("payload").nullable();
  });
}

const suites: Array<[string, () => Promise<{ db: Knex; close(): Promise<void> }>]> = [
  [
    "mysql",
    async () => {
      const database = await createTestDatabase();
      await ensureDatabase(database.url);
      const db = openDatabase({ url: database.url, readCommitted: true });
      return { db, close: async () => (await db.destroy(), await database.drop()) };
    },
  ],
  [
    "sqlite",
    async () => {
      const db = openDatabase({ sqliteFile: ":memory:" });
      return { db, close: () => db.destroy() };
    },
  ],
];

for (const [name, open] of suites) {
  test(`${name}: a write gives the rows it changed and a SELECT its rows, in runTransaction, in knex's own transaction and alone; values go in as values`, async (t) => {
    const { db, close } = await open();
    t.teardown(close);
    await table(db);
    const insert = `INSERT INTO ${sqlName("hot")} (${["id", "status", "amount", "late", "payload"].map(sqlName).join(", ")}) VALUES (?, ?, ?, ?, ?)`;
    const payload = Buffer.from([0, 1, 2, 255, 39, 92]);
    await runTransaction(db, async (trx) => {
      t.is((await hotQuery(trx, insert, ["a", "pending", 1_500_000_000_000, true, payload])).changed, 1);
      // A value that looks like SQL stays a value.
      t.is((await hotQuery(trx, insert, ["b'; --", "pending", 2, false, null])).changed, 1);
    });
    await db.transaction(async (trx) => {
      t.is((await hotQuery(trx, insert, ["c", "pending", 3, false, null])).changed, 1);
    });
    const update = `UPDATE ${sqlName("hot")} SET ${sqlName("status")} = ? WHERE ${sqlName("id")} = ? AND ${sqlName("status")} = ?`;
    t.is((await hotQuery(db, update, ["done", "c", "pending"])).changed, 1);
    t.is((await hotQuery(db, update, ["done", "c", "pending"])).changed, 0, "conditional: nothing changed the second time");
    const rows = await runTransaction(db, async (trx) => (await hotQuery(trx, `SELECT * FROM ${sqlName("hot")} WHERE ${sqlName("id")} = ?`, ["a"])).rows);
    t.is(rows.length, 1);
    t.is(Number(rows[0]!.amount), 1_500_000_000_000);
    t.truthy(rows[0]!.late);
    t.deepEqual(Buffer.from(rows[0]!.payload as Uint8Array), payload);
    t.is(((await db("hot").where({ id: "b'; --" }).first()) as { status: string }).status, "pending");
  });

  test(`${name}: a statement of a transaction that fails is rolled back with the rest`, async (t) => {
    const { db, close } = await open();
    t.teardown(close);
    await table(db);
    await t.throwsAsync(
      runTransaction(db, async (trx) => {
        await hotQuery(trx, `INSERT INTO ${sqlName("hot")} (${sqlName("id")}, ${sqlName("status")}, ${sqlName("amount")}) VALUES (?, ?, ?)`, ["x", "pending", 1]);
        throw new Error("no");
      }),
    );
    t.is(await db("hot").where({ id: "x" }).first(), undefined);
  });
}

for (const [name, open] of suites) {
  test(`${name}: recordEvents writes several outbox rows in one statement, in order, each with its own event id in its payload`, async (t) => {
    const { db, close } = await open();
    t.teardown(close);
    await migrate(db, outboxMigrations);
    const clock = manualClock();
    const events = ["m1", "m2", "m3"].map((merchantId) => ({ topic: "merchant.v1.merchant_changed", schema: MerchantChangedSchema, init: { merchantId } }));
    const statements: string[] = [];
    db.on("query", (q: { sql: string }) => void statements.push(q.sql));
    const ids = await runTransaction(db, (trx) => recordEvents(trx, clock, events));
    t.is(statements.filter((sql) => /^insert into `outbox`/i.test(sql)).length, 1);
    t.is(new Set(ids).size, 3);
    const rows = (await db("outbox").orderBy("seq")) as Array<{ event_id: string; payload: Uint8Array; created_at: number }>;
    t.deepEqual(
      rows.map((r) => r.event_id),
      ids,
    );
    t.deepEqual(
      rows.map((r) => fromBinary(MerchantChangedSchema, new Uint8Array(r.payload))).map((m) => [m.eventId, m.merchantId]),
      ids.map((id, i) => [id, `m${i + 1}`]),
    );
    t.true(rows.every((r) => Number(r.created_at) === clock.now().getTime()));
    t.deepEqual(await recordEvents(db, clock, []), []);
  });
}

test("sqlName takes plain names only", (t) => {
  t.is(sqlName("deposits"), "`deposits`");
  t.throws(() => sqlName("a`b"));
  t.throws(() => sqlName("a b"));
  t.throws(() => sqlName(""));
});

test("mysql: hotQuery in runTransaction goes to its connection, announced as a query for listeners", async (t) => {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url, readCommitted: true });
  t.teardown(async () => (await db.destroy(), await database.drop()));
  await table(db);
  const seen: Array<{ sql: string; uid?: string }> = [];
  db.on("query", (q: { sql: string; __knexUid?: string }) => void seen.push({ sql: q.sql, uid: q.__knexUid }));
  await runTransaction(db, async (trx) => {
    await trx("hot").insert({ id: "k", status: "pending", amount: 1 });
    await hotQuery(trx, `UPDATE ${sqlName("hot")} SET ${sqlName("amount")} = ? WHERE ${sqlName("id")} = ?`, [2, "k"]);
  });
  t.deepEqual(
    seen.map((s) => s.sql.split(" ")[0]!.toUpperCase()),
    ["BEGIN", "INSERT", "UPDATE", "COMMIT"],
  );
  t.is(new Set(seen.map((s) => s.uid)).size, 1, "all on one connection");
  t.is(Number(((await db("hot").where({ id: "k" }).first()) as { amount: number }).amount), 2);
});
