import http from "node:http";
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { GetStatementRequestSchema, GetStatementResponseSchema, StatementLineSchema, type GetStatementRequest, type GetStatementResponse, type StatementLine } from "@payments/contracts/payout";
import { serviceError, validationError } from "@payments/kit";
import { STATEMENT_PAGE_LINES, statementCsv, statementRecord } from "../src/routes/statement.js";
import { startFakeApp, type FakeApp } from "./fake-app.js";
import { authHeaders, signedCall } from "./http-client.js";

/*
 * GET /v1/statement at the edge, over a fake payout service: the query's rules (dates, the
 * range, the format), what is asked of the service, the JSON and the CSV made of its answer;
 * a statement of many pages streamed whole, page after page; a failure before the first byte
 * is the JSON error envelope, one after it an aborted response and a log line.
 */

const merchant = { merchantId: "mer_statement", apiKey: "key_statement", apiSecret: "secret_statement" };
const asked: GetStatementRequest[] = [];
const T0 = Date.parse("2026-11-22T10:00:00.000Z");

const answer = (req: GetStatementRequest) =>
  create(GetStatementResponseSchema, {
    currency: req.currency === "" ? "TRY" : req.currency.toUpperCase(),
    opening: { available: 100_000n, held: 5_000n },
    lines: [
      { entryId: "led_1", createdAt: timestampFromMs(T0), kind: "deposit_credit", availableDelta: 50_050n, heldDelta: 0n, balanceAfter: 155_050n, transactionId: "dep_1", processId: "=HYPERLINK(\"x\")" },
      { entryId: "led_2", createdAt: timestampFromMs(T0 + 1), kind: "withdrawal_hold", availableDelta: -30_000n, heldDelta: 30_000n, balanceAfter: 155_050n, transactionId: "wd_1", processId: "payout, 1" },
      { entryId: "led_3", createdAt: timestampFromMs(T0 + 2), kind: "withdrawal_settle", availableDelta: 0n, heldDelta: -30_000n, balanceAfter: 125_050n, transactionId: "wd_1", processId: "payout, 1" },
      { entryId: "led_4", createdAt: timestampFromMs(T0 + 3), kind: "adjustment", availableDelta: -99n, heldDelta: 0n, balanceAfter: 124_951n, transactionId: "adj_1", processId: "" },
    ],
    closing: { available: 119_951n, held: 5_000n },
  });

/** When set, the fake service answers with this instead (a statement of many pages, a failing one). */
let paged: ((req: GetStatementRequest) => GetStatementResponse) | undefined;

let app: FakeApp;
test.before(async () => {
  app = await startFakeApp({
    merchants: [merchant],
    payouts: {
      getStatement: (req) => {
        asked.push(req);
        if (paged) return paged(req);
        if (req.currency.toUpperCase() === "USD") throw validationError("currency", "currency: must be one of TRY, EUR");
        if (req.merchantId === "") throw validationError("merchant_id", "merchant_id: is required");
        return answer(req);
      },
    },
  });
  app.clock.set(new Date(T0));
});
test.after.always(() => app.close());

const get = (path: string) => signedCall(app.url, merchant, app.clock, { path });

test.serial("JSON: opening, movements under public kinds with signed amounts and running balances, closing; `to` is a whole day", async (t) => {
  asked.length = 0;
  const reply = await get("/v1/statement?from=2026-11-01&to=2026-11-30");
  t.is(reply.status, 200, reply.text);
  t.deepEqual(asked.map((r) => [r.merchantId, r.currency, Number(r.fromMs), Number(r.toMs)]), [
    ["mer_statement", "", Date.parse("2026-11-01T00:00:00Z"), Date.parse("2026-12-01T00:00:00Z")],
  ]);
  const data = reply.json.data as { openingBalance: number; closingBalance: number; movements: Array<{ kind: string; amount: number; balanceAfter: number; processId: string | null }> };
  t.like(data, { currency: "TRY", from: "2026-11-01", to: "2026-11-30", openingBalance: 105_000, closingBalance: 124_951 });
  t.deepEqual(data.movements.map((m) => [m.kind, m.amount, m.balanceAfter, m.processId]), [
    ["deposit_credit", 50_050, 155_050, '=HYPERLINK("x")'],
    ["withdrawal_hold", 0, 155_050, "payout, 1"],
    ["withdrawal_debit", -30_000, 125_050, "payout, 1"],
    ["adjustment", -99, 124_951, null],
  ]);
  t.is(data.openingBalance + data.movements.reduce((sum, m) => sum + m.amount, 0), data.closingBalance);
});

test.serial("CSV: attachment, header, opening, rows, closing; kuruş and exact lira; CRLF, quoting, formula guard", async (t) => {
  const reply = await get("/v1/statement?currency=TRY&from=2026-11-22&to=2026-11-22&format=csv");
  t.is(reply.status, 200, reply.text);
  t.is(reply.headers["content-type"], "text/csv; charset=utf-8");
  t.is(reply.headers["content-disposition"], 'attachment; filename="statement-TRY-2026-11-22-2026-11-22.csv"');
  t.is(
    reply.text,
    [
      "Time,Kind,Amount (kuruş),Amount (TRY),Balance after (kuruş),Balance after (TRY),Transaction ID,Process ID",
      "2026-11-22T00:00:00.000Z,opening_balance,,,105000,1050.00,,",
      `2026-11-22T10:00:00.000Z,deposit_credit,50050,500.50,155050,1550.50,dep_1,"'=HYPERLINK(""x"")"`,
      '2026-11-22T10:00:00.001Z,withdrawal_hold,0,0.00,155050,1550.50,wd_1,"payout, 1"',
      '2026-11-22T10:00:00.002Z,withdrawal_debit,-30000,-300.00,125050,1250.50,wd_1,"payout, 1"',
      "2026-11-22T10:00:00.003Z,adjustment,-99,-0.99,124951,1249.51,adj_1,",
      "2026-11-23T00:00:00.000Z,closing_balance,,,124951,1249.51,,",
      "",
    ].join("\r\n"),
  );
});

test.serial("bad queries are 400 VALIDATION_ERROR naming the field, before the service is asked", async (t) => {
  asked.length = 0;
  const cases: Array<[string, RegExp]> = [
    ["/v1/statement?to=2026-11-30", /^from: is required$/],
    ["/v1/statement?from=2026-11-01", /^to: is required$/],
    ["/v1/statement?from=2026-11-01T00:00:00Z&to=2026-11-30", /^from: must be a date, YYYY-MM-DD/],
    ["/v1/statement?from=2026-02-30&to=2026-03-01", /^from: must be a date/],
    ["/v1/statement?from=yesterday&to=today", /^from: must be a date.*; to: must be a date/],
    ["/v1/statement?from=2026-11-02&to=2026-11-01", /^to: must not be before from$/],
    ["/v1/statement?from=2025-01-01&to=2026-01-02", /^to: must be at most 366 days from from, both counted \(this range is 367\)$/],
    ["/v1/statement?from=2026-11-01&to=2026-11-30&format=pdf", /^format: must be one of json, csv$/],
    ["/v1/statement?from=2026-11-01&from=2026-11-02&to=2026-11-30", /^from: must be given only once$/],
  ];
  for (const [path, message] of cases) {
    const reply = await get(path);
    t.is(reply.status, 400, path);
    t.is(reply.json.error?.code, "VALIDATION_ERROR", path);
    t.regex(reply.json.error?.message ?? "", message, path);
  }
  t.is(asked.length, 0);
  // 2024 is a leap year: its 366 days are one statement.
  t.is((await get("/v1/statement?from=2024-01-01&to=2024-12-31")).status, 200);
  t.is((await get("/v1/statement?from=2025-01-01&to=2026-01-01")).status, 200, "366 days, both counted");
});

test.serial("an unsupported currency is the service's VALIDATION_ERROR on currency, as for withdrawals; errors stay JSON with format=csv", async (t) => {
  const reply = await get("/v1/statement?currency=USD&from=2026-11-01&to=2026-11-30&format=csv");
  t.is(reply.status, 400);
  t.regex(String(reply.headers["content-type"]), /^application\/json/);
  t.deepEqual(reply.json.error, { code: "VALIDATION_ERROR", message: "currency: must be one of TRY, EUR" });
});

// ---------------------------------------------------------------------------------------------
// Many pages.

const OPENING = { available: 1_000_000n, held: 0n };

/** `count` lines, each credit of 1..97 kuruş or a hold, with their running balances from OPENING. */
function manyLines(count: number): StatementLine[] {
  let balance = OPENING.available + OPENING.held;
  return Array.from({ length: count }, (_, i) => {
    const credit = i % 4 !== 3;
    const availableDelta = credit ? BigInt(1 + (i % 97)) : -500n;
    const heldDelta = credit ? 0n : 500n;
    balance += availableDelta + heldDelta;
    return create(StatementLineSchema, {
      entryId: `led_${i}`,
      createdAt: timestampFromMs(T0 + i),
      kind: credit ? "deposit_credit" : "withdrawal_hold",
      availableDelta,
      heldDelta,
      balanceAfter: balance,
      transactionId: credit ? `dep_${i}` : `wd_${i}`,
      processId: credit ? `order-${i}` : `payout-${i}`,
    });
  });
}

/** A fake payout service paging `lines` by the request's limit, its cursor the offset; `fail` throws for the page starting there. */
function pagesOf(lines: readonly StatementLine[], fail?: { at: number; error: Error }): (req: GetStatementRequest) => GetStatementResponse {
  const sum = lines.reduce((acc, l) => ({ available: acc.available + l.availableDelta, held: acc.held + l.heldDelta }), { ...OPENING });
  return (req) => {
    const start = req.cursor === "" ? 0 : Number(req.cursor);
    if (fail && start === fail.at) throw fail.error;
    const end = Math.min(lines.length, start + req.limit);
    return create(GetStatementResponseSchema, {
      currency: "TRY",
      opening: OPENING,
      lines: lines.slice(start, end),
      closing: sum,
      nextCursor: end < lines.length ? String(end) : "",
    });
  };
}

test.serial("a statement of many pages is asked page after page with each next cursor and streamed whole: exactly the JSON and the CSV one answer would give", async (t) => {
  const lines = manyLines(2 * STATEMENT_PAGE_LINES + 345);
  paged = pagesOf(lines);
  try {
    asked.length = 0;
    const reply = await get("/v1/statement?from=2026-11-22&to=2026-11-22");
    t.is(reply.status, 200);
    t.is(reply.headers["content-type"], "application/json; charset=utf-8");
    t.is(reply.headers["content-length"], undefined, "streamed, not buffered");
    t.deepEqual(
      asked.map((r) => [r.limit, r.cursor]),
      [
        [STATEMENT_PAGE_LINES, ""],
        [STATEMENT_PAGE_LINES, String(STATEMENT_PAGE_LINES)],
        [STATEMENT_PAGE_LINES, String(2 * STATEMENT_PAGE_LINES)],
      ],
    );
    const whole = pagesOf(lines)(create(GetStatementRequestSchema, { limit: lines.length }));
    const record = statementRecord(whole, "2026-11-22", "2026-11-22");
    t.is(reply.text, JSON.stringify({ success: true, data: record, timestamp: Math.floor(T0 / 1000) }));
    const data = reply.json.data as { openingBalance: number; closingBalance: number; movements: Array<{ amount: number; balanceAfter: number }> };
    t.is(data.movements.length, lines.length);
    t.is(data.openingBalance + data.movements.reduce((sum, m) => sum + m.amount, 0), data.closingBalance);

    asked.length = 0;
    const csv = await get("/v1/statement?from=2026-11-22&to=2026-11-22&format=csv");
    t.is(csv.status, 200);
    t.is(asked.length, 3);
    t.is(csv.text, statementCsv(record, Date.parse("2026-11-22T00:00:00Z"), Date.parse("2026-11-23T00:00:00Z")));
  } finally {
    paged = undefined;
  }
});

test.serial("an empty statement streams its opening and closing with no movements, JSON and CSV", async (t) => {
  paged = pagesOf([]);
  try {
    const reply = await get("/v1/statement?from=2026-11-22&to=2026-11-22");
    t.is(reply.text, JSON.stringify({ success: true, data: { currency: "TRY", from: "2026-11-22", to: "2026-11-22", openingBalance: 1_000_000, closingBalance: 1_000_000, movements: [] }, timestamp: Math.floor(T0 / 1000) }));
    const csv = await get("/v1/statement?from=2026-11-22&to=2026-11-22&format=csv");
    t.is(csv.text.split("\r\n").length, 4, "header, opening, closing and the last line end");
  } finally {
    paged = undefined;
  }
});

test.serial("the first page's failure is the JSON error envelope with its status, whatever the format", async (t) => {
  paged = pagesOf(manyLines(10), { at: 0, error: serviceError(Code.Unavailable, "DATABASE_UNAVAILABLE", "down") });
  try {
    for (const path of ["/v1/statement?from=2026-11-22&to=2026-11-22", "/v1/statement?from=2026-11-22&to=2026-11-22&format=csv"]) {
      const reply = await get(path);
      t.is(reply.status, 503, path);
      t.regex(String(reply.headers["content-type"]), /^application\/json/);
      t.is(reply.json.error?.code, "SERVICE_UNAVAILABLE");
    }
  } finally {
    paged = undefined;
  }
});

/** A signed GET read byte by byte: the status, what arrived, and whether the response ended cleanly or broke off. */
function rawGet(path: string): Promise<{ status: number; text: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, app.url), { agent: false, headers: authHeaders(merchant, app.clock, { method: "GET", path }) }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const done = (complete: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), complete });
      };
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(res.complete));
      res.on("error", () => done(false));
      res.on("close", () => done(res.complete));
    });
    request.on("error", reject);
    request.end();
  });
}

test.serial("a failure after streaming began aborts the response (never a statement that looks complete) and is logged", async (t) => {
  const lines = manyLines(STATEMENT_PAGE_LINES + 10);
  paged = pagesOf(lines, { at: STATEMENT_PAGE_LINES, error: serviceError(Code.Unavailable, "DATABASE_UNAVAILABLE", "the ledger went away") });
  try {
    for (const format of ["json", "csv"]) {
      app.logLines.length = 0;
      const reply = await rawGet(`/v1/statement?from=2026-11-22&to=2026-11-22&format=${format}`);
      t.is(reply.status, 200, format);
      t.false(reply.complete, `${format}: the response broke off`);
      t.true(reply.text.length > 0, `${format}: the first page was sent`);
      if (format === "json") {
        t.throws(() => JSON.parse(reply.text) as unknown, undefined, "not a JSON document");
        t.false(reply.text.includes('"timestamp"'));
      } else {
        t.false(reply.text.includes("closing_balance"));
      }
      // The log line is written when the stream fails, which may be just after the client saw it.
      for (let i = 0; i < 50 && !app.logLines.some((l) => l.includes("statement failed while streaming")); i++) await new Promise((r) => setTimeout(r, 10));
      const logged = app.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "statement failed while streaming; response aborted");
      t.like(logged, { level: "error", merchantId: merchant.merchantId, format, movementsSent: STATEMENT_PAGE_LINES }, format);
    }
  } finally {
    paged = undefined;
  }
});
