import type { Migration } from "@payments/kit";

/**
 * Withheld credits: completed deposits the consumer did not credit (a sandbox deposit whose
 * merchant is live by then), each waiting for an operator's decision (src/withheld-credits.ts).
 *
 * deposit_id is unique: a repeated delivery of the deposit's event, or the same event on two
 * replicas at once, meets the index instead of creating a second record. The listing pages
 * newest first by (created_at, id), across merchants or for one, across statuses or for one.
 */
export const withheldCreditsMigration: Migration = {
  name: "20261127010000_withheld_credits",
  async up(db) {
    await db.schema.createTable("withheld_credits", (t) => {
      t.string("id", 40).primary();
      t.string("deposit_id", 40).notNullable();
      t.string("merchant_id", 100).notNullable();
      t.string("process_id", 50).notNullable();
      t.bigInteger("amount").notNullable();
      t.string("currency", 3).notNullable();
      t.string("reason", 200).notNullable();
      t.string("status", 16).notNullable();
      t.string("resolved_by", 100).nullable();
      t.string("resolution", 500).nullable();
      t.string("event_id", 100).notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("resolved_at").nullable();
      t.unique(["deposit_id"], { indexName: "withheld_credits_deposit_unique" });
      t.index(["created_at", "id"], "withheld_credits_created");
      t.index(["status", "created_at", "id"], "withheld_credits_status_created");
      t.index(["merchant_id", "created_at", "id"], "withheld_credits_merchant_created");
    });
  },
  async down(db) {
    await db.schema.dropTable("withheld_credits");
  },
};
