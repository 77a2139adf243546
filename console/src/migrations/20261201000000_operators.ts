import type { Migration } from "@payments/kit";

/**
 * The console's own state: the people who may sign in, their one-time links, their sessions,
 * what happened at sign-in, and the changes to accounts that wait for a second admin. Times are
 * BIGINT milliseconds, as in every service.
 */
export const operatorsMigration: Migration = {
  name: "20261201000000_operators",
  async up(db) {
    await db.schema.createTable("operators", (t) => {
      t.string("id", 64).primary();
      // Lower-cased before it is stored or looked up, so "Ayse@X" and "ayse@x" are one account.
      t.string("email", 254).notNullable().unique({ indexName: "operators_email" });
      t.string("display_name", 200).notNullable();
      t.string("role", 16).notNullable();
      // "human" for a person; "service" kept for accounts of automation should they ever sign in here.
      t.string("kind", 16).notNullable().defaultTo("human");
      t.boolean("disabled").notNullable().defaultTo(false);
      // scrypt$N$r$p$salt$hash: the parameters travel with the hash so they can be raised later.
      t.string("password_hash", 255).nullable();
      // Sealed (AES-256-GCM) when CONSOLE_TOTP_KEY is set; null until the operator enrols.
      t.string("totp_secret", 255).nullable();
      // The last 30-second step accepted: a code is never accepted twice.
      t.bigInteger("totp_last_step").nullable();
      t.bigInteger("created_at").notNullable();
      t.string("created_by", 254).notNullable();
      t.bigInteger("last_sign_in_at").nullable();
      // The list pages by (created_at, id).
      t.index(["created_at", "id"], "operators_created");
    });
    await db.schema.createTable("sign_in_links", (t) => {
      // SHA-256 (hex) of the token in the link: the token itself is never stored.
      t.string("token_hash", 64).primary();
      t.string("operator_id", 64).notNullable().references("id").inTable("operators").onDelete("CASCADE");
      t.string("purpose", 16).notNullable();
      t.string("created_by", 254).notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.bigInteger("used_at").nullable();
      t.index(["operator_id"], "sign_in_links_operator");
    });
    await db.schema.createTable("sessions", (t) => {
      // SHA-256 (hex) of the session id or CLI token: a stolen table signs nobody in.
      t.string("id_hash", 64).primary();
      t.string("operator_id", 64).notNullable().references("id").inTable("operators").onDelete("CASCADE");
      // "browser" (cookie, idle timeout, CSRF token) or "cli" (bearer token, absolute lifetime only).
      t.string("channel", 16).notNullable();
      t.string("csrf_token", 64).notNullable();
      // A TOTP secret shown on the enrolment page, kept here until a code from it is confirmed.
      t.string("pending_totp_secret", 255).nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("last_seen_at").notNullable();
      t.bigInteger("expires_at").notNullable();
      t.index(["operator_id"], "sessions_operator");
    });
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
