import type { Migration } from "@payments/kit";

/**
 * Each withdrawal records whether its merchant was a sandbox merchant when it was created:
 * the worker sends a sandbox withdrawal to the sandbox connector and a live one to the live
 * connector (PAYOUT_CONNECTOR), so sandbox and live never mix.
 *
 * Rows from before this migration are marked sandbox: until now every withdrawal went to the
 * sandbox connector, whatever its merchant, so none of them moved real money, and one still
 * open keeps going where it was going. The default exists only for that backfill and is then
 * dropped: a new row must say what it is (a missing value is refused), never fall to a kind.
 */
export const withdrawalSandboxMigration: Migration = {
  name: "20261123010000_withdrawal_sandbox",
  async up(db) {
    await db.schema.alterTable("withdrawals", (t) => {
      t.boolean("sandbox").notNullable().defaultTo(true);
    });
    await db.schema.alterTable("withdrawals", (t) => {
      t.boolean("sandbox").notNullable().alter();
    });
  },
  async down(db) {
    await db.schema.alterTable("withdrawals", (t) => {
      t.dropColumn("sandbox");
    });
  },
};
