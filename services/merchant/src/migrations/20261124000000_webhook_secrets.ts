import type { Migration } from "@payments/kit";

/**
 * Standard Webhooks secrets (`whsec_…`), one generation per rotation, sealed like the API
 * secrets. Merchants made before this migration get none here: a callback signed with a
 * secret its merchant was never shown could not be verified and would only confuse, so
 * theirs stay without webhook-* headers until an operator issues one
 * (`cli merchant rotate-webhook-secret`), which shows it once like any other.
 */
export const webhookSecretsMigration: Migration = {
  name: "20261124000000_webhook_secrets",
  async up(db) {
    await db.schema.createTable("merchant_webhook_secrets", (t) => {
      t.string("id", 64).primary();
      t.string("merchant_id", 64).notNullable().references("id").inTable("merchants").onDelete("CASCADE");
      // 1 for the first secret, +1 per rotation: orders secrets even when created in the same millisecond.
      t.integer("generation").notNullable();
      t.text("sealed").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("expires_at").nullable();
      t.unique(["merchant_id", "generation"], { indexName: "merchant_webhook_secrets_generation" });
    });
  },
  async down(db) {
    await db.schema.dropTable("merchant_webhook_secrets");
  },
};
