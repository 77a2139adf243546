import type { Migration } from "@payments/kit";

/**
 * Transfer returns: an incoming transfer's money paid back to its sender. A table of its own,
 * not rows of `withdrawals`: a return belongs to no merchant and moves no balance, and a
 * withdrawal's every move posts to the ledger.
 *
 * One row per attempt: (transfer_id, attempt) is unique, and a new attempt is created only
 * once the latest one failed, so at most one return of a transfer is ever open and two racing
 * creations of the same attempt meet the index (the loser answers the winner's row).
 */
export const transferReturnsMigration: Migration = {
  name: "20261126010000_transfer_returns",
  async up(db) {
    await db.schema.createTable("transfer_returns", (t) => {
      t.string("id", 40).primary();
      t.string("transfer_id", 40).notNullable();
      t.integer("attempt").notNullable();
      t.string("status", 16).notNullable();
      t.bigInteger("amount").notNullable();
      t.string("currency", 3).notNullable();
      t.string("iban", 34).notNullable();
      t.string("recipient_name", 200).notNullable();
      t.boolean("sandbox").notNullable();
      t.string("reason", 500).notNullable();
      t.string("actor", 200).notNullable();
      t.string("failure_reason", 100).nullable();
      // The worker's bookkeeping, as on withdrawals.
      t.bigInteger("dispatched_at").nullable();
      t.integer("dispatch_attempts").notNullable().defaultTo(0);
      t.string("bank_reference", 100).nullable();
      t.boolean("awaiting_operator").notNullable().defaultTo(false);
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.bigInteger("completed_at").nullable();
      t.unique(["transfer_id", "attempt"], { indexName: "transfer_returns_transfer_attempt_unique" });
      t.index(["status", "created_at"], "transfer_returns_status_created");
      t.index(["status", "awaiting_operator", "dispatched_at"], "transfer_returns_overdue_dispatch");
      t.index(["created_at", "id"], "transfer_returns_created");
    });
  },
  async down(db) {
    await db.schema.dropTable("transfer_returns");
  },
};
