import type { Migration } from "@payments/kit";

/**
 * ListDeposits' search filters (issue 23): each one an index range that is already in the
 * list's order, newest first by (created_at, id), so a filtered page reads only its rows
 * and the cursor seeks inside the range. The reference has its unique index; the amount is
 * an exact value, the customer's name a prefix (LIKE 'x%' is a range on the leading column).
 * The keys stay well below InnoDB's 3072 bytes (varchar(200) utf8mb4 is 800).
 */
export const listFiltersMigration: Migration = {
  name: "20261129000000_list_filters",
  async up(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.index(["customer_id", "created_at", "id"], "deposits_customer_id_created");
      t.index(["customer_name", "created_at", "id"], "deposits_customer_name_created");
      t.index(["account_iban", "created_at", "id"], "deposits_account_iban_created");
      t.index(["amount", "created_at", "id"], "deposits_amount_created");
    });
  },
  async down(db) {
    await db.schema.alterTable("deposits", (t) => {
      t.dropIndex(["customer_id", "created_at", "id"], "deposits_customer_id_created");
      t.dropIndex(["customer_name", "created_at", "id"], "deposits_customer_name_created");
      t.dropIndex(["account_iban", "created_at", "id"], "deposits_account_iban_created");
      t.dropIndex(["amount", "created_at", "id"], "deposits_amount_created");
    });
  },
};
