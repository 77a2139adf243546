import { type Migration } from "@payments/kit";
import { AUDIT_TABLE } from "@payments/access";
import { accountColumns, linkColumns, sessionColumns } from "./account-tables.js";

const MERCHANT_USER = { column: "merchant_user_id", table: "merchant_users" };

/**
 * The merchant dashboard's people: a merchant's own users, apart from the operators (their own
 * table, sessions and one-time links), so an operator's session can never name a merchant user
 * or the other way round. Times are BIGINT milliseconds, as everywhere in the console.
 */
export const merchantUsersMigration: Migration = {
  name: "20261215000000_merchant_users",
  async up(db) {
    await db.schema.createTable("merchant_users", (t) => {
      accountColumns(t, "merchant_users", (t) => t.string("merchant_id", 80).notNullable());
      // A merchant's team, in creation order.
      t.index(["merchant_id", "created_at", "id"], "merchant_users_merchant");
    });
    await db.schema.createTable("merchant_sign_in_links", (t) => linkColumns(t, MERCHANT_USER, "merchant_sign_in_links_user"));
    // Sessions are always "browser": merchant users have no CLI.
    await db.schema.createTable("merchant_sessions", (t) => sessionColumns(t, MERCHANT_USER, "merchant_sessions_user"));
    // Sign-in events of merchant users go to the same append-only table, naming the merchant user.
    await db.schema.alterTable("sign_in_events", (t) => {
      t.string("merchant_user_id", 64).nullable();
    });
    // The console's own audit names the merchant a team change concerns (kit recordAudit's
    // merchantId), so the merchant's trail reads its rows on an index. The services add the same
    // column with the kit's merchantScopeMigration; the console's approvals table differs, so the
    // audit column is added here.
    if (!(await db.schema.hasColumn(AUDIT_TABLE, "merchant_id"))) {
      await db.schema.alterTable(AUDIT_TABLE, (t) => {
        t.string("merchant_id", 80).nullable();
        t.index(["merchant_id", "created_at", "id"], "operator_audit_merchant");
      });
    }
  },
  async down(db) {
    await db.schema.alterTable(AUDIT_TABLE, (t) => {
      t.dropIndex(["merchant_id", "created_at", "id"], "operator_audit_merchant");
      t.dropColumn("merchant_id");
    });
    await db.schema.alterTable("sign_in_events", (t) => {
      t.dropColumn("merchant_user_id");
    });
    await db.schema.dropTable("merchant_sessions");
    await db.schema.dropTable("merchant_sign_in_links");
    await db.schema.dropTable("merchant_users");
  },
};
