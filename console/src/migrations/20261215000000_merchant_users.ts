import { type Migration } from "@payments/kit";
import { AUDIT_TABLE } from "@payments/access";

/**
 * The merchant dashboard's people: a merchant's own users, apart from the operators (their own
 * table, sessions and one-time links), so an operator's session can never name a merchant user
 * or the other way round. Times are BIGINT milliseconds, as everywhere in the console.
 */
export const merchantUsersMigration: Migration = {
  name: "20261215000000_merchant_users",
  async up(db) {
    await db.schema.createTable("merchant_users", (t) => {
      t.string("id", 64).primary();
      t.string("merchant_id", 80).notNullable();
      // Lower-cased; one account per address among merchant users (an operator may share it: another table).
      t.string("email", 254).notNullable().unique({ indexName: "merchant_users_email" });
      t.string("display_name", 200).notNullable();
      t.string("role", 16).notNullable();
      t.string("kind", 16).notNullable().defaultTo("human");
      // A removed user: kept (the audit names them), never signs in again.
      t.boolean("disabled").notNullable().defaultTo(false);
      t.string("password_hash", 255).nullable();
      t.string("totp_secret", 255).nullable();
      t.bigInteger("totp_last_step").nullable();
      t.bigInteger("created_at").notNullable();
      t.string("created_by", 254).notNullable();
      t.bigInteger("last_sign_in_at").nullable();
      // A merchant's team, in creation order.
      t.index(["merchant_id", "created_at", "id"], "merchant_users_merchant");
    });
    await db.schema.createTable("merchant_sign_in_links", (t) => {
      t.string("token_hash", 64).primary();
      t.string("merchant_user_id", 64).notNullable().references("id").inTable("merchant_users").onDelete("CASCADE");
      t.string("purpose", 16).notNullable();
      t.string("created_by", 254).notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("used_at").nullable();
      t.index(["merchant_user_id"], "merchant_sign_in_links_user");
    });
    await db.schema.createTable("merchant_sessions", (t) => {
      t.string("id_hash", 64).primary();
      t.string("merchant_user_id", 64).notNullable().references("id").inTable("merchant_users").onDelete("CASCADE");
      // Always "browser": merchant users have no CLI.
      t.string("channel", 16).notNullable();
      t.string("csrf_token", 64).notNullable();
      t.string("pending_totp_secret", 255).nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("last_seen_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.index(["merchant_user_id"], "merchant_sessions_user");
    });
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
