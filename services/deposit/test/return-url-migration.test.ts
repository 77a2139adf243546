import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { Knex } from "knex";
import { ensureDatabase, migrate, openDatabase, outboxMigration } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { migrations } from "../src/migrations/index.js";
import { depositFromRow, type DepositRow } from "../src/store.js";

/** A deposit stored before return URLs existed has none: its Deposit message says "". */
async function depositFromBeforeHasNoReturnUrl(t: ExecutionContext, db: Knex): Promise<void> {
  const before = migrations.filter((m) => m.name < "20261127000000_return_url");
  await migrate(db, [outboxMigration, ...before]);
  const now = Date.now();
  await db("deposits").insert({
    id: "dep_old",
    merchant_id: "mer_old",
    process_id: "old-1",
    status: "pending",
    amount: 10_000,
    requested_amount: 10_000,
    currency: "TRY",
    reference: "ABCDEFGH",
    checkout_token: "tok_old_0123456789abcdef",
    customer_id: "c",
    customer_name: "Ayşe",
    customer_username: "ayse",
    sequence: 1,
    sandbox: true,
    expires_at: now + 60_000,
    created_at: now,
    updated_at: now,
  });
  const names = migrations.map((m) => m.name);
  t.deepEqual(await migrate(db, [outboxMigration, ...migrations]), names.slice(names.indexOf("20261127000000_return_url")), "the return URL migration and every later one");
  const row = (await db<DepositRow>("deposits").where({ id: "dep_old" }).first())!;
  t.is(row.return_url, null);
  t.is(depositFromRow(row).returnUrl, "");
}

test("SQLite: a deposit made before return URLs has none after the migration", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "deposit-return-url-"));
  const db = openDatabase({ sqliteFile: join(dir, "deposit.db") });
  try {
    await depositFromBeforeHasNoReturnUrl(t, db);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("MySQL: a deposit made before return URLs has none after the migration", async (t) => {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  try {
    await depositFromBeforeHasNoReturnUrl(t, db);
  } finally {
    await db.destroy();
    await database.drop();
  }
});
