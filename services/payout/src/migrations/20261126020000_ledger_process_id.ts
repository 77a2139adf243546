import type { Migration } from "@payments/kit";

/**
 * The merchant's process id on a deposit's credit entry. A statement names each line's
 * deposit or withdrawal by the merchant's own id; withdrawals are in this database (a join),
 * but deposits live in the deposit service, and asking it once per statement line would make
 * a statement as slow as its length. The deposit-completed event carries the process id, so
 * the credit keeps it. Nullable: credits posted before this migration have none (their
 * statement lines show processId null), and other kinds do not need it.
 */
export const ledgerProcessIdMigration: Migration = {
  name: "20261126020000_ledger_process_id",
  async up(db) {
    await db.schema.alterTable("ledger_entries", (t) => {
      t.string("process_id", 50).nullable();
    });
    // A statement reads one merchant's entries of one currency by time.
    await db.schema.alterTable("ledger_entries", (t) => {
      t.index(["merchant_id", "currency", "created_at"], "ledger_entries_merchant_created");
    });
  },
  async down(db) {
    await db.schema.alterTable("ledger_entries", (t) => {
      t.dropIndex(["merchant_id", "currency", "created_at"], "ledger_entries_merchant_created");
    });
    await db.schema.alterTable("ledger_entries", (t) => {
      t.dropColumn("process_id");
    });
  },
};
