import type { Migration } from "@payments/kit";

/**
 * Deposits and the incoming transfers reported against the receiving accounts. Amounts
 * are BIGINT kuruş and times BIGINT epoch milliseconds, which both dialects return as
 * numbers.
 */
export const depositsMigration: Migration = {
  name: "20261122030000_deposits",
  async up(db) {
    await db.schema.createTable("deposits", (t) => {
      t.string("id", 40).primary();
      t.string("merchant_id", 100).notNullable();
      t.string("process_id", 50).notNullable();
      t.string("status", 16).notNullable();
      t.bigInteger("amount").notNullable();
      t.bigInteger("requested_amount").notNullable();
      t.string("currency", 3).notNullable();
      t.string("bank_id", 40).notNullable().defaultTo("");
      // A copy of the assigned account as it was at creation: the customer was shown these.
      t.string("account_id", 40).nullable();
      t.string("account_bank_id", 40).nullable();
      t.string("account_bank_name", 200).nullable();
      t.string("account_name", 200).nullable();
      t.string("account_iban", 34).nullable();
      t.string("reference", 16).notNullable();
      t.string("checkout_token", 64).notNullable();
      t.string("customer_id", 200).notNullable();
      t.string("customer_name", 200).notNullable();
      t.string("customer_username", 200).notNullable();
      t.text("metadata_json").nullable();
      t.string("failure_reason", 500).nullable();
      t.string("transfer_id", 40).nullable();
      t.integer("sequence").notNullable();
      t.boolean("sandbox").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.bigInteger("completed_at").nullable();
      // processId is unique per merchant: the index, not a read-then-write, decides a race.
      t.unique(["merchant_id", "process_id"], { indexName: "deposits_merchant_process_unique" });
      t.unique(["reference"], { indexName: "deposits_reference_unique" });
      t.unique(["checkout_token"], { indexName: "deposits_checkout_token_unique" });
      // The expiry job: pending deposits by expiry time.
      t.index(["status", "expires_at"], "deposits_status_expires");
      // Listing newest first, per merchant.
      t.index(["merchant_id", "created_at", "id"], "deposits_merchant_created");
      t.index(["created_at", "id"], "deposits_created");
      // Matching: the pending deposits on one account.
      t.index(["account_iban", "status"], "deposits_account_status");
    });

    await db.schema.createTable("incoming_transfers", (t) => {
      t.string("id", 40).primary();
      t.string("iban", 34).notNullable();
      t.string("bank_transaction_id", 100).notNullable();
      t.bigInteger("amount").notNullable();
      t.string("currency", 3).notNullable();
      t.string("sender_name", 200).notNullable();
      t.string("reference", 500).notNullable();
      t.string("deposit_id", 40).nullable();
      t.string("unmatched_reason", 500).nullable();
      t.bigInteger("reported_at").notNullable();
      // A bank transaction id is the bank's: unique per receiving account, so a report
      // delivered twice lands once.
      t.unique(["iban", "bank_transaction_id"], { indexName: "incoming_transfers_bank_tx_unique" });
      t.index(["deposit_id", "reported_at"], "incoming_transfers_unmatched");
    });
  },
  async down(db) {
    await db.schema.dropTable("incoming_transfers");
    await db.schema.dropTable("deposits");
  },
};
