import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { Knex } from "knex";
import { ensureDatabase, migrate, openDatabase, outboxMigration } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { apiKeysOf, findCredentialKey } from "../src/api-keys.js";
import { migrations } from "../src/migrations/index.js";
import { findMerchantWithCurrentSecret, findMerchantWithSecrets, validSecretsOf } from "../src/store.js";

const BEFORE_KEYS = migrations.filter((m) => m.name < "20261222000000");

/**
 * Merchants stored before keys had scopes: each one's key becomes its primary key with every
 * scope, its secrets (current and rotated-out, sealed values untouched) become that key's, and
 * what the gateway and the callback-sender read is what they read before.
 */
async function existingKeysKeepWorking(t: ExecutionContext, db: Knex): Promise<void> {
  await migrate(db, [outboxMigration, ...BEFORE_KEYS]);
  const now = Date.now();
  const merchant = (id: string, apiKey: string) => ({ id, name: `Shop ${id}`, status: "active", sandbox: false, api_key: apiKey, allowed_ips: "[]", callback_url: null, created_at: now - 1000, updated_at: now - 1000 });
  await db("merchants").insert([merchant("mer_a", "pk_a"), merchant("mer_b", "pk_b")]);
  const secret = (id: string, merchantId: string, generation: number, expiresAt: number | null) => ({ id, merchant_id: merchantId, generation, sealed: `v1.sealed-${id}`, created_at: now - 900, expires_at: expiresAt });
  await db("merchant_secrets").insert([secret("sec_a1", "mer_a", 1, now + 3_600_000), secret("sec_a2", "mer_a", 2, null), secret("sec_b1", "mer_b", 1, null)]);

  t.deepEqual(await migrate(db, [outboxMigration, ...migrations]), ["20261222000000_api_keys"]);

  const [key, ...others] = await apiKeysOf(db, "mer_a");
  t.deepEqual(others, []);
  t.like(key, { apiKey: "pk_a", merchantId: "mer_a", label: null, trusted: false, createdAt: now - 1000, createdBy: "", revokedAt: null });
  t.deepEqual(key!.scopes, ["read", "deposits", "withdrawals"], "every scope: the integration keeps working");
  const credentials = await findCredentialKey(db, "pk_a");
  t.like(credentials, { revoked: false, trusted: false });
  t.deepEqual(credentials!.scopes, ["read", "deposits", "withdrawals"]);

  const verifying = await validSecretsOf(db, "mer_a", "pk_a", now);
  t.deepEqual(verifying.map((s) => [s.id, s.sealed]), [["sec_a2", "v1.sealed-sec_a2"], ["sec_a1", "v1.sealed-sec_a1"]], "its secrets, rotated-out included, are the key's");
  t.deepEqual((await validSecretsOf(db, "mer_b", "pk_b", now)).map((s) => s.id), ["sec_b1"]);
  t.deepEqual((await findMerchantWithSecrets(db, "mer_a"))!.secrets.map((s) => s.id), ["sec_a2", "sec_a1"]);
  t.is((await findMerchantWithCurrentSecret(db, "mer_a", now))!.current?.id, "sec_a2", "callbacks are signed with the same secret as before");
}

test("SQLite: every existing key becomes its merchant's primary key with every scope, and keeps its secrets", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "merchant-keys-"));
  const db = openDatabase({ sqliteFile: join(dir, "merchant.db") });
  try {
    await existingKeysKeepWorking(t, db);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("MySQL: every existing key becomes its merchant's primary key with every scope, and keeps its secrets", async (t) => {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url });
  try {
    await existingKeysKeepWorking(t, db);
  } finally {
    await db.destroy();
    await database.drop();
  }
});
