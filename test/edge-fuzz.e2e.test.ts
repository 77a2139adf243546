import test, { type ExecutionContext } from "ava";
import fc from "fast-check";
import knexFactory, { type Knex } from "knex";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { startGateway, type RunningGateway } from "@payments/gateway";
import { createLogger, type RunningServices } from "@payments/kit";
import { sign, unixTimestamp } from "@payments/signing";
import { CallbackReceiver, createServiceClient, createTestDatabase, deleteTestStream, eventually, eventuallyValue, jetStreamTestEnv, mysqlTestServer, type TestDatabase, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { signedFetch, type Credentials } from "./helpers.js";
import { refusalOf } from "../gateway/src/client-error.js";
import { OpenApiChecker } from "./openapi-check.js";
import {
  anyBody,
  applyStrings,
  hostileComponent,
  hostileHeaders,
  hostileText,
  oddMethod,
  operationsOf,
  queryFor,
  rawBytes,
  refusedBody,
  schemaBreakers,
  serialiseBody,
  targetFor,
  withHostileExtras,
  withHostileStrings,
  type BodyCase,
  type Json,
  type Operation,
  type Schema,
} from "./openapi-arbitraries.js";
import { sendRaw, type WireAnswer, type WireRequest } from "./raw-http.js";
import { AUDIT_TABLE } from "@payments/access";

/*
 * Fuzzing at the edge: fast-check over every route of the OpenAPI document the gateway serves,
 * and over its HTML and asset routes, with the requests sent byte for byte (raw-http.ts) to a
 * gateway in front of all five services in this process on MariaDB (one database per service,
 * as the all-in-one derives them) and JetStream. Before and after every request the test takes
 * a checksum of every table of every service database; a request that changed one fails.
 *
 * What counts as the envelope: every answer of a JSON route is the envelope of api.md
 * (`success`, `data` or `error.code` + `error.message`, `timestamp`), a failure has a 4xx status
 * and the success shape only with a 2xx, and the answer is one the OpenAPI document describes
 * (OpenApiChecker). The HTML and asset routes (checkout page, docs, bank logos, probes) are held
 * to less: no 5xx, and a failure is either the JSON failure envelope or the route's own HTML
 * page (the checkout's "link not valid" page); their 2xx bodies are the files they serve. No
 * failure, and no JSON or HTML answer, may show a stack trace, a source path, SQL or a driver's
 * error text.
 *
 * Requests Node's HTTP parser refuses before the gateway sees them (a NUL or a bare LF in a
 * header, a space in the target, an unknown method) are answered by the gateway's clientError
 * listener (client-error.ts): 400 VALIDATION_ERROR "request: is not a well-formed HTTP/1.1
 * request" (431 HEADERS_TOO_LARGE past 16 KiB of headers), in the envelope, with an
 * X-Request-Id. That answer is accepted wherever a byte could have made the request
 * unparseable, and held to the same rules (envelope, 4xx, nothing changed); a connection
 * closed without any answer is a failure.
 *
 * A signed request with one byte changed: 401 with an authentication code. Two answers come
 * first and are accepted where they can: Node's parser refusing a byte the request line or a
 * header line may not hold (above), and the router's 404/405 when the change was to the method
 * or to the path before the query, so that the request no longer names a route: app.ts settles
 * the route before it reads the body or a credential, and an unsigned caller learns nothing
 * from it that the public document does not say. Two changes leave the same request and are
 * left out: a letter's case in a header name (HTTP header names are case-insensitive), and a
 * hex digit's case in X-Signature (the gateway decodes the hex; the bytes compared are equal).
 *
 * Node keeps two kinds of request from the app unless the server listens for them: CONNECT
 * (closed without a word) and an Expect other than 100-continue (a bare 417). The fuzzing
 * found both; the gateway's server listens for both now (gateway/src/server.ts), and the
 * generators send them like any other (gateway/test/client-error.test.ts pins each).
 *
 * Runs: FUZZ_RUNS sets every property's number of runs (defaults below keep the file near a
 * minute on a loaded 2-core machine); FUZZ_SEED and FUZZ_PATH, printed on a failure, replay it.
 */

const TOKEN = "edge-fuzz-internal-token";
const BODY_LIMIT = 65_536;
const js = jetStreamTestEnv();
const runsOf = (fallback: number) => (process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : fallback);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/**
 * The runs, the seed and path to replay, and a report that names them and the problem without
 * printing the counterexample's bytes (a 64 KiB body would drown it).
 */
const fuzzParameters = <T>(numRuns: number): fc.Parameters<T> => ({
  numRuns,
  ...(seed !== undefined ? { seed } : {}),
  ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
  reporter: (details) => {
    if (!details.failed) return;
    const problem = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `Property failed after ${details.numRuns} runs, shrunk ${details.numShrinks} times; replay with FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ""}\n${problem}`,
    );
  },
});

let database: TestDatabase | undefined;
let services: RunningServices | undefined;
let gateway: RunningGateway | undefined;
let receiver: CallbackReceiver | undefined;
let admin: Knex | undefined;
let checker: OpenApiChecker;
let operations: Operation[] = [];
/** The gateway's log lines at error level: a 500 is logged there. */
const errorLines: string[] = [];

let merchant: Credentials & { id: string };
/** Ids of what the merchant has, for path parameters and the signed requests' targets. */
const fixture = {
  paidDeposit: "",
  paidProcessId: "",
  pendingForCancel: "",
  pendingForPay: "",
  pendingForExpire: "",
  checkoutToken: "",
  withdrawal: "",
  withdrawalProcessId: "",
  event: "",
};
/** Every table of every service database, `db`.`table`, for the checksums. */
let tables: string[] = [];

const gw = () => {
  if (!gateway) throw new Error("the gateway did not start");
  return gateway.url;
};

test.before(async () => {
  database = await createTestDatabase();
  services = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: {
      ...js,
      DATABASE_URL: database.url,
      INTERNAL_API_TOKEN: TOKEN,
      MASTER_KEY: "e".repeat(64),
      LOG_LEVEL: "fatal",
      // Withdrawals stay pending: nothing moves by itself while the fuzzing compares checksums.
      PAYOUT_WORKER: "0",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_POLL_INTERVAL: "50ms",
      CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
    },
    receivingAccounts: true,
  });
  const url = services.server.url;
  await createServiceClient(BankCatalogService, url, { token: TOKEN }).seedSandboxAccounts({});
  receiver = await new CallbackReceiver().start();
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "error",
      INTERNAL_API_TOKEN: TOKEN,
      BODY_LIMIT: String(BODY_LIMIT),
      // Generous limits: the fuzzing sends hundreds of requests a second from one address and one key.
      RATE_LIMIT_RPS: "1000000",
      RATE_LIMIT_BURST: "1000000",
      AUTH_FAILURE_LIMIT_RPS: "0",
      CHECKOUT_RATE_LIMIT_RPS: "0",
    },
    logger: createLogger({ service: "gateway", level: "error", destination: { write: (line: string) => void errorLines.push(line) } }),
    bus: services.bus,
    merchantUrl: url,
    bankCatalogUrl: url,
    depositUrl: url,
    payoutUrl: url,
    callbackUrl: url,
  });

  const made = await createServiceClient(MerchantService, url, { token: TOKEN }).createMerchant({
    name: "Edge Fuzz Shop",
    allowedIps: ["127.0.0.1", "::1"],
    callbackUrl: receiver.url("/hooks"),
    sandbox: true,
  });
  merchant = { id: made.merchant!.id, apiKey: made.merchant!.apiKey, apiSecret: made.apiSecret };

  // The document as the gateway serves it: the routes to fuzz, and the answers to hold them to.
  const served = await fetch(`${gw()}/openapi.json`);
  const document = (await served.json()) as ConstructorParameters<typeof OpenApiChecker>[0];
  checker = new OpenApiChecker(document);
  operations = operationsOf(document);

  await makeFixture();
  admin = knexFactory({ client: "mysql2", connection: mysqlConnection(), pool: { min: 1, max: 1 } });
  const rows = await admin<{ TABLE_SCHEMA: string; TABLE_NAME: string; TABLE_TYPE: string }>("information_schema.tables")
    .where("TABLE_SCHEMA", "like", `${database.name}%`)
    .andWhere("TABLE_TYPE", "BASE TABLE")
    .select("TABLE_SCHEMA", "TABLE_NAME");
  if (rows.length < 10) throw new Error(`only ${rows.length} tables in ${database.name}*`);
  // The audit is a log of attempts, not state: a refused request may well be recorded there (a secret
  // read asked for, an identity refused). Every other table must stay as it was.
  tables = rows.filter((r) => !r.TABLE_NAME.startsWith(AUDIT_TABLE)).map((r) => `\`${r.TABLE_SCHEMA}\`.\`${r.TABLE_NAME}\``).sort();
  // Settled: every callback delivered, the outbox relayed; two checksums a second apart agree.
  await eventually(async () => JSON.stringify(await snapshot()) === JSON.stringify(await new Promise((r) => setTimeout(r, 1_000)).then(snapshot)), "the services to settle", 30_000, 100);
});

test.after.always(async () => {
  await admin?.destroy();
  await gateway?.stop();
  await receiver?.stop();
  await services?.stop();
  await database?.drop();
  await deleteTestStream(js).catch(() => undefined);
});

function mysqlConnection() {
  const server = new URL(mysqlTestServer);
  return { host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || "root"), password: decodeURIComponent(server.password) };
}

const CUSTOMER = { id: "cus_fuzz", name: "Ayşe Yılmaz", username: "ayse" };

/** What the merchant holds before any fuzzing: a paid deposit, three pending ones, a pending withdrawal, callback events. */
async function makeFixture(): Promise<void> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await signedFetch(gw(), merchant, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json.data as Record<string, unknown>;
  };
  const deposit = async (processId: string) => (await call("POST", "/v1/deposit", { processId, amount: 50_000, customer: CUSTOMER })) as { transactionId: string; paymentUrl?: string; checkoutUrl?: string };
  const paid = await deposit("fixture-paid");
  fixture.paidDeposit = paid.transactionId;
  fixture.paidProcessId = "fixture-paid";
  await call("POST", `/v1/sandbox/deposit/${paid.transactionId}/pay`, {});
  const pending = await deposit("fixture-pending-cancel");
  fixture.pendingForCancel = pending.transactionId;
  fixture.checkoutToken = /[?&]token=([A-Za-z0-9_-]+)/.exec(JSON.stringify(pending))?.[1] ?? "";
  if (!fixture.checkoutToken) throw new Error(`no checkout token in ${JSON.stringify(pending)}`);
  fixture.pendingForPay = (await deposit("fixture-pending-pay")).transactionId;
  fixture.pendingForExpire = (await deposit("fixture-pending-expire")).transactionId;
  const withdrawal = (await call("POST", "/v1/withdraw", withdrawalBody("fixture-payout", 1_000))) as { transactionId: string };
  fixture.withdrawal = withdrawal.transactionId;
  fixture.withdrawalProcessId = "fixture-payout";
  // The paid deposit's callback event, delivered (the settling below waits for the rest).
  const events = await eventuallyValue(async () => {
    const listed = (await call("GET", `/v1/events?transactionId=${fixture.paidDeposit}`)) as { items: Array<{ id: string }> };
    return listed.items.length > 0 && (receiver?.received.length ?? 0) > 0 ? listed : undefined;
  }, "the paid deposit's callback", 15_000, 100);
  fixture.event = events.items[0]!.id;
}

function withdrawalBody(processId: string, amount: number) {
  return { processId, amount, accountName: "Mehmet Demir", iban: "TR640004600000187230459611", userId: "cus_fuzz", userName: "mehmet", name: "Mehmet Demir" };
}

/** A checksum of every table of every service database (CHECKSUM TABLE: contents, not metadata). */
async function snapshot(): Promise<Record<string, string>> {
  if (!admin) throw new Error("no database connection");
  const [rows] = (await admin.raw(`CHECKSUM TABLE ${tables.join(", ")}`)) as [Array<{ Table: string; Checksum: string | number | null }>];
  return Object.fromEntries(rows.map((r) => [r.Table, String(r.Checksum)]));
}

function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys({ ...before, ...after }).filter((table) => before[table] !== after[table]);
}

// ------------------------------------------------------------------------------ judging an answer

/** The answers of the gateway's clientError listener (client-error.ts), by status. */
const PARSER_REFUSALS = new Map(["HPE_HEADER_OVERFLOW", "HPE_CHUNK_EXTENSIONS_OVERFLOW", "ERR_HTTP_REQUEST_TIMEOUT", undefined].map((code) => refusalOf(code)).map((r) => [r.status, r]));

/** Whether the answer is the gateway's clientError one: the request never reached the app. */
function parserRefusal(res: WireAnswer): boolean {
  const refusal = PARSER_REFUSALS.get(res.status);
  if (!refusal) return false;
  try {
    const error = (JSON.parse(res.text) as { error?: { code?: string; message?: string } }).error;
    return error?.code === refusal.code && error.message === refusal.message;
  } catch {
    return false;
  }
}

/** Stack frames, source paths, SQL, driver and ORM names. */
const LEAK = /\bat .+:\d+:\d+|\.[cm]?[tj]s:\d+|node_modules|\bSELECT\b.+\bFROM\b|\bINSERT INTO\b|\bUPDATE\b.+\bSET\b|\bDELETE FROM\b|(?<![\w-])(?:SQLITE_|ER_[A-Z_]{3,}|knex|mysql2?\b|MariaDB|ConnectError|TypeError|RangeError|ReferenceError|SyntaxError|\[object Object\])/i;

interface Rules {
  /** A 2xx is a correct answer (a read, or a public route). */
  mayPass: boolean;
  /** Its failures may be an HTML page of its own instead of the JSON envelope (checkout, docs). */
  html?: boolean;
}

/**
 * The one redirect there is: the gateway's root leads a person to the API reference (GET or HEAD
 * of the path `/`, whatever query or fragment follows it → 302 /docs), answered by the router
 * before any credential is read.
 */
function rootToDocs(req: WireRequest, res: WireAnswer): boolean {
  const target = typeof req.target === "string" ? req.target : req.target.toString("latin1");
  const path = target.split("#")[0]!.split("?")[0];
  return (req.method === "GET" || req.method === "HEAD") && path === "/" && res.status === 302 && /\/docs$/.test(res.headers.location ?? "");
}

/** Everything wrong with an answer, as text; empty when it is right. */
function answerProblems(req: WireRequest, res: WireAnswer, rules: Rules): string[] {
  const problems: string[] = [];
  if (res.status === 0) return [`no answer (${res.connectionError ?? "connection closed"})`];
  if (res.status >= 500) problems.push(`status ${res.status}`);
  if (!res.headers["x-request-id"]) problems.push("no X-Request-Id");
  const type = (res.headers["content-type"] ?? "").toLowerCase();
  const isJson = type.startsWith("application/json");
  const isHtml = type.startsWith("text/html");
  const head = req.method === "HEAD";
  if (res.status >= 200 && res.status < 300 && !rules.mayPass) problems.push(`accepted with ${res.status}`);
  if (res.status >= 300 && res.status < 400 && !rootToDocs(req, res)) problems.push(`redirect ${res.status}`);
  if (!head && res.status >= 400 && !isJson && !(rules.html && isHtml)) problems.push(`a failure as ${type || "no Content-Type"}, not the JSON envelope`);
  // The OpenAPI document is served as itself, not in an envelope (the document describes it).
  const theDocument = res.status === 200 && /^\/openapi\.json\/?(\?|$)/.test(typeof req.target === "string" ? req.target : req.target.toString("latin1"));
  if (!head && isJson && !theDocument) {
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(res.text) as Record<string, unknown>;
    } catch {
      problems.push("Content-Type says JSON but the body is not JSON");
    }
    if (body) problems.push(...envelopeProblems(body, res.status));
    if (body && !parserRefusal(res)) {
      try {
        // A fragment (`#…`) is no part of the path the router sees.
        const target = (typeof req.target === "string" ? req.target : req.target.toString("latin1")).split("#")[0]!;
        checker.check(req.method, target, res.status, body, res.headers["content-type"]);
      } catch (err) {
        problems.push(`not as documented: ${(err as Error).message.slice(0, 600)}`);
      }
    }
  }
  if (!head && (res.status >= 400 || isJson || isHtml)) {
    const leak = LEAK.exec(res.text);
    if (leak) problems.push(`the body shows ${JSON.stringify(leak[0])}`);
  }
  return problems;
}

function envelopeProblems(body: Record<string, unknown>, status: number): string[] {
  const problems: string[] = [];
  const keys = Object.keys(body).sort().join(",");
  if (!Number.isInteger(body.timestamp)) problems.push("timestamp is not an integer");
  if (body.success === true) {
    if (keys !== "data,success,timestamp") problems.push(`success envelope with keys ${keys}`);
    if (status < 200 || status >= 300) problems.push(`success envelope with status ${status}`);
  } else if (body.success === false) {
    if (keys !== "error,success,timestamp") problems.push(`failure envelope with keys ${keys}`);
    const error = body.error as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    if (typeof error?.code !== "string" || !/^[A-Z][A-Z_]*$/.test(error.code)) problems.push(`error.code ${JSON.stringify(error?.code)}`);
    if (typeof error?.message !== "string" || error.message.length === 0) problems.push("error.message is not a non-empty string");
    if (error && Object.keys(error).some((k) => !["code", "message", "details"].includes(k))) problems.push(`error has keys ${Object.keys(error).join(",")}`);
    if (error?.details !== undefined && (typeof error.details !== "object" || error.details === null || Object.values(error.details).some((v) => typeof v !== "string"))) problems.push("error.details is not an object of strings");
    if (status < 400 || status >= 500) problems.push(`failure envelope with status ${status}`);
  } else {
    problems.push(`success is ${JSON.stringify(body.success)}`);
  }
  return problems;
}

/** Requests sent by probe, for the log of each property. */
let sent = 0;

/** Logs how many requests the property sent, and their statuses (those Node's parser answered apart). */
function logSent(t: ExecutionContext, from: number, started: number): void {
  t.log(`${sent - from} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  statuses.clear();
}
const statuses = new Map<string, number>();

/** A readable line for a request, for failure messages. */
function describe(req: WireRequest, what?: string): string {
  const target = typeof req.target === "string" ? req.target : req.target.toString("latin1");
  const headers = (req.headers ?? []).map(([n, v]) => `${n}: ${(typeof v === "string" ? v : v.toString("latin1")).slice(0, 80)}`).join(" | ");
  return `${JSON.stringify(req.method.slice(0, 40))} ${JSON.stringify(target.slice(0, 300))} [${headers.slice(0, 600)}] body ${req.body?.length ?? 0} bytes${what ? ` (${what})` : ""}`;
}

/**
 * Sends the request between two checksums of every table and returns everything wrong: the
 * answer's problems, a table that changed, an error the gateway logged.
 */
async function probe(req: WireRequest, rules: Rules, extra?: (res: WireAnswer) => string[]): Promise<{ res: WireAnswer; problems: string[] }> {
  sent++;
  const before = await snapshot();
  const logged = errorLines.length;
  const res = await sendRaw(gw(), req);
  const code = /^\{"success":false,"error":\{"code":"([A-Z_]+)"/.exec(res.text)?.[1];
  const key = parserRefusal(res) ? `${res.status} from Node's parser` : code ? `${res.status} ${code}` : String(res.status);
  statuses.set(key, (statuses.get(key) ?? 0) + 1);
  const after = await snapshot();
  const problems = [...answerProblems(req, res, rules), ...(extra?.(res) ?? [])];
  const changed = changedTables(before, after);
  if (changed.length > 0) problems.push(`changed ${changed.join(", ")}`);
  const errors = errorLines.slice(logged);
  if (errors.length > 0) problems.push(`the gateway logged an error: ${errors.join("").slice(0, 800)}`);
  return { res, problems };
}

function assertClean(req: WireRequest, result: { res: WireAnswer; problems: string[] }, what?: string): void {
  if (result.problems.length > 0) {
    throw new Error(`${result.problems.join("; ")}\nrequest: ${describe(req, what)}\nanswer: ${result.res.status} ${result.res.headers["content-type"] ?? ""} ${result.res.text.slice(0, 500)}`);
  }
}

function timeoutFor(t: ExecutionContext, runs: number): void {
  t.timeout(Math.max(120_000, runs * 1_000));
}

// ------------------------------------------------------------------------------ valid requests

/** A JSON object body the operation accepts, built from its documented example (processId made fresh). */
function validBodyOf(op: Operation, fresh: string): Record<string, Json> {
  if (op.operationId === "createWithdrawal") return withdrawalBody(fresh, 100);
  if (op.operationId === "createDeposit") return { processId: fresh, amount: 50_000, customer: { ...CUSTOMER } };
  const example = structuredClone(op.body?.example ?? {});
  if (typeof example.processId === "string") example.processId = fresh;
  return example;
}

/** Known ids, by path parameter name, that name the merchant's own transactions and events. */
function knownIds(name: string): string[] {
  if (name === "eventId") return [fixture.event];
  return [fixture.paidDeposit, fixture.pendingForCancel, fixture.pendingForPay, fixture.withdrawal];
}

/**
 * The valid signed request of each signed operation: the target (with the fixture's ids and
 * required query parameters) and body. Every signed operation of the document must be here.
 */
function validRequestOf(op: Operation, fresh: string): { target: string; body: Buffer } {
  const day = new Date().toISOString().slice(0, 10);
  const targets: Record<string, string> = {
    listAvailableBanks: "/v1/available-banks",
    createDeposit: "/v1/deposit",
    getDepositByProcessId: `/v1/deposit?processId=${fixture.paidProcessId}`,
    getDeposit: `/v1/deposit/${fixture.paidDeposit}`,
    cancelDeposit: `/v1/deposit/${fixture.pendingForCancel}/cancel`,
    createWithdrawal: "/v1/withdraw",
    getWithdrawalByProcessId: `/v1/withdraw?processId=${fixture.withdrawalProcessId}`,
    getWithdrawal: `/v1/withdraw/${fixture.withdrawal}`,
    cancelWithdrawal: `/v1/withdraw/${fixture.withdrawal}/cancel`,
    getBalance: "/v1/balance",
    getStatement: `/v1/statement?from=${day}&to=${day}`,
    listTransactions: "/v1/transactions?limit=5",
    listEvents: "/v1/events?limit=5",
    getEvent: `/v1/events/${fixture.event}`,
    redeliverEvent: `/v1/events/${fixture.event}/redeliver`,
    sandboxPayDeposit: `/v1/sandbox/deposit/${fixture.pendingForPay}/pay`,
    sandboxExpireDeposit: `/v1/sandbox/deposit/${fixture.pendingForExpire}/expire`,
  };
  const target = targets[op.operationId];
  if (target === undefined) throw new Error(`no valid request of ${op.operationId} here: add one to validRequestOf`);
  const body = op.method === "POST" && op.body ? Buffer.from(JSON.stringify(validBodyOf(op, fresh))) : Buffer.alloc(0);
  return { target, body };
}

function authHeaders(method: string, target: string, body: Buffer, credentials: Credentials = merchant): Array<[string, string]> {
  const timestamp = unixTimestamp();
  return [
    ["X-API-Key", credentials.apiKey],
    ["X-Timestamp", timestamp],
    ["X-Signature", sign(credentials.apiSecret, { timestamp, method, path: target, body })],
  ];
}

let freshCounter = 0;
const fresh = (prefix: string) => `${prefix}-${process.pid}-${++freshCounter}`;

// ------------------------------------------------------------------------------ 1. anything, unsigned

test.serial("every documented route: random methods, targets, headers and bodies without a valid signature get a 4xx envelope and change nothing", async (t) => {
  const runs = runsOf(1_200);
  timeoutFor(t, runs);
  const [from, started] = [sent, Date.now()];
  t.true(operations.length >= 17, `the document has the routes (${operations.length})`);
  t.log(`${operations.length} operations; ${tables.length} tables checksummed around every request`);
  const realKey = fc.constantFrom<Array<[string, string]>>([["X-API-Key", merchant.apiKey]], [["X-API-Key", merchant.apiKey], ["X-Timestamp", unixTimestamp()], ["X-Signature", "0".repeat(64)]], []);
  const request = fc
    .constantFrom(...operations)
    .chain((op) =>
      fc.record({
        op: fc.constant(op),
        method: fc.oneof({ weight: 3, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: oddMethod }),
        target: targetFor(op, fc.constantFrom(...knownIds(op.pathParameters[0] ?? "transactionId"))),
        auth: realKey,
        headers: hostileHeaders,
        body: anyBody(JSON.stringify(op.body ? validBodyOf(op, "unsigned") : {}), BODY_LIMIT),
      }),
    );
  await fc.assert(
    fc.asyncProperty(request, async ({ op, method, target, auth, headers, body }) => {
      const req: WireRequest = { method, target, headers: [...auth, ...(body?.headers ?? []), ...headers], ...(body ? { body: body.bytes, framing: body.framing ?? "length" } : {}) };
      // Only the public document may be read without a signature.
      assertClean(req, await probe(req, { mayPass: !op.signed }), body?.what);
    }),
    fuzzParameters(runs),
  );
  logSent(t, from, started);
  t.pass();
});

// ------------------------------------------------------------------------------ 2. signed, hostile

/** Body changes that pass the gateway's own checks but that the services must refuse (so that hostile text reaches them, and nothing is stored). */
function serviceBreakers(op: Operation): Array<{ what: string; apply(body: Record<string, Json>): void }> {
  switch (op.operationId) {
    case "createDeposit":
      return [
        { what: "a processId already used", apply: (b) => void (b.processId = fixture.paidProcessId) },
        { what: "an amount above every bank's maximum", apply: (b) => void (b.amount = Number.MAX_SAFE_INTEGER) },
        { what: "a bank that does not exist", apply: (b) => void (b.bankCode = "bnk_doesnotexist00000000") },
        { what: "a currency not configured", apply: (b) => void (b.currency = "XAU") },
        { what: "metadata over 8 KiB", apply: (b) => void (b.metadata = { ...(typeof b.metadata === "object" && b.metadata !== null && !Array.isArray(b.metadata) ? b.metadata : {}), pad: "x".repeat(9_000) }) },
      ];
    case "createWithdrawal":
      return [
        { what: "a processId already used", apply: (b) => void (b.processId = fixture.withdrawalProcessId) },
        { what: "more than the balance", apply: (b) => void (b.amount = Number.MAX_SAFE_INTEGER) },
        { what: "an IBAN of 25 characters", apply: (b) => void (b.iban = "TR64000460000018723045961") },
        { what: "a bank that does not exist", apply: (b) => void (b.bankId = "bnk_doesnotexist00000000") },
        { what: "a currency not configured", apply: (b) => void (b.currency = "XAU") },
      ];
    default:
      return [];
  }
}

/** A hostile id that names none of the merchant's things. */
const unknownId = fc.oneof({ weight: 8, arbitrary: hostileComponent }, { weight: 1, arbitrary: rawBytes }).filter((b) => !knownIds("transactionId").includes(b.toString("latin1")) && b.toString("latin1") !== fixture.event);

/**
 * One signed request the gateway must not act on: what it carries is hostile, and one thing in
 * it makes it invalid (a breaker in the body, an id the merchant does not have, a body no
 * route accepts), or it is a read. Signed with the merchant's real credentials.
 */
function hostileSignedRequest(op: Operation): fc.Arbitrary<{ method: string; target: Buffer; body?: BodyCase; headers: Array<[string, string | Buffer]> }> {
  const validText = JSON.stringify(op.body ? validBodyOf(op, "x") : {});
  const headers = hostileHeaders.map((hs) => hs.filter(([name]) => !/^(x-api-key|x-timestamp|x-signature|content-type|content-encoding|content-length|transfer-encoding)$/i.test(name)));
  if (op.method === "GET") {
    return fc.record({ method: fc.constant("GET"), target: targetFor(op, fc.constantFrom(...knownIds(op.pathParameters[0] ?? "transactionId"))), headers });
  }
  // As often a check of the services' (the hostile rest of the body reaches them) as one of the schema's.
  const breakerOf = (schema: Schema) => {
    const service = serviceBreakers(op);
    return service.length > 0 ? fc.oneof(fc.constantFrom(...schemaBreakers(schema)), fc.constantFrom(...service)) : fc.constantFrom(...schemaBreakers(schema));
  };
  const brokenBody: fc.Arbitrary<BodyCase> = op.body
    ? fc.tuple(breakerOf(op.body.schema), withHostileStrings(op.body.schema), withHostileExtras(op.body.schema), fc.uuid()).map(([breaker, strings, extras, id]) => {
        const body = validBodyOf(op, `fuzz-${id}`);
        applyStrings(body, [...strings, ...extras]);
        // Last, so nothing hostile undoes it.
        breaker.apply(body);
        const hostile = [...strings, ...extras].map((s) => JSON.stringify(s.path.join(".")).slice(0, 40)).join(", ");
        return { bytes: Buffer.from(serialiseBody(body)), headers: [["Content-Type", "application/json"]], what: `${breaker.what}; hostile ${hostile || "nothing"}` };
      })
    : refusedBody(validText, BODY_LIMIT);
  const options: Array<fc.Arbitrary<{ method: string; target: Buffer; body?: BodyCase; headers: Array<[string, string | Buffer]> }>> = [
    // The route's own target with a known id (or none), and a body it must refuse.
    fc.record({ method: fc.constant("POST"), target: targetFor(op, fc.constantFrom(...knownIds(op.pathParameters[0] ?? "transactionId"))).filter((t) => !op.pathParameters.length || knownIds(op.pathParameters[0]!).some((id) => t.includes(id))), body: fc.oneof(brokenBody, refusedBody(validText, BODY_LIMIT)), headers }),
  ];
  if (op.pathParameters.length > 0) {
    // An id the merchant does not have, and any body at all: hostile text reaches the service, which finds nothing.
    const unknownTarget = fc.tuple(fc.array(unknownId, { minLength: op.pathParameters.length, maxLength: op.pathParameters.length }), queryFor(op)).map(([ids, query]) => {
      let i = 0;
      return Buffer.concat([...op.template.split(/(\{[^}]+\})/).map((part) => (part.startsWith("{") ? ids[i++]! : Buffer.from(part))), query]);
    });
    options.push(fc.record({ method: fc.constant("POST"), target: unknownTarget, body: fc.option(fc.oneof(anyBody(validText, BODY_LIMIT).filter((b): b is BodyCase => b !== undefined), fc.constant<BodyCase>({ bytes: Buffer.from(validText), headers: [["Content-Type", "application/json"]], what: "a valid body" })), { nil: undefined }), headers }));
  }
  return fc.oneof(...options);
}

test.serial("every signed route: hostile path parameters, queries, bodies and headers under a valid signature are refused with a 4xx envelope (reads may answer) and change nothing", async (t) => {
  const runs = runsOf(1_600);
  timeoutFor(t, runs);
  const [from, started] = [sent, Date.now()];
  const signed = operations.filter((op) => op.signed);
  // The routes that take a body three times as often: most of the hostility is in bodies.
  const op = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...signed.filter((o) => o.body)) }, { weight: 2, arbitrary: fc.constantFrom(...signed) });
  const request = op.chain((op) => fc.record({ op: fc.constant(op), parts: hostileSignedRequest(op) }));
  await fc.assert(
    fc.asyncProperty(request, async ({ op, parts }) => {
      const body = parts.body?.bytes ?? Buffer.alloc(0);
      const target = parts.target.toString("latin1");
      // Signed over the exact bytes: the target as Node hands it to the gateway (latin1), the body as sent.
      const timestamp = unixTimestamp();
      const signature = sign(merchant.apiSecret, { timestamp, method: parts.method, path: target, body });
      const req: WireRequest = {
        method: parts.method,
        target: parts.target,
        headers: [["X-API-Key", merchant.apiKey], ["X-Timestamp", timestamp], ["X-Signature", signature], ...(parts.body?.headers ?? []), ...parts.headers],
        ...(parts.body ? { body, framing: parts.body.framing ?? "length" } : {}),
      };
      assertClean(req, await probe(req, { mayPass: op.method === "GET" }), parts.body?.what);
    }),
    fuzzParameters(runs),
  );
  logSent(t, from, started);
  t.pass();
});

// ------------------------------------------------------------------------------ 3. HTML, assets, probes

/** The routes outside the document: the checkout, the docs, bank logos, probes and metrics, and paths that are nothing. */
const PUBLIC_TARGETS = fc.oneof(
  fc.tuple(fc.constantFrom("/checkout", "/checkout/status", "/checkout/simulate", "/checkout/"), fc.oneof(hostileComponent, fc.stringMatching(/^[A-Za-z0-9_-]{1,128}$/).map((s) => Buffer.from(s))), fc.option(hostileComponent, { nil: undefined })).map(([path, token, lang]) =>
    Buffer.concat([Buffer.from(`${path}?token=`), token, ...(lang ? [Buffer.from("&lang="), lang] : [])]),
  ),
  fc.constantFrom("/docs", "/docs/", "/openapi.json", "/healthz", "/livez", "/readyz", "/metrics", "/", "/v1", "/v2/deposit", "/favicon.ico").map((p) => Buffer.from(p)),
  hostileComponent.map((name) => Buffer.concat([Buffer.from("/docs/assets/"), name])),
  hostileComponent.map((code) => Buffer.concat([Buffer.from("/assets/banks/"), code, Buffer.from(".svg")])),
  fc.oneof(hostileComponent, rawBytes).map((path) => Buffer.concat([Buffer.from("/"), path])),
);

test.serial("the checkout, docs, asset and probe routes, and paths that are none: no 5xx, failures in the envelope or the route's own page, nothing shown from inside, nothing changed", async (t) => {
  const runs = runsOf(600);
  timeoutFor(t, runs);
  const [from, started] = [sent, Date.now()];
  const real = fc.constantFrom(Buffer.from(`/checkout?token=${fixture.checkoutToken}`), Buffer.from(`/checkout/status?token=${fixture.checkoutToken}`));
  const request = fc.record({
    method: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("GET", "POST", "HEAD") }, { weight: 1, arbitrary: oddMethod }),
    target: fc.oneof({ weight: 5, arbitrary: PUBLIC_TARGETS }, { weight: 1, arbitrary: real }),
    headers: hostileHeaders,
    body: anyBody("{}", BODY_LIMIT),
  });
  await fc.assert(
    fc.asyncProperty(request, async ({ method, target, headers, body }) => {
      // The real checkout token is only ever read: a POST with it would be a payment.
      fc.pre(!(target.includes(fixture.checkoutToken) && method !== "GET" && method !== "HEAD"));
      const req: WireRequest = { method, target, headers: [...(body?.headers ?? []), ...headers], ...(body ? { body: body.bytes, framing: body.framing ?? "length" } : {}) };
      assertClean(req, await probe(req, { mayPass: true, html: true }), body?.what);
    }),
    fuzzParameters(runs),
  );
  logSent(t, from, started);
  t.pass();
});

// ------------------------------------------------------------------------------ 4. one byte changed

/** The parts of a signed request the signature covers, as they go on the wire. */
interface SignedWire {
  method: Buffer;
  target: Buffer;
  /** `X-API-Key:…`, `X-Timestamp:…`, `X-Signature:…`: the whole header line, name and value. */
  apiKey: Buffer;
  timestamp: Buffer;
  signature: Buffer;
  body: Buffer;
}
type Region = keyof SignedWire;

function signedWire(op: Operation, id: string): { wire: SignedWire; contentType: boolean } {
  const { target, body } = validRequestOf(op, id);
  const [[, key], [, timestamp], [, signature]] = authHeaders(op.method, target, body) as [[string, string], [string, string], [string, string]];
  return {
    wire: {
      method: Buffer.from(op.method),
      target: Buffer.from(target),
      apiKey: Buffer.from(`X-API-Key:${key}`),
      timestamp: Buffer.from(`X-Timestamp:${timestamp}`),
      signature: Buffer.from(`X-Signature:${signature}`),
      body,
    },
    contentType: op.method === "POST" && body.length > 0,
  };
}

function wireRequest(wire: SignedWire, contentType: boolean): WireRequest {
  const header = (line: Buffer): [string, Buffer] => {
    const colon = line.indexOf(":");
    // A line whose colon was changed away: the whole line as the name, and no value.
    return colon < 0 ? [line.toString("latin1"), Buffer.alloc(0)] : [line.subarray(0, colon).toString("latin1"), line.subarray(colon + 1)];
  };
  return {
    method: wire.method.toString("latin1"),
    target: wire.target,
    headers: [header(wire.apiKey), header(wire.timestamp), header(wire.signature), ...(contentType ? [["Content-Type", "application/json"] as [string, string]] : [])],
    body: wire.body,
  };
}

const HEX_LETTER = /^[a-fA-F]$/;
const LETTER = /^[A-Za-z]$/;

/**
 * Whether a change leaves the same request: a header name's case (HTTP header names are
 * case-insensitive), or a hex digit's case in X-Signature (the gateway decodes the hex; the
 * signature's bytes are the same). Those are not tampering and are left out.
 */
function sameRequest(region: Region, wire: SignedWire, at: number, byte: number): boolean {
  const old = String.fromCharCode(wire[region][at]!);
  const now = String.fromCharCode(byte);
  if (old.toLowerCase() !== now.toLowerCase()) return false;
  if (region === "apiKey" || region === "timestamp" || region === "signature") {
    const colon = wire[region].indexOf(":");
    if (at < colon && LETTER.test(old)) return true;
    if (region === "signature" && at > colon && HEX_LETTER.test(old)) return true;
  }
  return false;
}

const AUTH_CODES = new Set(["MISSING_API_KEY", "INVALID_API_KEY", "MISSING_TIMESTAMP", "MISSING_SIGNATURE", "TIMESTAMP_EXPIRED", "INVALID_SIGNATURE"]);

/**
 * What a changed request may get: 401 with an authentication code; or, when the changed byte is
 * in the request line or a header line, Node's parser refusing it (the clientError envelope);
 * or, when it is in the method or in the path before any `?`, the router's 404/405, which it
 * answers before any credential is read (app.ts: route, then body, then authentication).
 */
function byteChangeProblems(region: Region, wire: SignedWire, at: number, res: WireAnswer, sent: WireRequest): string[] {
  let code: string | undefined;
  try {
    code = (JSON.parse(res.text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  if (res.status === 401 && code !== undefined && AUTH_CODES.has(code)) return [];
  if (region !== "body" && parserRefusal(res)) return [];
  const query = wire.target.indexOf("?");
  const inPath = region === "target" && (query < 0 || at <= query);
  if ((region === "method" || inPath) && ((res.status === 404 && code === "NOT_FOUND") || (res.status === 405 && code === "METHOD_NOT_ALLOWED"))) return [];
  if ((region === "method" || inPath) && rootToDocs(sent, res)) return [];
  return [`a request changed in its ${region} at byte ${at} got ${res.status} ${code ?? ""}, not 401`];
}

test.serial("every signed route: one byte changed anywhere the signature covers (method, path, query, the three authentication headers, body) is refused, 401 unless the router or Node's parser answers first, and changes nothing; the unchanged requests are accepted", async (t) => {
  const runs = runsOf(1_600);
  timeoutFor(t, runs);
  const [from, started] = [sent, Date.now()];
  const signed = operations.filter((op) => op.signed);
  // Every signed operation has a valid request here (validRequestOf throws otherwise).
  for (const op of signed) validRequestOf(op, "check");
  const change = fc
    .record({ op: fc.constantFrom(...signed), region: fc.constantFrom<Region>("method", "target", "apiKey", "timestamp", "signature", "body"), position: fc.nat(), byte: fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0, max: 255 })) })
    .filter(({ op, region }) => region !== "body" || op.method === "POST");
  await fc.assert(
    fc.asyncProperty(change, async ({ op, region, position, byte }) => {
      const { wire, contentType } = signedWire(op, fresh("tamper"));
      if (wire[region].length === 0) return;
      const at = position % wire[region].length;
      // The new byte differs from the old one: the old one plus 1..255, wrapping.
      const now = byte === wire[region][at]! ? (byte + 1) % 256 : byte;
      fc.pre(!sameRequest(region, wire, at, now));
      const changed: SignedWire = { ...wire, [region]: Buffer.from(wire[region]) };
      changed[region][at] = now;
      const req = wireRequest(changed, contentType);
      assertClean(req, await probe(req, { mayPass: false }, (res) => byteChangeProblems(region, wire, at, res, req)), `${op.operationId}: ${region}[${at}] 0x${wire[region][at]!.toString(16)} → 0x${now.toString(16)}`);
    }),
    fuzzParameters(runs),
  );
  logSent(t, from, started);

  // The requests the changes were made to were valid all along: sent unchanged, each is accepted
  // (reads first, then the moves, each on its own fixture transaction).
  const ordered = [...signed.filter((op) => op.method === "GET"), ...signed.filter((op) => op.method !== "GET")];
  const before = await snapshot();
  for (const op of ordered) {
    const { wire, contentType } = signedWire(op, fresh("valid"));
    const req = wireRequest(wire, contentType);
    const res = await sendRaw(gw(), req);
    t.true(res.status >= 200 && res.status < 300, `${op.operationId} unchanged: ${res.status} ${res.text.slice(0, 300)}`);
  }
  // And the checksums see what an accepted request changes: the "nothing changed" above is not blindness.
  const changed = changedTables(before, await snapshot());
  t.true(changed.some((table) => table.includes("deposit")) && changed.some((table) => table.includes("withdrawal")), `changed: ${changed.join(", ")}`);
});

test.serial("the hostile text generator yields what it is meant to: control characters, lone surrogates, long runs", (t) => {
  const samples = fc.sample(hostileText, { numRuns: 2_000, seed: 1 });
  t.true(samples.some((s) => s.includes("\u0000")));
  t.true(samples.some((s) => /[\uD800-\uDFFF]/.test(s)));
  t.true(samples.some((s) => s.length > 1_000));
});
