import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import http from "node:http";
import Koa from "koa";
import knexFactory, { type Knex } from "knex";
import mysql from "mysql2/promise";
import getRawBody from "raw-body";

/**
 * A floor: the least a server must do for one request of the product's API, to measure the
 * product against. Run as its own process (FLOOR_KIND=hmac, db or raw) so its CPU is counted
 * apart from the load generator's.
 *
 * - hmac: Koa, the raw body, the request signature checked as the gateway does
 *   (timestamp + METHOD + path-with-query + raw body, HMAC-SHA256 hex, constant-time
 *   compare, X-API-Key / X-Timestamp / X-Signature, 300 s tolerance), the success envelope;
 *   no storage. GET /v1/available-banks answers a static bank list, GET /v1/deposit/:id a
 *   static record.
 * - db: the same, plus ONE MySQL transaction (knex + mysql2, pool of 10 as the product) per
 *   POST /v1/deposit or POST /v1/withdraw: the transaction row and an outbox row; 201. The
 *   tables are the product's own, made by the deposit and payout services' migrations in a
 *   database each (floors.ts runs them), so the floor writes the rows the product writes.
 * - raw: the db floor without the query builder: the same rows (built by the same functions),
 *   the same tables made by the same migrations (databases of its own), through mysql2 itself,
 *   a mysql2/promise pool of 10: BEGIN, two prepared INSERTs, COMMIT on one pooled connection.
 *   The db floor's distance to it is what knex costs.
 *
 * Prints one JSON line `{"ready":true,"url":…}` on stdout once it listens.
 */

interface Credential {
  apiKey: string;
  apiSecret: string;
  merchantId: string;
}

const kind = process.env.FLOOR_KIND === "db" || process.env.FLOOR_KIND === "raw" ? process.env.FLOOR_KIND : "hmac";
const credentials = new Map<string, Credential>((JSON.parse(process.env.FLOOR_CREDENTIALS ?? "[]") as Credential[]).map((c) => [c.apiKey, c]));
const TOLERANCE_SECONDS = 300;
const BODY_LIMIT = 65_536;
const UNIX_SECONDS = /^\d{1,15}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const EMPTY = Buffer.alloc(0);

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

function hmac(secret: string, timestamp: string, method: string, path: string, body: Uint8Array): Buffer {
  const mac = createHmac("sha256", secret);
  mac.update(`${timestamp}${method.toUpperCase()}${path}`, "utf8");
  mac.update(body);
  return mac.digest();
}

function envelope(data: unknown): { success: true; data: unknown; timestamp: number } {
  return { success: true, data, timestamp: Math.floor(Date.now() / 1000) };
}

/** About the size and shape of the product's list: 33 banks with logos, then FAST. */
const BANKS = [
  ...Array.from({ length: 33 }, (_, i) => {
    const code = String(10 + i * 3).padStart(4, "0");
    return {
      _id: `bnk_${createHash("sha256").update(code).digest("hex").slice(0, 16)}`,
      name: `Türkiye Floor Bankası ${code} A.Ş.`,
      code,
      minAmount: 1_000,
      maxAmount: 5_000_000,
      logo: `http://localhost:8080/assets/banks/${code}.svg`,
    };
  }),
  { _id: "FAST", name: "FAST", code: "FAST", minAmount: 100, maxAmount: 10_000_000 },
];

/** A value of a row the floors write: the product's columns are strings, BIGINT numbers, booleans and the outbox's binary payload. */
type Value = string | number | boolean | Buffer;
type Row = Record<string, Value>;

/**
 * Where a storing floor writes: ONE transaction of the transaction row and its outbox row.
 * The db and raw floors differ only here; the rows and the answers are built by the same
 * functions below, so the two floors always do the same work.
 */
interface Store {
  insert(table: "deposits" | "withdrawals", row: Row, outbox: Row): Promise<void>;
  close(): Promise<void>;
}

/** The storing floor's two databases: the deposit service's and the payout service's, each made by that service's own migrations (floors.ts). */
let db: { deposits: Store; payouts: Store } | undefined;

function connectionOf(url: string) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username || "root"),
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.replace(/^\//, ""),
    timezone: "Z",
  };
}

/**
 * The db floor: knex on mysql2, a pool of 10 as the product has, on a database the service's
 * migrations made (the floor never creates a table, so its rows are the product's rows, with
 * their indexes).
 */
function knexStore(url: string): Store {
  const knex: Knex = knexFactory({ client: "mysql2", connection: connectionOf(url), pool: { min: 0, max: 10 } });
  return {
    insert: (table, row, outbox) =>
      knex.transaction(async (trx) => {
        await trx(table).insert(row);
        await trx("outbox").insert(outbox);
      }),
    close: () => knex.destroy(),
  };
}

/**
 * The raw floor: the same rows in the same tables through mysql2 itself, no query builder: a
 * mysql2/promise pool of 10, and per request BEGIN, two prepared INSERTs (`execute`, prepared
 * once per connection and cached by mysql2), COMMIT, on one pooled connection.
 */
function rawStore(url: string): Store {
  const pool = mysql.createPool({ ...connectionOf(url), connectionLimit: 10, maxIdle: 10 });
  // The column list of each table's INSERT, from the first row (the row builders always make the same columns).
  const statements = new Map<string, { sql: string; columns: string[] }>();
  const statement = (table: string, row: Row) => {
    let known = statements.get(table);
    if (!known) {
      const columns = Object.keys(row);
      known = { sql: `INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`, columns };
      statements.set(table, known);
    }
    return { sql: known.sql, values: known.columns.map((c) => row[c]!) };
  };
  return {
    async insert(table, row, outbox) {
      const first = statement(table, row);
      const second = statement("outbox", outbox);
      const connection = await pool.getConnection();
      try {
        await connection.query("BEGIN");
        await connection.execute(first.sql, first.values);
        await connection.execute(second.sql, second.values);
        await connection.query("COMMIT");
      } catch (err) {
        // A connection whose transaction could not be rolled back is not given back to the pool.
        await connection.query("ROLLBACK").then(
          () => connection.release(),
          () => connection.destroy(),
        );
        throw err;
      }
      connection.release();
    },
    close: () => pool.end(),
  };
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The product's deposit row for a POST /v1/deposit body: every column the deposit service writes at creation. */
function depositRow(merchantId: string, body: Record<string, unknown>, now: number) {
  const customer = (body.customer ?? {}) as Record<string, unknown>;
  return {
    id: `dep_${randomBytes(12).toString("hex")}`,
    merchant_id: merchantId,
    process_id: text(body.processId),
    status: "pending",
    amount: Number(body.amount),
    requested_amount: Number(body.amount),
    currency: text(body.currency) || "TRY",
    account_id: "acc_floor",
    account_bank_id: "bnk_floor",
    account_bank_name: "Floor Bankası",
    account_name: "Floor Ödeme A.Ş.",
    account_iban: "TR330006100519786457841326",
    reference: randomBytes(6).toString("hex").toUpperCase(),
    checkout_token: randomBytes(24).toString("base64url"),
    customer_id: text(customer.id),
    customer_name: text(customer.name),
    customer_username: text(customer.username),
    sequence: 1,
    sandbox: false,
    expires_at: now + 30 * 60_000,
    created_at: now,
    updated_at: now,
  };
}

/** The product's withdrawal row for a POST /v1/withdraw body. */
function withdrawalRow(merchantId: string, body: Record<string, unknown>, now: number) {
  return {
    id: `wdr_${randomBytes(12).toString("hex")}`,
    merchant_id: merchantId,
    process_id: text(body.processId),
    status: "pending",
    amount: Number(body.amount),
    currency: text(body.currency) || "TRY",
    iban: text(body.iban).replace(/\s+/g, "").toUpperCase(),
    account_name: text(body.accountName),
    user_id: text(body.userId),
    user_name: text(body.userName),
    name: text(body.name),
    sequence: 1,
    sandbox: false,
    created_at: now,
    updated_at: now,
  };
}

/** The outbox row of a created transaction: its event, the row as payload. */
function outboxRow(topic: string, row: Row, now: number): Row {
  return { event_id: `evt_${randomBytes(12).toString("hex")}`, topic, payload: Buffer.from(JSON.stringify(row)), created_at: now };
}

/** The 201 answer's data for a created deposit or withdrawal, from its row. */
function createdAnswer(row: ReturnType<typeof depositRow> | ReturnType<typeof withdrawalRow>): Record<string, unknown> {
  const common = { transactionId: row.id, processId: row.process_id, amount: row.amount, currency: row.currency, status: row.status };
  if (!("checkout_token" in row)) return { ...common, createdAt: new Date(row.created_at).toISOString() };
  return {
    ...common,
    assignedAccount: { bankName: row.account_bank_name, accountName: row.account_name, iban: row.account_iban },
    checkoutUrl: `http://localhost:8080/checkout?token=${row.checkout_token}`,
    expiresAt: new Date(row.expires_at).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** POST /v1/deposit or /v1/withdraw on a storing floor: the row and its outbox row in one transaction, then the answer. */
async function create(path: "/v1/deposit" | "/v1/withdraw", stores: { deposits: Store; payouts: Store }, merchantId: string, body: Record<string, unknown>): Promise<unknown> {
  const now = Date.now();
  if (path === "/v1/deposit") {
    const row = depositRow(merchantId, body, now);
    await stores.deposits.insert("deposits", row, outboxRow("deposit.v1.deposit_created", row, now));
    return createdAnswer(row);
  }
  const row = withdrawalRow(merchantId, body, now);
  await stores.payouts.insert("withdrawals", row, outboxRow("payout.v1.withdrawal_created", row, now));
  return createdAnswer(row);
}

const app = new Koa();
app.silent = true;
app.use(async (ctx) => {
  try {
    const length = ctx.get("Content-Length");
    const raw: Buffer = await getRawBody(ctx.req, { limit: BODY_LIMIT, length: length === "" ? undefined : length });
    const credential = credentials.get(ctx.get("X-API-Key"));
    if (!credential) throw new Refusal(401, "INVALID_API_KEY");
    const timestamp = ctx.get("X-Timestamp");
    const signature = ctx.get("X-Signature");
    if (timestamp === "") throw new Refusal(401, "MISSING_TIMESTAMP");
    if (signature === "") throw new Refusal(401, "MISSING_SIGNATURE");
    if (!UNIX_SECONDS.test(timestamp) || Math.abs(Number(timestamp) - Math.floor(Date.now() / 1000)) > TOLERANCE_SECONDS) throw new Refusal(401, "TIMESTAMP_EXPIRED");
    if (!HEX_SHA256.test(signature) || !timingSafeEqual(hmac(credential.apiSecret, timestamp, ctx.method, ctx.originalUrl, raw.length ? raw : EMPTY), Buffer.from(signature, "hex"))) {
      throw new Refusal(401, "INVALID_SIGNATURE");
    }
    const path = ctx.path;
    if (ctx.method === "GET" && path === "/v1/available-banks") {
      ctx.body = envelope({ banks: BANKS });
      return;
    }
    if (ctx.method === "GET" && path.startsWith("/v1/deposit/")) {
      const id = decodeURIComponent(path.slice("/v1/deposit/".length));
      const at = new Date(0).toISOString();
      ctx.body = envelope({ transactionId: id, type: "deposit", processId: "floor", amount: 50_000, currency: "TRY", status: "pending", createdAt: at, expiresAt: at });
      return;
    }
    if (ctx.method === "POST" && db && (path === "/v1/deposit" || path === "/v1/withdraw")) {
      if (!ctx.is("application/json")) throw new Refusal(415, "UNSUPPORTED_MEDIA_TYPE");
      const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      const data = await create(path, db, credential.merchantId, body);
      ctx.status = 201;
      ctx.body = envelope(data);
      return;
    }
    throw new Refusal(404, "NOT_FOUND");
  } catch (err) {
    const refusal = err instanceof Refusal ? err : new Refusal(500, "INTERNAL_ERROR");
    if (!(err instanceof Refusal)) process.stderr.write(`floor: ${(err as Error).stack ?? String(err)}\n`);
    ctx.status = refusal.status;
    ctx.body = { success: false, error: { code: refusal.code, message: refusal.code }, timestamp: Math.floor(Date.now() / 1000) };
  }
});

if (kind !== "hmac") {
  const deposits = process.env.FLOOR_DEPOSIT_DATABASE_URL;
  const payouts = process.env.FLOOR_PAYOUT_DATABASE_URL;
  if (!deposits || !payouts) throw new Error(`FLOOR_DEPOSIT_DATABASE_URL and FLOOR_PAYOUT_DATABASE_URL are required for FLOOR_KIND=${kind}`);
  const open = kind === "raw" ? rawStore : knexStore;
  db = { deposits: open(deposits), payouts: open(payouts) };
}
const handle = app.callback();
// Fire-and-forget is safe: Koa's handler catches every error itself (the middleware above
// answers with the envelope, ctx.onerror behind it), so its promise never rejects.
const server = http.createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => void handle(req, res));
server.keepAliveTimeout = 5_000;
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", resolve));
process.stdout.write(`${JSON.stringify({ ready: true, kind, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);

const stop = () => {
  server.close();
  server.closeAllConnections();
  void (db ? Promise.all([db.deposits.close(), db.payouts.close()]) : Promise.resolve()).finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
