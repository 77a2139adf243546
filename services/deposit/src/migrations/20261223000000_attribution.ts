import type { Migration } from "@payments/kit";

/**
 * Issue 32: every money move attributable, on the rows themselves. An incoming transfer records
 * who reported it (`reported_by`: the calling workload and whoever is behind it, the push feed,
 * the watched directory, the sandbox helper's key or user); a deposit records who completed it
 * (`completed_by`: that transfer's reporter, or the operator who confirmed it, maker and
 * approver). Both are words from the call's scope, written in the statements that already write
 * the row, so a bank report costs no extra query. Nullable: rows from before say nothing.
 */
export const attributionMigration: Migration = {
  name: "20261223000000_attribution",
  async up(db) {
    await db.schema.alterTable("incoming_transfers", (t) => {
      t.string("reported_by", 500).nullable();
    });
    await db.schema.alterTable("deposits", (t) => {
      t.string("completed_by", 500).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.dropColumn("completed_by");
    });
    await db.schema.alterTable("incoming_transfers", (t) => {
      t.dropColumn("reported_by");
    });
  },
};
