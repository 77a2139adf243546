import type { Knex } from "knex";

/*
 * The columns both kinds of people who sign in have (operators, merchant users): their accounts,
 * one-time links and sessions, in the order the two migrations created them. Migrations that
 * ran read these: a change here changes what they create, so never edit these; add a migration.
 */

/** The owner of a link or session: its account column and table (the foreign key, deleted with it). */
interface Owner {
  column: string;
  table: string;
}

function ownerColumn(t: Knex.CreateTableBuilder, owner: Owner): void {
  t.string(owner.column, 64).notNullable().references("id").inTable(owner.table).onDelete("CASCADE");
}

/** BIGINT milliseconds, not null, in this order. */
function times(t: Knex.CreateTableBuilder, ...names: string[]): void {
  for (const name of names) t.bigInteger(name).notNullable();
}

/** An account table's columns; `afterId` adds the kind's own right after the id. */
export function accountColumns(t: Knex.CreateTableBuilder, table: string, afterId: (t: Knex.CreateTableBuilder) => void = () => {}): void {
  t.string("id", 64).primary();
  afterId(t);
  // Lower-cased before it is stored or looked up, so "Ayse@X" and "ayse@x" are one account (per table).
  t.string("email", 254).notNullable().unique({ indexName: `${table}_email` });
  t.string("display_name", 200).notNullable();
  t.string("role", 16).notNullable();
  // "human" for a person; "service" kept for accounts of automation should they ever sign in here.
  t.string("kind", 16).notNullable().defaultTo("human");
  // A disabled or removed account: kept (the audit names it), never signs in again.
  t.boolean("disabled").notNullable().defaultTo(false);
  // scrypt$N$r$p$salt$hash: the parameters travel with the hash so they can be raised later.
  t.string("password_hash", 255).nullable();
  // Sealed (AES-256-GCM) when CONSOLE_TOTP_KEY is set; null until the account enrols.
  t.string("totp_secret", 255).nullable();
  // The last 30-second step accepted: a code is never accepted twice.
  t.bigInteger("totp_last_step").nullable();
  t.bigInteger("created_at").notNullable();
  t.string("created_by", 254).notNullable();
  t.bigInteger("last_sign_in_at").nullable();
}

/** A one-time link's columns, indexed by its owner as `index`. */
export function linkColumns(t: Knex.CreateTableBuilder, owner: Owner, index: string): void {
  // SHA-256 (hex) of the token in the link: the token itself is never stored.
  t.string("token_hash", 64).primary();
  ownerColumn(t, owner);
  t.string("purpose", 16).notNullable();
  t.string("created_by", 254).notNullable();
  times(t, "created_at", "expires_at");
  t.bigInteger("used_at").nullable();
  t.index([owner.column], index);
}

/** A session's columns, indexed by its owner as `index`. */
export function sessionColumns(t: Knex.CreateTableBuilder, owner: Owner, index: string): void {
  // SHA-256 (hex) of the session id or CLI token: a stolen table signs nobody in.
  t.string("id_hash", 64).primary();
  ownerColumn(t, owner);
  // "browser" (cookie, idle timeout, CSRF token) or "cli" (bearer token, absolute lifetime only; operators only).
  t.string("channel", 16).notNullable();
  t.string("csrf_token", 64).notNullable();
  // A TOTP secret shown on the enrolment page, kept here until a code from it is confirmed.
  t.string("pending_totp_secret", 255).nullable();
  times(t, "created_at", "last_seen_at", "expires_at");
  t.index([owner.column], index);
}
