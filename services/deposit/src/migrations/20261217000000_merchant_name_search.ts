import type { Migration } from "@payments/kit";

/**
 * The merchant dashboard's search by a customer's name (issue 24): one merchant's deposits whose
 * name starts with a prefix, newest first. (merchant_id, customer_name) is the range; status and
 * created_at ride along, and InnoDB adds the primary key, so the page's ids are found from the
 * index alone, sorted, and only the page's rows are read (list-deposits.ts). The key stays well
 * below InnoDB's 3072 bytes (40 + 200 + 16 characters of utf8mb4, and a bigint).
 */
export const merchantNameSearchMigration: Migration = {
  name: "20261217000000_merchant_name_search",
  async up(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.index(["merchant_id", "customer_name", "status", "created_at"], "deposits_merchant_name");
    });
  },
  async down(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.dropIndex(["merchant_id", "customer_name", "status", "created_at"], "deposits_merchant_name");
    });
  },
};
