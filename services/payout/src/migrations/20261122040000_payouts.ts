import type { Migration } from "@payments/kit";

/**
 * Withdrawals, balances and the ledger. Amounts are BIGINT kuruş and times BIGINT epoch
 * milliseconds. A balance row is the running sum of its ledger entries, kept in the same
 * transaction as each entry, so a conditional update on it can refuse an overdraft.
 */
export const payoutsMigration: Migration = {
  name: "20261122040000_payouts",
  async up(db) {
    await db.schema.createTable("withdrawals", (t) => {
      t.string("id", 40).primary();
      t.string("merchant_id", 100).notNullable();
      t.string("process_id", 50).notNullable();
      t.string("status", 16).notNullable();
      t.bigInteger("amount").notNullable();
      t.string("currency", 3).notNullable();
      t.string("bank_id", 40).notNullable().defaultTo("");
      t.string("account_name", 200).notNullable();
      t.string("iban", 34).notNullable();
      t.string("user_id", 200).notNullable();
      t.string("user_name", 200).notNullable();
      t.string("name", 200).notNullable();
      t.string("failure_reason", 100).nullable();
      t.integer("sequence").notNullable();
      // The worker's bookkeeping: when it last handed the withdrawal to the bank, how often,
      // and whether the bank accepted it without deciding (then it waits for an operator).
      t.bigInteger("dispatched_at").nullable();
      t.integer("dispatch_attempts").notNullable().defaultTo(0);
      t.string("bank_reference", 100).nullable();
      t.boolean("awaiting_operator").notNullable().defaultTo(false);
      t.bigInteger("created_at").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.bigInteger("completed_at").nullable();
      t.unique(["merchant_id", "process_id"], { indexName: "withdrawals_merchant_process_unique" });
      t.index(["status", "created_at"], "withdrawals_status_created");
      // The worker's scan for sends left without an answer.
      t.index(["status", "awaiting_operator", "dispatched_at"], "withdrawals_overdue_dispatch");
      t.index(["merchant_id", "created_at", "id"], "withdrawals_merchant_created");
      t.index(["created_at", "id"], "withdrawals_created");
    });

    await db.schema.createTable("balances", (t) => {
      t.string("merchant_id", 100).notNullable();
      t.string("currency", 3).notNullable();
      t.bigInteger("available").notNullable();
      t.bigInteger("held").notNullable();
      t.bigInteger("updated_at").notNullable();
      t.primary(["merchant_id", "currency"]);
    });

    await db.schema.createTable("ledger_entries", (t) => {
      t.bigIncrements("seq");
      t.string("id", 40).notNullable().unique({ indexName: "ledger_entries_id_unique" });
      t.string("merchant_id", 100).notNullable();
      t.string("currency", 3).notNullable();
      t.string("kind", 32).notNullable();
      t.bigInteger("available_delta").notNullable();
      t.bigInteger("held_delta").notNullable();
      t.string("transaction_id", 40).notNullable();
      t.string("reason", 500).nullable();
      t.bigInteger("created_at").notNullable();
      // One entry of a kind per transaction: a deposit is credited once, a withdrawal held,
      // released or settled once, however often its event or request arrives.
      t.unique(["kind", "transaction_id"], { indexName: "ledger_entries_kind_transaction_unique" });
      t.index(["merchant_id", "currency", "seq"], "ledger_entries_merchant");
    });
  },
  async down(db) {
    await db.schema.dropTable("ledger_entries");
    await db.schema.dropTable("balances");
    await db.schema.dropTable("withdrawals");
  },
};
