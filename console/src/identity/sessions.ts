import type { Knex } from "knex";
import { newToken } from "@payments/kit";
import { hashSecret, newSecret } from "./secret-token.js";

/** A browser session (cookie) or a CLI session (bearer token). */
export type SessionChannel = "browser" | "cli";

export interface Session {
  idHash: string;
  /** The account's id: an operator's in `sessions`, a merchant user's in `merchant_sessions`. */
  operatorId: string;
  channel: SessionChannel;
  csrfToken: string;
  pendingTotpSecret: string | null;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

interface SessionRow {
  id_hash: string;
  operator_id: string;
  channel: string;
  csrf_token: string;
  pending_totp_secret: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

export interface SessionLimits {
  /** A browser session unused this long ends (CONSOLE_IDLE_TIMEOUT). CLI sessions have none. */
  idleMs: number;
  /** Every browser session ends this long after sign-in, however busy (CONSOLE_SESSION_LIFETIME). */
  browserLifetimeMs: number;
  /** A CLI token's whole life (CONSOLE_CLI_SESSION_LIFETIME). */
  cliLifetimeMs: number;
}

/**
 * Where sessions are kept: the operators' (`sessions`) or the merchant users' (`merchant_sessions`),
 * two tables so that a session of one kind can never be resumed as the other.
 */
export interface SessionStore {
  table: "sessions" | "merchant_sessions";
  /** The column naming the account. */
  owner: "operator_id" | "merchant_user_id";
}

export const OPERATOR_SESSIONS: SessionStore = { table: "sessions", owner: "operator_id" };
export const MERCHANT_SESSIONS: SessionStore = { table: "merchant_sessions", owner: "merchant_user_id" };

/** last_seen_at is written at most this often: a page view is not a database write each time. */
const TOUCH_EVERY_MS = 60_000;

function fromRow(row: Omit<SessionRow, "operator_id">, store: SessionStore): Session {
  return {
    idHash: row.id_hash,
    operatorId: String((row as unknown as Record<string, unknown>)[store.owner]),
    channel: row.channel === "cli" ? "cli" : "browser",
    csrfToken: row.csrf_token,
    pendingTotpSecret: row.pending_totp_secret,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
    expiresAt: Number(row.expires_at),
  };
}

/** Starts a session: the secret goes to the browser (cookie) or the CLI once; only its hash is kept. */
export async function createSession(
  db: Knex,
  input: { operatorId: string; channel: SessionChannel; now: number; limits: SessionLimits },
  store: SessionStore = OPERATOR_SESSIONS,
): Promise<{ secret: string; session: Session }> {
  const { secret, hash } = newSecret();
  const lifetime = input.channel === "cli" ? input.limits.cliLifetimeMs : input.limits.browserLifetimeMs;
  const columns = {
    id_hash: hash,
    channel: input.channel,
    csrf_token: newToken(24),
    pending_totp_secret: null,
    created_at: input.now,
    last_seen_at: input.now,
    expires_at: input.now + lifetime,
  };
  await db(store.table).insert({ ...columns, [store.owner]: input.operatorId });
  return { secret, session: fromRow({ ...columns, [store.owner]: input.operatorId }, store) };
}

/**
 * The live session a secret names, on `channel`, or undefined: unknown, past its absolute end, or
 * (browser) idle longer than the idle timeout. An ended session's row is deleted when met.
 * A live one is marked seen (at most once a minute).
 */
export async function resumeSession(db: Knex, secret: string, channel: SessionChannel, now: number, limits: SessionLimits, store: SessionStore = OPERATOR_SESSIONS): Promise<Session | undefined> {
  const idHash = hashSecret(secret);
  const row = (await db(store.table).where({ id_hash: idHash }).first()) as SessionRow | undefined;
  if (!row) return undefined;
  const session = fromRow(row, store);
  if (session.channel !== channel) return undefined;
  const idleEnded = channel === "browser" && now - session.lastSeenAt >= limits.idleMs;
  if (now >= session.expiresAt || idleEnded) {
    await db(store.table).where({ id_hash: idHash }).delete();
    return undefined;
  }
  if (now - session.lastSeenAt >= TOUCH_EVERY_MS) {
    await db(store.table).where({ id_hash: idHash }).update({ last_seen_at: now });
    session.lastSeenAt = now;
  }
  return session;
}

export async function deleteSession(db: Knex, idHash: string, store: SessionStore = OPERATOR_SESSIONS): Promise<void> {
  await db(store.table).where({ id_hash: idHash }).delete();
}

/** Ends every session of an operator (disabled, password reset, role lowered). */
export async function deleteSessionsOf(db: Knex, operatorId: string, store: SessionStore = OPERATOR_SESSIONS): Promise<number> {
  return db(store.table).where({ [store.owner]: operatorId }).delete();
}

export async function setPendingTotpSecret(db: Knex, idHash: string, sealed: string | null, store: SessionStore = OPERATOR_SESSIONS): Promise<void> {
  await db(store.table).where({ id_hash: idHash }).update({ pending_totp_secret: sealed });
}

/** Drops sessions that ended (absolute end passed, or idle past the timeout): run now and then. */
export async function deleteEndedSessions(db: Knex, now: number, limits: SessionLimits, store: SessionStore = OPERATOR_SESSIONS): Promise<number> {
  return db(store.table)
    .where("expires_at", "<=", now)
    .orWhere((q) => {
      // knex builds the group from what the callback adds; the builder is not a query to run.
      void q.where({ channel: "browser" }).andWhere("last_seen_at", "<=", now - limits.idleMs);
    })
    .delete();
}
