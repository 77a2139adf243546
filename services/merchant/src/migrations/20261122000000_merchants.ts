import type { Migration } from "@payments/kit";

export const merchantsMigration: Migration = {
  name: "20261122000000_merchants",
  async up(db) {
    await db.schema.createTable("merchants", (t) => {
      t.string("id", 64).primary();
      t.string("name", 200).notNullable();
      t.string("status", 16).notNullable();
      t.boolean("sandbox").notNullable().defaultTo(false);
      t.string("api_key", 64).notNullable().unique("merchants_api_key");
      // JSON array of normalised IPs and CIDRs.
      t.text("allowed_ips").notNullable();
      t.text("callback_url").nullable();
      // null: the gateway default; 0: no limit.
      t.integer("rate_limit_per_second").nullable();
      t.integer("rate_limit_burst").nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      // ListMerchants pages through (created_at, id).
      t.index(["created_at", "id"], "merchants_created");
    });
    await db.schema.createTable("merchant_secrets", (t) => {
      t.string("id", 64).primary();
      t.string("merchant_id", 64).notNullable().references("id").inTable("merchants").onDelete("CASCADE");
      // 1 for the first secret, +1 per rotation: orders secrets even when created in the same millisecond.
      t.integer("generation").notNullable();
      t.text("sealed").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("expires_at").nullable();
      t.unique(["merchant_id", "generation"], { indexName: "merchant_secrets_generation" });
    });
  },
  async down(db) {
    await db.schema.dropTable("merchant_secrets");
    await db.schema.dropTable("merchants");
  },
};
