import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { inspect } from "node:util";
import knexFactory, { type Knex } from "knex";
import type { Logger } from "./logger.js";
import { Code } from "@connectrpc/connect";
import { serviceError } from "./errors.js";
import { SpanKind, withSpan } from "./tracing.js";
import { offerBeforeCommit, settle, watchForChange, type ChangeWatch } from "./commit-hook.js";

export type Db = Knex;
export type Tx = Knex.Transaction;

export interface Migration {
  /** Sorts the migrations; use a timestamp prefix, e.g. "20261122000000_merchants". */
  name: string;
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

/** knex's advice on a migration lock it cannot take ("knex migrate:unlock"): migrate() waits for the lock, logs that once and names `migrate unlock` (migrations.ts). */
const LOCK_ADVICE = /Can't take lock to run migrations|release the lock manually/;

/**
 * Where knex's own messages (warnings, deprecations, errors) go: with a logger, JSON lines on
 * it like every other line of a service (component "knex"); without one (a bare openDatabase
 * in a script) stderr, so stdout's JSON is never interleaved with plain text.
 */
function knexLog(logger: Logger | undefined): Knex.Config["log"] {
  const emit = (level: "warn" | "error", message: unknown) => {
    const text = typeof message === "string" ? message : inspect(message);
    if (LOCK_ADVICE.test(text)) return;
    if (logger) logger[level]({ component: "knex" }, text);
    else process.stderr.write(`knex: ${text}\n`);
  };
  return {
    warn: (message: unknown) => emit("warn", message),
    error: (message: unknown) => emit("error", message),
    deprecate: (method: string, alternative: string) => emit("warn", `${method} is deprecated, use ${alternative}`),
    debug: () => undefined,
  };
}

export interface DatabaseOptions {
  /** mysql://user:pass@host:port/database. When absent, sqliteFile is used. */
  url?: string;
  sqliteFile?: string;
  poolMax?: number;
  /** Where knex's own warnings go (JSON); stderr without one. */
  logger?: Logger;
  /**
   * MySQL: every connection's session runs at READ COMMITTED (plain reads see the latest commit,
   * locking reads lock only the rows they return, no gap locks), so transactions that want it
   * need no `SET TRANSACTION` of their own; one that needs a single snapshot asks for it
   * (`repeatableRead`). SQLite has one writer and ignores it.
   */
  readCommitted?: boolean;
}

/** The knex configs (shared by a database and its transactions) of the MySQL databases opened with `readCommitted`. */
const readCommittedSessions = new WeakSet<object>();

/**
 * Opens MySQL/MariaDB (DATABASE_URL) or an embedded SQLite file. Amounts and times are
 * BIGINT and come back as numbers in both; strings compare byte-wise (utf8mb4_bin) in both.
 */
export function openDatabase(options: DatabaseOptions): Knex {
  if (options.url) {
    const url = new URL(options.url);
    if (url.protocol !== "mysql:") throw new Error(`DATABASE_URL must be a mysql:// URL, got ${url.protocol}`);
    const db = traceTransactions(knexFactory({
      client: "mysql2",
      connection: {
        host: url.hostname,
        port: url.port ? Number(url.port) : 3306,
        user: decodeURIComponent(url.username || "root"),
        password: decodeURIComponent(url.password),
        database: databaseName(url),
        supportBigNumbers: true,
        bigNumberStrings: false,
        decimalNumbers: true,
        // No `charset` here: knex would copy it into every CREATE TABLE as "default character
        // set utf8mb4", which gives the charset's case-insensitive default collation instead of
        // the database's utf8mb4_bin (ensureDatabase). mysql2 speaks utf8mb4 by default.
        timezone: "Z",
      },
      pool: {
        min: 0,
        max: options.poolMax ?? 10,
        ...(options.readCommitted
          ? {
              afterCreate(conn: { query(sql: string, done: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
                conn.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", (err) => done(err, conn));
              },
            }
          : {}),
      },
      log: knexLog(options.logger),
    }));
    if (options.readCommitted) readCommittedSessions.add(clientConfig(db) as object);
    return db;
  }
  const file = options.sqliteFile;
  if (!file) throw new Error("either a DATABASE_URL or an SQLite file is required");
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  return traceTransactions(knexFactory({
    client: "better-sqlite3",
    connection: { filename: file },
    useNullAsDefault: true,
    log: knexLog(options.logger),
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        conn.pragma("journal_mode = WAL");
        conn.pragma("busy_timeout = 5000");
        conn.pragma("foreign_keys = ON");
        done(null, conn);
      },
    },
  }));
}

/**
 * Every `db.transaction(async (trx) => …)` of this database (the services' own, the kit's
 * `transactionWithRetry` and `claimTransaction`, each attempt) runs in a `db.transaction`
 * client span; queries inside it are not spanned one by one. A no-op with tracing off. While the
 * call has a commit participant (commit-hook.ts), one that changed something offers it the
 * transaction once its function is done, before knex's COMMIT.
 */
function traceTransactions(db: Knex): Knex {
  // `knex.transaction` is read-only: it forwards to its context's method, which is patched.
  const target = (db as unknown as { context: { transaction: (...args: unknown[]) => unknown } }).context;
  const original = target.transaction;
  const system = clientConfig(db).client === "mysql2" ? "mysql" : "sqlite";
  target.transaction = function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] !== "function") return original.apply(this, args);
    const watch = watchForChange();
    const run = () => (watch ? withParticipant(watch, db, (fn) => original.apply(this, [fn, ...args.slice(1)]), args[0] as TransactionBody) : (original.apply(this, args) as Promise<unknown>));
    return withSpan("db.transaction", { kind: SpanKind.CLIENT, attributes: { "db.system.name": system } }, run);
  };
  return db;
}

type TransactionBody = (trx: Knex.Transaction) => Promise<unknown>;

/** knex's transaction of `body`, watched for a change and offered to the participant before knex commits it. */
async function withParticipant(watch: ChangeWatch, db: Knex, transaction: (body: TransactionBody) => unknown, body: TransactionBody): Promise<unknown> {
  let took = false;
  try {
    const result = await (transaction(async (trx) => {
      watch.follow(trx);
      const value = await body(trx);
      took = await offerBeforeCommit(watch, trx, db);
      return value;
    }) as Promise<unknown>);
    settle(watch, took, true);
    return result;
  } catch (err) {
    settle(watch, took, false);
    throw err;
  }
}

function databaseName(url: URL): string {
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!/^[A-Za-z0-9_$]{1,64}$/.test(name)) throw new Error(`DATABASE_URL needs a database name of letters, digits and _ (got "${name}")`);
  return name;
}

/** The same server, another database: `mysql://h/pay` + "merchant" = `mysql://h/pay_merchant`. */
export function deriveDatabaseUrl(url: string, suffix: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${databaseName(parsed)}_${suffix.replace(/[^A-Za-z0-9]/g, "_")}`;
  return parsed.toString();
}

/**
 * Runs fn on one connection to the MySQL server of `url`, with no database selected (to
 * create or look for the database itself), and closes it.
 */
export async function withServerConnection<T>(url: string, fn: (admin: Knex) => Promise<T>): Promise<T> {
  const parsed = new URL(url);
  const admin = knexFactory({
    client: "mysql2",
    connection: {
      host: parsed.hostname,
      port: parsed.port ? Number(parsed.port) : 3306,
      user: decodeURIComponent(parsed.username || "root"),
      password: decodeURIComponent(parsed.password),
    },
    pool: { min: 0, max: 1 },
  });
  try {
    return await fn(admin);
  } finally {
    await admin.destroy();
  }
}

/** Creates the MySQL database named in the URL when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(new URL(url));
  await withServerConnection(url, (admin) => admin.raw("CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", [name]));
}

/** Migrating (with the wait for the lock held by another process) is in migrations.ts. */
export { migrate } from "./migrations.js";

export function isMysql(db: Knex): boolean {
  return clientConfig(db).client === "mysql2";
}

/** True when err is a unique-index violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === "ER_DUP_ENTRY" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/**
 * A locking read (`FOR UPDATE`) on MySQL, held until the transaction ends. SQLite has one
 * writer at a time, so the transaction alone already serialises there.
 */
export function forUpdate<T extends Knex.QueryBuilder>(db: Knex, query: T): T {
  return isMysql(db) ? (query.forUpdate() as T) : query;
}

/**
 * Row claim for background jobs: `FOR UPDATE SKIP LOCKED` on MySQL. SQLite has one writer
 * at a time, so the transaction alone already gives exclusive claims there.
 */
export function forUpdateSkipLocked<T extends Knex.QueryBuilder>(db: Knex, query: T): T {
  return isMysql(db) ? (query.forUpdate().skipLocked() as T) : query;
}

/**
 * Rows whose `column` starts with `prefix`, exactly (case and accents as typed), as a range
 * on an index that leads with the column. MySQL's databases are utf8mb4_bin (ensureDatabase),
 * so LIKE 'x%' is already exact there; SQLite's LIKE ignores ASCII case and skips a BINARY
 * index, its GLOB 'x*' is exact and uses one. The prefix's wildcards are taken literally.
 */
export function whereStartsWith<T extends Knex.QueryBuilder>(db: Knex, query: T, column: string, prefix: string): T {
  if (isMysql(db)) return query.whereRaw("?? like ? escape '!'", [column, `${prefix.replace(/[!%_]/g, "!$&")}%`]) as T;
  return query.whereRaw("?? glob ?", [column, `${prefix.replace(/[*?[]/g, "[$&]")}*`]) as T;
}

/** The knex config a database (and each of its transactions) was opened with; knex types its client as any. */
function clientConfig(db: Knex): Knex.Config {
  return (db.client as { config: Knex.Config }).config;
}

/** Deadlocks and lock-wait timeouts roll the whole transaction back: running it again is safe. */
/**
 * Error codes of a database that cannot be reached or went away mid-call (mysql2's and the
 * socket's): a restart, a failover, a network cut. Not a bug of the caller: the call may
 * succeed once the database is back.
 */
const DATABASE_UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ER_SERVER_SHUTDOWN",
  "ER_CON_COUNT_ERROR",
  "ER_CONNECTION_KILLED",
  "ER_QUERY_INTERRUPTED",
  "ER_CLIENT_INTERACTION_TIMEOUT",
]);

/**
 * True when `err` (or an error it wraps) says the database could not be reached or dropped
 * the connection: such a call is answered UNAVAILABLE (the gateway's 503), not INTERNAL.
 * A pool that could not hand out a connection in time (knex's KnexTimeoutError) counts too,
 * and any error mysql2 marks `fatal` (its connection is gone).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === "object" && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, name, fatal } = e as { code?: unknown; name?: unknown; fatal?: unknown };
    if (typeof code === "string" && DATABASE_UNAVAILABLE_CODES.has(code)) return true;
    // mysql2 marks an error that left its connection unusable (closed under a transaction, …) fatal.
    if (fatal === true) return true;
    if (name === "KnexTimeoutError") return true;
  }
  return false;
}

export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === "ER_LOCK_DEADLOCK" || code === "ER_LOCK_WAIT_TIMEOUT" || code === "SQLITE_BUSY";
}

export interface RetryOptions {
  config?: Knex.TransactionConfig;
  /** Attempts in all when a lock conflict keeps rolling it back (default 8). */
  attempts?: number;
  /**
   * Another reason to run it again: called with what the attempt threw (before the lock-conflict
   * check); true runs it again at once. For an attempt that found it must first do something
   * outside the transaction (load a value it may not wait for while holding locks) or that its
   * decision rested on a row another transaction changed meanwhile. The caller bounds it.
   */
  retryOn?: (err: unknown) => boolean | Promise<boolean>;
}

/**
 * Runs `fn` in a transaction, again when it lost a lock conflict (a deadlock or a lock-wait
 * timeout rolls the whole transaction back, so running it again is safe), with a short
 * jittered pause that grows with each attempt. When conflicts outlast every attempt the caller
 * gets UNAVAILABLE ("busy, retry"), never the driver's error: contention is load, not a fault.
 */
export async function transactionWithRetry<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 8;
  for (let attempt = 1; ; attempt++) {
    try {
      return await runTransaction(db, fn, options.config);
    } catch (err) {
      if (options.retryOn && (await options.retryOn(err))) {
        attempt--;
        continue;
      }
      if (!isRetryableConflict(err)) throw err;
      if (attempt >= attempts) {
        throw serviceError(Code.Unavailable, "DATABASE_BUSY", `the change kept meeting conflicting changes (${attempts} attempts); retry`, { cause: err });
      }
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt * attempt + Math.floor(Math.random() * 10 * attempt)));
    }
  }
}

/** A pooled mysql2 connection, as knex's pool hands it out. */
interface PooledConnection {
  /** Set on a connection that must not go back to the pool (knex's mark: it is destroyed on release). */
  __knex__disposed?: unknown;
  /** knex's id of the connection, on its `query` events. */
  __knexUid?: string;
  query(sql: string, values: readonly unknown[], done: (err: Error | null, result: unknown) => void): void;
}

/** The connection behind what runTransaction hands its function (read by hotQuery). */
const BOUND_CONNECTION = Symbol("payments.boundConnection");
/** The change watch of that transaction, when the call has a commit participant (read by hotQuery). */
const BOUND_WATCH = Symbol("payments.boundWatch");

/** Names hotQuery's callers build statements from: code's own, never a request's. */
const SQL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `name` backquoted (valid on MySQL and SQLite); anything but a plain name throws. */
export function sqlName(name: string): string {
  if (!SQL_NAME.test(name)) throw new Error(`not a plain SQL name: ${name}`);
  return `\`${name}\``;
}

/**
 * One statement of a hot path, in `trx`: in a MySQL transaction of runTransaction (the kit's
 * transactionWithRetry and claimTransaction) it goes straight to the transaction's connection,
 * mysql2 putting the values in as it does for knex, with nothing built or run by knex (about a
 * third of a statement's CPU, issue 22); anywhere else through knex's raw. `sql` must read the
 * same on MySQL and SQLite: backquoted names (sqlName), `?` for values. Gives a SELECT's rows,
 * and for any other statement the number of rows it changed. Announced as knex's queries are
 * (`query` on the database) for whoever listens.
 */
export async function hotQuery(trx: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Promise<{ rows: Array<Record<string, unknown>>; changed: number }> {
  const connection = (trx as unknown as { [BOUND_CONNECTION]?: PooledConnection })[BOUND_CONNECTION];
  if (!connection) return resultOf(await trx.raw(sql, bindings as Knex.RawBinding[]), isMysql(trx));
  const result = resultOf(await queryOn(trx, connection, sql, bindings), false);
  const watch = (trx as unknown as { [BOUND_WATCH]?: ChangeWatch })[BOUND_WATCH];
  if (watch && result.changed > 0) watch.changed = true;
  return result;
}

/** Rows or the count of changed rows, from mysql2 (rows, or a header with affectedRows; knex's raw wraps either in [result, fields]) or better-sqlite3 (rows, or { changes }). */
function resultOf(result: unknown, wrapped: boolean): { rows: Array<Record<string, unknown>>; changed: number } {
  const answer = wrapped ? (result as unknown[])[0] : result;
  if (Array.isArray(answer)) return { rows: answer as Array<Record<string, unknown>>, changed: 0 };
  const header = answer as { affectedRows?: number; changes?: number } | undefined;
  return { rows: [], changed: Number(header?.affectedRows ?? header?.changes ?? 0) };
}

/**
 * A statement straight on a pooled connection (mysql2 puts the values in), announced as knex
 * announces its queries (`query` on the database, with the connection's id) for whoever
 * listens: tests that count statements and transactions, the query log.
 */
function queryOn(db: Knex, connection: PooledConnection, sql: string, bindings: readonly unknown[] = []): Promise<unknown> {
  if (db.listenerCount("query") > 0) db.emit("query", { sql, bindings, method: "raw", __knexUid: connection.__knexUid });
  return new Promise((resolve, reject) => connection.query(sql, bindings, (err, result) => (err ? reject(err) : resolve(result))));
}

interface PoolClient {
  acquireConnection(): Promise<PooledConnection>;
  releaseConnection(connection: PooledConnection): Promise<void>;
}

/** Isolation levels knex accepts, as SQL. */
const ISOLATION_LEVELS: Record<string, string> = {
  "read uncommitted": "READ UNCOMMITTED",
  "read committed": "READ COMMITTED",
  "repeatable read": "REPEATABLE READ",
  serializable: "SERIALIZABLE",
  snapshot: "SNAPSHOT",
};

/**
 * `db.transaction(fn, config)` for the hot paths (transactionWithRetry, claimTransaction). On
 * MySQL it is one pooled connection with BEGIN, COMMIT (ROLLBACK on a throw) sent on it, and
 * `fn` gets the database's own builders bound to that connection (`.connection(conn)`): the
 * same statements as a knex transaction, without the transaction object knex builds for each
 * one (a client, a knex instance and an emitter per transaction, which cost more CPU than the
 * statements themselves: 616 µs against 379 µs for a lock, an update and an insert, measured in
 * BENCHMARKS.md, issue 22). What `fn` gets works as a transaction for what the services do
 * with one: `trx(table)`, `trx.raw`, the knex methods that start a query (`trx.select`, …),
 * `trx.client` and `trx.fn`; a transaction inside it, or a query after it ended, throws. A
 * connection whose ROLLBACK fails is not given back to the pool. SQLite keeps knex's own.
 */
export async function runTransaction<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>, config?: Knex.TransactionConfig): Promise<T> {
  if (!isMysql(db)) return db.transaction(fn, config);
  return withSpan("db.transaction", { kind: SpanKind.CLIENT, attributes: { "db.system.name": "mysql" } }, async () => {
    const client = db.client as PoolClient;
    const connection = await client.acquireConnection();
    const watch = watchForChange();
    const bound = boundTo(db, connection, watch);
    let open = false;
    let took = false;
    try {
      const level = config?.isolationLevel;
      if (level) {
        const sql = ISOLATION_LEVELS[level];
        if (!sql) throw new Error(`unknown isolation level ${level}`);
        await queryOn(db, connection, `SET TRANSACTION ISOLATION LEVEL ${sql}`);
      }
      await queryOn(db, connection, "BEGIN");
      open = true;
      const result = await fn(bound.trx);
      took = await offerBeforeCommit(watch, bound.trx, db);
      await queryOn(db, connection, "COMMIT");
      open = false;
      settle(watch, took, true);
      return result;
    } catch (err) {
      settle(watch, took, false);
      if (open) {
        try {
          await queryOn(db, connection, "ROLLBACK");
        } catch {
          // A connection that may still hold the transaction open never serves anyone else.
          connection.__knex__disposed = err;
        }
      }
      throw err;
    } finally {
      bound.end();
      await client.releaseConnection(connection);
    }
  });
}

/**
 * The database's builders bound to one connection, as a knex transaction is; unusable once `end`
 * is called. With a watch (the call has a commit participant), each statement's answer is
 * followed for the transaction's first change.
 */
function boundTo(db: Knex, connection: PooledConnection, watch?: ChangeWatch): { trx: Knex.Transaction; end(): void } {
  let ended = false;
  const check = () => {
    if (ended) throw new Error("the transaction has ended: a query of it ran after its COMMIT or ROLLBACK");
  };
  const bind = <B>(built: B): B => {
    const withConnection = built as { connection?: (c: unknown) => unknown; on?: unknown };
    if (typeof withConnection.connection !== "function") return built;
    if (watch && typeof withConnection.on === "function") watch.follow(built as unknown as Parameters<ChangeWatch["follow"]>[0]);
    return withConnection.connection(connection) as B;
  };
  const call = (table?: unknown) => {
    check();
    return bind(table === undefined ? db.queryBuilder() : db(table as string));
  };
  const trx = new Proxy(call, {
    get(_target, property) {
      if (property === "client") return db.client as unknown;
      if (property === "fn") return db.fn;
      if (property === "isTransaction") return true;
      if (property === BOUND_CONNECTION) return ended ? undefined : connection;
      if (property === BOUND_WATCH) return watch;
      if (property === "listenerCount" || property === "emit") return (db[property] as (...a: unknown[]) => unknown).bind(db);
      if (property === "transaction") {
        return () => {
          throw new Error("a transaction inside transactionWithRetry is not supported");
        };
      }
      const value: unknown = (db as unknown as Record<string | symbol, unknown>)[property];
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        check();
        return bind((value as (...a: unknown[]) => unknown).apply(db, args));
      };
    },
  }) as unknown as Knex.Transaction;
  return { trx, end: () => void (ended = true) };
}

/**
 * READ COMMITTED on MySQL (no gap locks, each read sees the latest commit): nothing to ask when
 * the session already runs at it (`readCommitted` of openDatabase), else one `SET TRANSACTION`.
 * SQLite has one writer and needs nothing.
 */
export function readCommitted(db: Knex): Knex.TransactionConfig | undefined {
  return isMysql(db) && !readCommittedSessions.has(clientConfig(db) as object) ? { isolationLevel: "read committed" } : undefined;
}

/** One snapshot for every read of the transaction (InnoDB's REPEATABLE READ), whatever the session's default. */
export function repeatableRead(db: Knex): Knex.TransactionConfig | undefined {
  return isMysql(db) ? { isolationLevel: "repeatable read" } : undefined;
}


/**
 * The transaction of a background job's claim (`forUpdateSkipLocked` and the moves of what
 * it took). On MySQL it runs at READ COMMITTED, so its locking scan locks only the rows it
 * takes: at REPEATABLE READ it would also lock the index gaps it scanned, blocking inserts
 * and other replicas' changes for the claim's duration and letting replicas deadlock. A
 * lost lock conflict is retried.
 */
export function claimTransaction<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return transactionWithRetry(db, fn, { config: readCommitted(db) });
}
