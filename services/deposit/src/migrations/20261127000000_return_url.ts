import type { Migration } from "@payments/kit";

/**
 * Where the checkout page sends the customer back to the merchant (CreateDeposit's
 * `return_url`), normalised, at most 2,000 characters. Null: none was given, which is also
 * what every deposit made before this migration has.
 */
export const returnUrlMigration: Migration = {
  name: "20261127000000_return_url",
  async up(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.text("return_url").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.dropColumn("return_url");
    });
  },
};
