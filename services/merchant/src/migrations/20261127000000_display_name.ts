import type { Migration } from "@payments/kit";

/**
 * The name a merchant's customers see on the checkout page. Null means none was set: the
 * merchant's `name` is shown, so every merchant made before this migration shows its name
 * without a backfill, and a merchant that clears its display name goes back to it.
 */
export const displayNameMigration: Migration = {
  name: "20261127000000_display_name",
  async up(db) {
    await db.schema.alterTable("merchants", (t) => {
      t.string("display_name", 100).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("merchants", (t) => {
      t.dropColumn("display_name");
    });
  },
};
