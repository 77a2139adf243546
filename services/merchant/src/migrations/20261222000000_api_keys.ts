import type { Migration } from "@payments/kit";
import { API_KEY_SCOPES } from "@payments/access";

/**
 * Several API keys per merchant, each with its scopes, its trusted mark and its own secrets
 * (issue 32). Every merchant's existing key becomes its first row here with every scope (the
 * integrations signing with it keep working exactly as before) and stays its primary key
 * (`merchants.api_key`, which signs callbacks); its secrets, until now the merchant's, become
 * that key's. The secrets' column stays nullable (SQLite cannot add a NOT NULL column to a
 * table with rows without rebuilding it), but every row has a value from here on: this fills
 * the old ones and the service writes it on every new one.
 */
export const apiKeysMigration: Migration = {
  name: "20261222000000_api_keys",
  async up(db) {
    await db.schema.createTable("merchant_api_keys", (t) => {
      t.string("api_key", 64).primary();
      t.string("merchant_id", 64).notNullable().references("id").inTable("merchants").onDelete("CASCADE");
      // Null: the primary key made with the merchant, which pages name in their own language.
      t.string("label", 100).nullable();
      // JSON array of scope names (read, deposits, withdrawals).
      t.string("scopes", 200).notNullable();
      t.boolean("trusted").notNullable().defaultTo(false);
      t.bigInteger("created_at").notNullable();
      // The verified person who made it; empty when not known (the keys this migration adopts).
      t.string("created_by", 400).notNullable().defaultTo("");
      t.bigInteger("revoked_at").nullable();
      t.string("revoked_by", 400).nullable();
      t.index(["merchant_id", "created_at"], "merchant_api_keys_merchant");
    });
    await db.schema.alterTable("merchant_secrets", (t) => {
      t.string("api_key", 64).nullable();
      t.index(["api_key", "generation"], "merchant_secrets_api_key");
    });
    await db.raw(
      "INSERT INTO merchant_api_keys (api_key, merchant_id, label, scopes, trusted, created_at, created_by) SELECT api_key, id, NULL, ?, 0, created_at, '' FROM merchants",
      [JSON.stringify(API_KEY_SCOPES)],
    );
    await db.raw("UPDATE merchant_secrets SET api_key = (SELECT m.api_key FROM merchants m WHERE m.id = merchant_secrets.merchant_id)");
  },
  async down(db) {
    await db.schema.alterTable("merchant_secrets", (t) => {
      t.dropIndex(["api_key", "generation"], "merchant_secrets_api_key");
      t.dropColumn("api_key");
    });
    await db.schema.dropTable("merchant_api_keys");
  },
};
