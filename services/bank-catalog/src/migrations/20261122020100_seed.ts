import type { Migration } from "@payments/kit";
import { SEED_ACCOUNTS, SEED_BANKS, seedCatalog } from "../seed.js";

/**
 * A fresh install starts with the main Turkish banks and FAST enabled. (Installs made before
 * 20261123000000_account_kind also got the sandbox receiving accounts here; that migration
 * marks them sandbox. Newer installs get them only from an explicit seed.)
 */
export const seedMigration: Migration = {
  name: "20261122020100_seed",
  async up(db) {
    await seedCatalog(db, Date.now());
  },
  async down(db) {
    await db("receiving_accounts")
      .whereIn(
        "id",
        SEED_ACCOUNTS.map((a) => a.id),
      )
      .delete();
    await db("banks")
      .whereIn(
        "id",
        SEED_BANKS.map((b) => b.id),
      )
      .delete();
  },
};
