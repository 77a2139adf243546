import type { Migration } from "@payments/kit";

/**
 * Returns are asked for through the outbox (TransferReturnRequested) in the decision's own
 * transaction, each carrying its attempt number, so the payout service creates exactly that
 * attempt once and a late answer about an older attempt is recognised as such.
 * `return_attempts` counts the returns asked for so far. Rows from before stay at 0: their
 * returns were asked for by a direct call, and any answer about them is taken.
 */
export const transferReturnAttemptsMigration: Migration = {
  name: "20261126000000_transfer_return_attempts",
  async up(db) {
    await db.schema.alterTable("incoming_transfers", (t) => {
      t.integer("return_attempts").notNullable().defaultTo(0);
    });
  },
  async down(db) {
    await db.schema.alterTable("incoming_transfers", (t) => {
      t.dropColumn("return_attempts");
    });
  },
};
