import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { ensureDatabase, migrate, openDatabase, type Db } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { payoutsMigration } from "../src/migrations/20261122040000_payouts.js";
import { migrations } from "../src/migrations/index.js";

// The withdrawal's sandbox flag arrives on a table that already has rows: they are marked
// sandbox (until then every withdrawal went to the sandbox connector), and from then on a
// row must say what it is.

function oldRow(id: string, status: string) {
  return {
    id,
    merchant_id: "mer_1",
    process_id: id,
    status,
    amount: 100,
    currency: "TRY",
    account_name: "A B",
    iban: "TR330006100519786457841326",
    user_id: "u",
    user_name: "ab",
    name: "A B",
    sequence: 1,
    created_at: 1,
    updated_at: 1,
  };
}

async function proveBackfill(t: import("ava").ExecutionContext, db: Db): Promise<void> {
  await migrate(db, [payoutsMigration]);
  await db("withdrawals").insert([oldRow("wdr_old_pending", "pending"), oldRow("wdr_old_completed", "completed")]);
  await migrate(db, migrations);
  const rows = (await db("withdrawals").select("id", "sandbox").orderBy("id")) as Array<{ id: string; sandbox: number | boolean }>;
  t.deepEqual(
    rows.map((r) => [r.id, Boolean(r.sandbox)]),
    [
      ["wdr_old_completed", true],
      ["wdr_old_pending", true],
    ],
  );
  // No default any more: a row that does not say its kind is refused.
  await t.throwsAsync(db("withdrawals").insert(oldRow("wdr_new_unsaid", "pending")), { any: true });
  await db("withdrawals").insert({ ...oldRow("wdr_new_live", "pending"), sandbox: false });
  t.false(Boolean(((await db("withdrawals").where({ id: "wdr_new_live" }).first()) as { sandbox: number | boolean }).sandbox));
  // The rest of the table survived (SQLite rebuilds it for the change): its unique index still holds.
  await t.throwsAsync(db("withdrawals").insert({ ...oldRow("wdr_twin", "pending"), process_id: "wdr_old_pending", sandbox: false }), { any: true });
}

test("MySQL: withdrawals from before the sandbox column are backfilled as sandbox, and new rows must state their kind", async (t) => {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  try {
    await proveBackfill(t, db);
  } finally {
    await db.destroy();
    await database.drop();
  }
});

test("SQLite: the same backfill and the same refusal", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "payout-migration-"));
  const db = openDatabase({ sqliteFile: join(dir, "payout.sqlite") });
  try {
    await proveBackfill(t, db);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});
