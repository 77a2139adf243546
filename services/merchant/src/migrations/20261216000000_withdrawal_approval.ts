import type { Migration } from "@payments/kit";

/**
 * The merchant's own four-eyes on its withdrawals (issue 24): a withdrawal its users create
 * above this many kuruş waits for a second user of the merchant. Null means none, so every
 * merchant made before this migration has none until its owner sets one.
 */
export const withdrawalApprovalMigration: Migration = {
  name: "20261216000000_withdrawal_approval",
  async up(db) {
    await db.schema.alterTable("merchants", (t) => {
      t.bigInteger("withdrawal_approval_threshold").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("merchants", (t) => {
      t.dropColumn("withdrawal_approval_threshold");
    });
  },
};
