import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import type { Knex } from "knex";
import { ensureDatabase, migrate, openDatabase, outboxMigration } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { merchantsMigration } from "../src/migrations/20261122000000_merchants.js";
import { webhookSecretsMigration } from "../src/migrations/20261124000000_webhook_secrets.js";
import { paymentRulesMigration } from "../src/migrations/20261125000000_payment_rules.js";
import { migrations } from "../src/migrations/index.js";
import { toMerchantRecord, type MerchantRow } from "../src/store.js";
import { toMerchantMessage } from "../src/merchant-message.js";

/** A merchant made before the paid-amount rules existed gets the defaults from the column defaults. */
async function existingMerchantGetsDefaults(t: import("ava").ExecutionContext, db: Knex): Promise<void> {
  await migrate(db, [outboxMigration, merchantsMigration, webhookSecretsMigration]);
  const now = Date.now();
  await db("merchants").insert({ id: "mer_old", name: "Old Shop", status: "active", sandbox: false, api_key: "pk_old", allowed_ips: "[]", callback_url: null, created_at: now, updated_at: now });

  const applied = await migrate(db, [outboxMigration, merchantsMigration, webhookSecretsMigration, paymentRulesMigration]);
  t.deepEqual(applied, ["20261125000000_payment_rules"]);
  const row = (await db("merchants").where({ id: "mer_old" }).first()) as Record<string, unknown>;
  t.like(row, { underpayment: "review", overpayment: "complete", late_payment: "review" });

  // Every later migration too: the merchant still reads with the defaults, and its display name is its name.
  await migrate(db, [outboxMigration, ...migrations]);
  const current = (await db<MerchantRow>("merchants").where({ id: "mer_old" }).first())!;
  const record = toMerchantRecord(current);
  t.deepEqual(record.paymentRules, { underpayment: "review", overpayment: "complete", latePayment: "review" });
  t.is(current.display_name, null);
  t.is(toMerchantMessage(record, [], now).displayName, "Old Shop", "a merchant made before display names shows its name");
}

test("SQLite: merchants made before the paid-amount rules get the defaults (review, complete, review), and before display names show their name", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "merchant-rules-"));
  const db = openDatabase({ sqliteFile: join(dir, "merchant.db") });
  try {
    await existingMerchantGetsDefaults(t, db);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("MySQL: merchants made before the paid-amount rules get the defaults (review, complete, review), and before display names show their name", async (t) => {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  try {
    await existingMerchantGetsDefaults(t, db);
  } finally {
    await db.destroy();
    await database.drop();
  }
});
