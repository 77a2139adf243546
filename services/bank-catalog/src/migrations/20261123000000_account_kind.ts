import type { Migration } from "@payments/kit";
import { SEED_ACCOUNTS } from "../seed.js";

/**
 * Receiving accounts become sandbox or live. Every account so far is live (the default),
 * except the made-up accounts earlier installs were seeded with: those become sandbox, so
 * from now on only sandbox merchants' customers are told to pay into them.
 */
export const accountKindMigration: Migration = {
  name: "20261123000000_account_kind",
  async up(db) {
    await db.schema.alterTable("receiving_accounts", (t) => {
      t.boolean("sandbox").notNullable().defaultTo(false);
    });
    await db("receiving_accounts")
      .whereIn(
        "id",
        SEED_ACCOUNTS.map((a) => a.id),
      )
      .update({ sandbox: true });
  },
  async down(db) {
    await db.schema.alterTable("receiving_accounts", (t) => {
      t.dropColumn("sandbox");
    });
  },
};
