import type { Migration } from "@payments/kit";

/**
 * The catalog tables. Amounts are BIGINT kuruş and times BIGINT epoch milliseconds, which
 * both dialects return as numbers.
 */
export const catalogMigration: Migration = {
  name: "20261122020000_catalog",
  async up(db) {
    await db.schema.createTable("banks", (t) => {
      t.string("id", 40).primary();
      t.string("name", 200).notNullable();
      t.string("code", 20).notNullable().unique({ indexName: "banks_code_unique" });
      t.string("logo_url", 500).notNullable().defaultTo("");
      t.boolean("active").notNullable().defaultTo(true);
      t.bigInteger("min_amount").notNullable();
      t.bigInteger("max_amount").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
    });

    // Exactly one row (id 1), created here so readers never meet an empty table.
    await db.schema.createTable("fast_settings", (t) => {
      t.integer("id").primary();
      t.boolean("enabled").notNullable();
      t.bigInteger("min_amount").notNullable();
      t.bigInteger("max_amount").notNullable();
      t.bigInteger("updated_at").notNullable();
    });
    await db("fast_settings").insert({ id: 1, enabled: false, min_amount: 100, max_amount: 10_000_000, updated_at: Date.now() });

    // bank_id is a bank id or "FAST", so it has no foreign key.
    await db.schema.createTable("merchant_limits", (t) => {
      t.string("merchant_id", 100).notNullable();
      t.string("bank_id", 40).notNullable();
      t.boolean("enabled").nullable();
      t.bigInteger("min_amount").nullable();
      t.bigInteger("max_amount").nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.primary(["merchant_id", "bank_id"]);
    });

    await db.schema.createTable("receiving_accounts", (t) => {
      t.string("id", 40).primary();
      t.string("bank_id", 40).notNullable().references("id").inTable("banks").withKeyName("receiving_accounts_bank_fk");
      t.string("account_name", 200).notNullable();
      t.string("iban", 34).notNullable().unique({ indexName: "receiving_accounts_iban_unique" });
      t.boolean("active").notNullable().defaultTo(true);
      t.boolean("fast_enabled").notNullable().defaultTo(false);
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.index(["bank_id"], "receiving_accounts_bank");
      t.index(["fast_enabled", "active"], "receiving_accounts_fast");
    });
  },
  async down(db) {
    await db.schema.dropTable("receiving_accounts");
    await db.schema.dropTable("merchant_limits");
    await db.schema.dropTable("fast_settings");
    await db.schema.dropTable("banks");
  },
};
