import type { Migration } from "@payments/kit";

/**
 * The paid-amount rules, one column each, by name. The defaults are in the columns, so every
 * merchant made before this migration has them at once (`review`, `complete`, `review`: a
 * short or late payment waits for an operator, an overpayment completes) without a backfill,
 * and the deposit service sees the same behaviour it had before the rules existed.
 */
export const paymentRulesMigration: Migration = {
  name: "20261125000000_payment_rules",
  async up(db) {
    await db.schema.alterTable("merchants", (t) => {
      t.string("underpayment", 16).notNullable().defaultTo("review");
      t.string("overpayment", 16).notNullable().defaultTo("complete");
      t.string("late_payment", 16).notNullable().defaultTo("review");
    });
  },
  async down(db) {
    await db.schema.alterTable("merchants", (t) => {
      t.dropColumn("underpayment");
      t.dropColumn("overpayment");
      t.dropColumn("late_payment");
    });
  },
};
