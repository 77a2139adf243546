import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import http from "node:http";
import Koa from "koa";
import knexFactory, { type Knex } from "knex";
import getRawBody from "raw-body";

/**
 * A floor: the least a server must do for one request of the product's API, to measure the
 * product against. Run as its own process (FLOOR_KIND=hmac or db) so its CPU is counted
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
 *
 * Prints one JSON line `{"ready":true,"url":…}` on stdout once it listens.
 */

interface Credential {
  apiKey: string;
  apiSecret: string;
  merchantId: string;
}

const kind = process.env.FLOOR_KIND === "db" ? "db" : "hmac";
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

/** The db floor's two databases: the deposit service's and the payout service's, each made by that service's own migrations (floors.ts). */
let db: { deposits: Knex; payouts: Knex } | undefined;

/** A pool on a database the service's migrations made: the floor never creates a table, so its rows are the product's rows, with their indexes. */
function openDatabase(url: string): Knex {
  const parsed = new URL(url);
  const connection = {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username || "root"),
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.replace(/^\//, ""),
    timezone: "Z",
  };
  return knexFactory({ client: "mysql2", connection, pool: { min: 0, max: 10 } });
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

async function createDeposit(knex: Knex, merchantId: string, body: Record<string, unknown>): Promise<unknown> {
  const now = Date.now();
  const customer = (body.customer ?? {}) as Record<string, unknown>;
  const row = {
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
  await knex.transaction(async (trx) => {
    await trx("deposits").insert(row);
    await trx("outbox").insert({ event_id: `evt_${randomBytes(12).toString("hex")}`, topic: "deposit.v1.deposit_created", payload: Buffer.from(JSON.stringify(row)), created_at: now });
  });
  return {
    transactionId: row.id,
    processId: row.process_id,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    assignedAccount: { bankName: "Floor Bankası", accountName: "Floor Ödeme A.Ş.", iban: row.account_iban },
    checkoutUrl: `http://localhost:8080/checkout?token=${row.checkout_token}`,
    expiresAt: new Date(row.expires_at).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

async function createWithdrawal(knex: Knex, merchantId: string, body: Record<string, unknown>): Promise<unknown> {
  const now = Date.now();
  const row = {
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
  await knex.transaction(async (trx) => {
    await trx("withdrawals").insert(row);
    await trx("outbox").insert({ event_id: `evt_${randomBytes(12).toString("hex")}`, topic: "payout.v1.withdrawal_created", payload: Buffer.from(JSON.stringify(row)), created_at: now });
  });
  return { transactionId: row.id, processId: row.process_id, amount: row.amount, currency: row.currency, status: row.status, createdAt: new Date(now).toISOString() };
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
      const data = path === "/v1/deposit" ? await createDeposit(db.deposits, credential.merchantId, body) : await createWithdrawal(db.payouts, credential.merchantId, body);
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

if (kind === "db") {
  const deposits = process.env.FLOOR_DEPOSIT_DATABASE_URL;
  const payouts = process.env.FLOOR_PAYOUT_DATABASE_URL;
  if (!deposits || !payouts) throw new Error("FLOOR_DEPOSIT_DATABASE_URL and FLOOR_PAYOUT_DATABASE_URL are required for FLOOR_KIND=db");
  db = { deposits: openDatabase(deposits), payouts: openDatabase(payouts) };
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
  void (db ? Promise.all([db.deposits.destroy(), db.payouts.destroy()]) : Promise.resolve()).finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
