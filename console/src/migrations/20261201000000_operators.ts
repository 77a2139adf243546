import type { Migration } from "@payments/kit";
import { accountColumns, linkColumns, sessionColumns } from "./account-tables.js";

const OPERATOR = { column: "operator_id", table: "operators" };

/**
 * The console's own state: the people who may sign in, their one-time links, their sessions,
 * what happened at sign-in, and the changes to accounts that wait for a second admin. Times are
 * BIGINT milliseconds, as in every service.
 */
export const operatorsMigration: Migration = {
  name: "20261201000000_operators",
  async up(db) {
    await db.schema.createTable("operators", (t) => {
      accountColumns(t, "operators");
      // The list pages by (created_at, id).
      t.index(["created_at", "id"], "operators_created");
    });
    await db.schema.createTable("sign_in_links", (t) => linkColumns(t, OPERATOR, "sign_in_links_operator"));
    await db.schema.createTable("sessions", (t) => sessionColumns(t, OPERATOR, "sessions_operator"));
    await db.schema.createTable("sign_in_events", (t) => {
      // Append-only: nothing updates or deletes these rows.
      t.bigIncrements("id").primary();
      t.bigInteger("at").notNullable();
      t.string("event", 32).notNullable();
      t.string("channel", 16).notNullable();
      t.string("email", 254).notNullable();
      t.string("operator_id", 64).nullable();
      t.string("ip", 64).notNullable();
      t.string("reason", 64).nullable();
      t.index(["email", "at"], "sign_in_events_email");
    });
    await db.schema.createTable("operator_approvals", (t) => {
      t.string("id", 64).primary();
      t.string("action", 32).notNullable();
      // The change asked for, as JSON: what the approval applies, exactly.
      t.text("payload").notNullable();
      t.string("target_email", 254).notNullable();
      t.string("requested_by", 254).notNullable();
      t.bigInteger("requested_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.string("status", 16).notNullable();
      t.string("decided_by", 254).nullable();
      t.bigInteger("decided_at").nullable();
      t.index(["status", "requested_at"], "operator_approvals_status");
    });
  },
  async down(db) {
    await db.schema.dropTable("operator_approvals");
    await db.schema.dropTable("sign_in_events");
    await db.schema.dropTable("sessions");
    await db.schema.dropTable("sign_in_links");
    await db.schema.dropTable("operators");
  },
};
