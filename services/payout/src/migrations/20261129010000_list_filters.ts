import type { Migration } from "@payments/kit";

/**
 * ListWithdrawals' search filters (issue 23): each one an index range that is already in the
 * list's order, newest first by (created_at, id), so a filtered page reads only its rows and
 * the cursor seeks inside the range. The holder's name (account_name) is a prefix filter
 * (LIKE 'x%' is a range on the leading column); the IBAN and the amount are exact.
 */
export const listFiltersMigration: Migration = {
  name: "20261129010000_list_filters",
  async up(db) {
    await db.schema.alterTable("withdrawals", (t) => {
      t.index(["iban", "created_at", "id"], "withdrawals_iban_created");
      t.index(["account_name", "created_at", "id"], "withdrawals_account_name_created");
      t.index(["amount", "created_at", "id"], "withdrawals_amount_created");
    });
  },
  async down(db) {
    await db.schema.alterTable("withdrawals", (t) => {
      t.dropIndex(["iban", "created_at", "id"], "withdrawals_iban_created");
      t.dropIndex(["account_name", "created_at", "id"], "withdrawals_account_name_created");
      t.dropIndex(["amount", "created_at", "id"], "withdrawals_amount_created");
    });
  },
};
