import http from "node:http";
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { parse as parseCsv } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { GetStatementRequestSchema, GetStatementResponseSchema, StatementLineSchema, type GetStatementRequest, type GetStatementResponse, type StatementLine } from "@payments/contracts/payout";
import { serviceError, validationError } from "@payments/kit";
import { CSV_BOM, XLSX_CONTENT_TYPE, kurusToLira } from "@payments/records";
import {
  STATEMENT_PAGE_LINES,
  STATEMENT_WORKBOOK_OPTIONS,
  openStatementSheet,
  statementCsv,
  statementRecord,
  writeStatementSheet,
  type StatementMovement,
  type StatementRecord,
} from "../src/routes/statement.js";
import { checkOpenApiResponse } from "../../test/openapi-check.js";
import { isInstant, xlsxLayout, xlsxPart, xlsxRows } from "../../test/xlsx-file.js";
import { startFakeApp, type FakeApp } from "./fake-app.js";
import { authHeaders, signedCall } from "./http-client.js";

/*
 * GET /v1/statement at the edge, over a fake payout service: the query's rules (dates, the
 * range, the format, the locale), what is asked of the service, the JSON, the CSV (English and
 * Turkish) and the XLSX made of its answer, each file read back with a parser that is not its
 * writer (csv-parse, read-excel-file); a statement of many pages streamed whole, page after
 * page, an XLSX one bounded in memory while its reader stalls; a failure before the first byte
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
let paged: ((req: GetStatementRequest) => GetStatementResponse | Promise<GetStatementResponse>) | undefined;

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

/** A signed GET read as bytes (a file), its answer checked against the OpenAPI document as `call` checks every answer. */
function getFile(path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, app.url), { agent: false, headers: authHeaders(merchant, app.clock, { method: "GET", path }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        try {
          checkOpenApiResponse("GET", path, res.statusCode ?? 0, {}, res.headers["content-type"]);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) });
      });
      res.on("error", reject);
    });
    request.on("error", reject);
    request.end();
  });
}

/** The CSV rows csv-parse reads: the byte-order mark taken off, `delimiter` between cells. */
const csvRows = (text: string, delimiter: "," | ";") => parseCsv(text, { bom: true, delimiter, relax_column_count: false });

/** The statement of the default fake answer, as the JSON route gives it. */
async function jsonStatement(path: string): Promise<StatementRecord> {
  const reply = await get(path);
  if (reply.status !== 200) throw new Error(reply.text);
  return reply.json.data as unknown as StatementRecord;
}

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

test.serial("CSV: attachment, byte-order mark, header, opening, rows, closing; kuruş and exact lira; CRLF, quoting, formula guard", async (t) => {
  const reply = await get("/v1/statement?currency=TRY&from=2026-11-22&to=2026-11-22&format=csv");
  t.is(reply.status, 200, reply.text);
  t.is(reply.headers["content-type"], "text/csv; charset=utf-8");
  t.is(reply.headers["content-disposition"], 'attachment; filename="statement-TRY-2026-11-22-2026-11-22.csv"');
  t.is(
    reply.text,
    CSV_BOM +
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

const DAY = "/v1/statement?currency=TRY&from=2026-11-22&to=2026-11-22";
const DAY_START = new Date("2026-11-22T00:00:00.000Z");
const DAY_END = new Date("2026-11-23T00:00:00.000Z");
/** What the formula guard makes of a text cell in a CSV. */
const guarded = (text: string) => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

test.serial("CSV: EF BB BF first and only there; csv-parse reads back the JSON statement's rows", async (t) => {
  const statement = await jsonStatement(DAY);
  const file = await getFile(`${DAY}&format=csv`);
  t.is(file.status, 200);
  t.deepEqual([...file.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  t.is(file.bytes.indexOf(Buffer.from(CSV_BOM), 1), -1, "one byte-order mark");
  const rows = csvRows(file.bytes.toString("utf8"), ",");
  t.deepEqual(rows[0], ["Time", "Kind", "Amount (kuruş)", "Amount (TRY)", "Balance after (kuruş)", "Balance after (TRY)", "Transaction ID", "Process ID"]);
  t.deepEqual(rows[1], [DAY_START.toISOString(), "opening_balance", "", "", String(statement.openingBalance), kurusToLira(statement.openingBalance), "", ""]);
  t.deepEqual(
    rows.slice(2, -1),
    statement.movements.map((m) => [m.at, m.kind, String(m.amount), kurusToLira(m.amount), String(m.balanceAfter), kurusToLira(m.balanceAfter), m.transactionId, guarded(m.processId ?? "")]),
  );
  t.deepEqual(rows.at(-1), [DAY_END.toISOString(), "closing_balance", "", "", String(statement.closingBalance), kurusToLira(statement.closingBalance), "", ""]);
});

/** A Turkish amount (`-1500,50`) in kuruş, exactly: no float on the way. */
function turkishKurus(cell: string): number {
  const match = /^(-?)(\d+),(\d{2})$/.exec(cell);
  if (!match) throw new Error(`${JSON.stringify(cell)} is not a Turkish amount`);
  const kurus = Number(match[2]) * 100 + Number(match[3]);
  return match[1] === "-" ? -kurus : kurus;
}

test.serial("CSV, locale=tr: byte-order mark, Turkish headers, `;` between cells, comma decimals that convert back exactly; the formula guard too", async (t) => {
  const statement = await jsonStatement(DAY);
  const reply = await get(`${DAY}&format=csv&locale=tr`);
  t.is(reply.status, 200, reply.text);
  t.is(reply.headers["content-type"], "text/csv; charset=utf-8");
  t.is(reply.headers["content-disposition"], 'attachment; filename="statement-TRY-2026-11-22-2026-11-22.csv"');
  t.is(
    reply.text,
    CSV_BOM +
      [
        "Zaman (UTC);Tür;Tutar (kuruş);Tutar (TRY);İşlem sonrası bakiye (kuruş);İşlem sonrası bakiye (TRY);İşlem numarası;Referans (processId)",
        "2026-11-22T00:00:00.000Z;opening_balance;;;105000;1050,00;;",
        `2026-11-22T10:00:00.000Z;deposit_credit;50050;500,50;155050;1550,50;dep_1;"'=HYPERLINK(""x"")"`,
        '2026-11-22T10:00:00.001Z;withdrawal_hold;0;0,00;155050;1550,50;wd_1;"payout, 1"',
        '2026-11-22T10:00:00.002Z;withdrawal_debit;-30000;-300,00;125050;1250,50;wd_1;"payout, 1"',
        "2026-11-22T10:00:00.003Z;adjustment;-99;-0,99;124951;1249,51;adj_1;",
        "2026-11-23T00:00:00.000Z;closing_balance;;;124951;1249,51;;",
        "",
      ].join("\r\n"),
  );
  const rows = csvRows(reply.text, ";");
  t.true(rows.every((row) => row.length === 8), "eight cells a row: no amount's comma split a cell");
  t.is(turkishKurus(rows[1]![5]!), statement.openingBalance);
  t.deepEqual(
    rows.slice(2, -1).map((r) => [r[1], Number(r[2]), turkishKurus(r[3]!), Number(r[4]), turkishKurus(r[5]!), r[6], r[7]]),
    statement.movements.map((m) => [m.kind, m.amount, m.amount, m.balanceAfter, m.balanceAfter, m.transactionId, guarded(m.processId ?? "")]),
  );
  t.is(turkishKurus(rows.at(-1)![5]!), statement.closingBalance);
  t.is(rows.slice(2, -1).reduce((sum, r) => sum + turkishKurus(r[3]!), turkishKurus(rows[1]![5]!)), turkishKurus(rows.at(-1)![5]!), "the file adds up");
});

const XLSX_HEADERS = {
  en: ["Time (UTC)", "Kind", "Amount (kuruş)", "Amount (TRY)", "Balance after (kuruş)", "Balance after (TRY)", "Transaction ID", "Process ID"],
  tr: ["Zaman (UTC)", "Tür", "Tutar (kuruş)", "Tutar (TRY)", "İşlem sonrası bakiye (kuruş)", "İşlem sonrası bakiye (TRY)", "İşlem numarası", "Referans (processId)"],
} as const;

test.serial("XLSX, en and tr: an attachment read-excel-file opens: header, opening with a date cell, each movement's lira a number and kuruş an integer, closing; text never a formula", async (t) => {
  const statement = await jsonStatement(DAY);
  for (const locale of ["en", "tr"] as const) {
    const file = await getFile(`${DAY}&format=xlsx${locale === "tr" ? "&locale=tr" : ""}`);
    t.is(file.status, 200, locale);
    t.is(file.headers["content-type"], XLSX_CONTENT_TYPE);
    t.is(file.headers["content-disposition"], 'attachment; filename="statement-TRY-2026-11-22-2026-11-22.xlsx"');
    t.is(file.headers["content-length"], undefined, "streamed");
    t.deepEqual([...file.bytes.subarray(0, 4)], [0x50, 0x4b, 0x03, 0x04], "a zip file");
    const rows = await xlsxRows(file.bytes);
    t.deepEqual(rows[0], [...XLSX_HEADERS[locale]], locale);
    t.deepEqual(rows[1], [DAY_START, "opening_balance", null, null, 105_000, 1050, null, null]);
    t.true(rows[1]![0] instanceof Date, "the opening's time is a date cell");
    t.deepEqual(
      rows.slice(2, -1).map((r) => r.slice(1)),
      statement.movements.map((m) => [m.kind, m.amount, m.amount / 100, m.balanceAfter, m.balanceAfter / 100, m.transactionId, m.processId]),
    );
    t.true(
      rows.slice(2, -1).every((r, i) => isInstant(r[0], statement.movements[i]!.at)),
      "each movement's time a date cell",
    );
    for (const row of rows.slice(1)) {
      t.true(row[0] instanceof Date);
      for (const [kurus, lira] of [[row[2], row[3]], [row[4], row[5]]] as const) {
        if (kurus === null) continue;
        if (typeof lira !== "number" || typeof kurus !== "number" || !Number.isInteger(kurus)) {
          t.fail(`${String(kurus)}, ${String(lira)}: kuruş an integer, lira a number`);
          continue;
        }
        t.is(Math.round(lira * 100), kurus);
      }
    }
    t.deepEqual(rows.at(-1), [DAY_END, "closing_balance", null, null, 124_951, 1249.51, null, null]);
    t.is(rows.length, statement.movements.length + 3);
    // What Excel shows: a frozen header, amounts with two decimals, text cells as text.
    const layout = xlsxLayout(file.bytes);
    t.is(layout.frozenRows, 1);
    t.deepEqual(layout.widths, locale === "en" ? [20, 18, 16, 15, 23, 21, 26, 26] : [20, 18, 15, 15, 30, 28, 26, 26], "each column at least its header's width");
    t.like(Object.fromEntries(layout.formats), { A2: "yyyy-mm-dd hh:mm:ss", C3: "0", D3: "#,##0.00", F2: "#,##0.00", G3: "@", H3: "@" });
    const sheet = xlsxPart(file.bytes, "xl/worksheets/sheet1.xml");
    t.false(sheet.includes("<f>"), "no formula anywhere");
    t.true(sheet.includes("=HYPERLINK(&quot;x&quot;)"), "the processId as it was, text");
  }
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
    ["/v1/statement?from=2026-11-01&to=2026-11-30&format=pdf", /^format: must be one of json, csv, xlsx$/],
    ["/v1/statement?from=2026-11-01&to=2026-11-30&format=CSV", /^format: must be one of json, csv, xlsx$/],
    ["/v1/statement?from=2026-11-01&to=2026-11-30&format=csv&locale=xx", /^locale: must be one of en, tr$/],
    ["/v1/statement?from=2026-11-01&to=2026-11-30&locale=tr&locale=en", /^locale: must be given only once$/],
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
    t.true(csv.text.startsWith(CSV_BOM), "the byte-order mark first");
    t.is(csv.text.indexOf(CSV_BOM, 1), -1, "and only there, not again at each page");
    t.is(csv.text, CSV_BOM + statementCsv(record, Date.parse("2026-11-22T00:00:00Z"), Date.parse("2026-11-23T00:00:00Z")));

    const tr = await get("/v1/statement?from=2026-11-22&to=2026-11-22&format=csv&locale=tr");
    t.is(tr.text, CSV_BOM + statementCsv(record, Date.parse("2026-11-22T00:00:00Z"), Date.parse("2026-11-23T00:00:00Z"), "tr"));
    t.is(tr.text.lastIndexOf(CSV_BOM), 0);

    asked.length = 0;
    const xlsx = await getFile("/v1/statement?from=2026-11-22&to=2026-11-22&format=xlsx");
    t.is(xlsx.status, 200);
    t.deepEqual(asked.map((r) => r.cursor), ["", String(STATEMENT_PAGE_LINES), String(2 * STATEMENT_PAGE_LINES)]);
    const rows = await xlsxRows(xlsx.bytes);
    t.is(rows.length, lines.length + 3, "header, opening, every movement, closing");
    t.deepEqual(
      rows.slice(2, -1).map((r) => [r[6], r[2], r[5]]),
      record.movements.map((m) => [m.transactionId, m.amount, m.balanceAfter / 100]),
    );
    t.deepEqual(rows.at(-1)!.slice(1, 6), ["closing_balance", null, null, record.closingBalance, record.closingBalance / 100]);
  } finally {
    paged = undefined;
  }
});

test.serial("an empty statement streams its opening and closing with no movements, JSON, CSV and XLSX", async (t) => {
  paged = pagesOf([]);
  try {
    const reply = await get("/v1/statement?from=2026-11-22&to=2026-11-22");
    t.is(reply.text, JSON.stringify({ success: true, data: { currency: "TRY", from: "2026-11-22", to: "2026-11-22", openingBalance: 1_000_000, closingBalance: 1_000_000, movements: [] }, timestamp: Math.floor(T0 / 1000) }));
    const csv = await get("/v1/statement?from=2026-11-22&to=2026-11-22&format=csv");
    t.is(csv.text.split("\r\n").length, 4, "header, opening, closing and the last line end");
    const xlsx = await getFile("/v1/statement?from=2026-11-22&to=2026-11-22&format=xlsx");
    t.deepEqual((await xlsxRows(xlsx.bytes)).map((r) => r[1]), ["Kind", "opening_balance", "closing_balance"]);
  } finally {
    paged = undefined;
  }
});

test.serial("the first page's failure is the JSON error envelope with its status, whatever the format", async (t) => {
  paged = pagesOf(manyLines(10), { at: 0, error: serviceError(Code.Unavailable, "DATABASE_UNAVAILABLE", "down") });
  try {
    for (const format of ["json", "csv", "xlsx"]) {
      const path = `/v1/statement?from=2026-11-22&to=2026-11-22&format=${format}&locale=tr`;
      const reply = await get(path);
      t.is(reply.status, 503, path);
      t.regex(String(reply.headers["content-type"]), /^application\/json/);
      t.is(reply.json.error?.code, "SERVICE_UNAVAILABLE");
      t.is(reply.headers["content-disposition"], undefined, path);
    }
  } finally {
    paged = undefined;
  }
});

/** A signed GET read byte by byte: the status, what arrived, and whether the response ended cleanly or broke off. */
function rawGet(path: string): Promise<{ status: number; text: string; bytes: Buffer; complete: boolean }> {
  return new Promise((resolve) => {
    const request = http.request(new URL(path, app.url), { agent: false, headers: authHeaders(merchant, app.clock, { method: "GET", path }) }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const done = (complete: boolean) => {
        if (settled) return;
        settled = true;
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, text: bytes.toString("utf8"), bytes, complete });
      };
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done(res.complete));
      res.on("error", () => done(false));
      res.on("close", () => done(res.complete));
    });
    // Broken off before any status arrived (an .xlsx whose bytes were still in the compressor).
    request.on("error", () => resolve({ status: 0, text: "", bytes: Buffer.alloc(0), complete: false }));
    request.end();
  });
}

test.serial("a failure after streaming began aborts the response (never a statement that looks complete) and is logged", async (t) => {
  const lines = manyLines(STATEMENT_PAGE_LINES + 10);
  paged = pagesOf(lines, { at: STATEMENT_PAGE_LINES, error: serviceError(Code.Unavailable, "DATABASE_UNAVAILABLE", "the ledger went away") });
  try {
    for (const format of ["json", "csv", "xlsx"]) {
      app.logLines.length = 0;
      const reply = await rawGet(`/v1/statement?from=2026-11-22&to=2026-11-22&format=${format}`);
      t.false(reply.complete, `${format}: the response broke off`);
      if (format !== "xlsx") {
        t.is(reply.status, 200, format);
        t.true(reply.text.length > 0, `${format}: the first page was sent`);
      } else {
        // The first page may still be in the compressor when the second fails: then the
        // connection breaks off before the status, which is no file either.
        t.true(reply.status === 200 || reply.status === 0, `xlsx: ${reply.status}`);
      }
      if (format === "json") {
        t.throws(() => JSON.parse(reply.text) as unknown, undefined, "not a JSON document");
        t.false(reply.text.includes('"timestamp"'));
      } else if (format === "csv") {
        t.false(reply.text.includes("closing_balance"));
      } else {
        await t.throwsAsync(xlsxRows(reply.bytes), undefined, "not a workbook that opens");
        t.true(reply.bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])) < 0, "no end of the zip's central directory");
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

// ---------------------------------------------------------------------------------------------
// XLSX streaming: bounded while its reader stalls, stopped when the reader goes away.

const HEAD = { currency: "TRY", from: "2026-11-22", to: "2026-11-22", openingBalance: 1_000_000, closingBalance: 0 } as const;

/** `pages` pages of STATEMENT_PAGE_LINES movements, counting how many were taken. */
function countedPages(pages: number): { taken: () => number; pages: AsyncGenerator<StatementMovement[]> } {
  let taken = 0;
  const record = statementRecord(pagesOf(manyLines(STATEMENT_PAGE_LINES))(create(GetStatementRequestSchema, { limit: STATEMENT_PAGE_LINES })), HEAD.from, HEAD.to);
  async function* generate(): AsyncGenerator<StatementMovement[]> {
    for (let i = 0; i < pages; i++) {
      taken++;
      yield record.movements;
    }
  }
  return { taken: () => taken, pages: generate() };
}

/** Waits until `ready` holds, at most about two seconds. */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ready(); i++) await sleep(10);
}

test.serial("XLSX: while nobody reads the file, the writer takes no more pages than its backlog bound allows; reading on, the file comes whole", async (t) => {
  const output = new PassThrough();
  const sheet = openStatementSheet(new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, ...STATEMENT_WORKBOOK_OPTIONS }), HEAD, DAY_START.getTime(), "en");
  const PAGES = 60;
  const source = countedPages(PAGES);
  let finished = false;
  const writing = writeStatementSheet(sheet, source.pages, HEAD, DAY_END.getTime(), new AbortController().signal).then(() => (finished = true));
  // Compression runs on zlib's threads: wait until the writer has stopped taking pages.
  let stalledAt = -1;
  for (let i = 0; i < 30 && stalledAt !== source.taken(); i++) {
    stalledAt = source.taken();
    await sleep(200);
  }
  // A page of this sheet is some 400 KB of XML. What is held is XLSX_BACKLOG_BYTES (512 KB) in front of
  // the compressor, the page that went past it, and what the compressor and the zip writer hold
  // (STATEMENT_WORKBOOK_OPTIONS): a few pages, never the 24 MB of all of them, which a writer
  // without the bound takes at once (and one with archiver's 1 MiB buffer some forty pages).
  t.true(stalledAt <= PAGES / 4, `${stalledAt} of ${PAGES} pages taken with nobody reading`);
  t.false(finished);
  await sleep(300);
  t.is(source.taken(), stalledAt, "still waiting, not creeping on");

  const chunks: Buffer[] = [];
  output.on("data", (chunk: Buffer) => chunks.push(chunk));
  await writing;
  t.is(source.taken(), PAGES);
  // Its 60,003 rows counted in the sheet's XML (read-excel-file would take seconds over them).
  const xml = xlsxPart(Buffer.concat(chunks), "xl/worksheets/sheet1.xml");
  t.is(xml.match(/<row /g)?.length, PAGES * STATEMENT_PAGE_LINES + 3);
  t.regex(xml, new RegExp(`<row r="${PAGES * STATEMENT_PAGE_LINES + 3}"[^>]*>.*closing_balance.*</row></sheetData>`));
});

test.serial("XLSX: stopped while waiting for its reader, the writer resolves at once and takes no further page", async (t) => {
  const output = new PassThrough();
  const sheet = openStatementSheet(new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, ...STATEMENT_WORKBOOK_OPTIONS }), HEAD, DAY_START.getTime(), "tr");
  const source = countedPages(40);
  const stop = new AbortController();
  const writing = writeStatementSheet(sheet, source.pages, HEAD, DAY_END.getTime(), stop.signal);
  await sleep(200);
  const stalledAt = source.taken();
  output.destroy();
  stop.abort();
  t.is(await Promise.race([writing.then(() => "resolved"), sleep(2_000).then(() => "still waiting")]), "resolved");
  t.is(source.taken(), stalledAt);
});

test.serial("XLSX through the gateway: a client that goes away mid-file stops the pages being asked for, and is no failure", async (t) => {
  const lines = manyLines(20 * STATEMENT_PAGE_LINES);
  const all = pagesOf(lines);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The second page waits until the client has gone.
  paged = async (req) => {
    if (req.cursor !== "") await gate;
    return all(req);
  };
  try {
    asked.length = 0;
    app.logLines.length = 0;
    const path = "/v1/statement?from=2026-11-22&to=2026-11-22&format=xlsx";
    const closed = new Promise<number>((resolve) => {
      const request = http.request(new URL(path, app.url), { agent: false, headers: authHeaders(merchant, app.clock, { method: "GET", path }) }, (res) => {
        let received = 0;
        res.on("data", (chunk: Buffer) => {
          received += chunk.length;
          request.destroy();
        });
        res.on("close", () => resolve(received));
      });
      // Destroyed on purpose: its "socket hang up" is the point, not a failure.
      request.on("error", () => undefined);
      request.end();
    });
    const received = await closed;
    t.true(received > 0, "the file had begun");
    await until(() => asked.length === 2);
    t.deepEqual(asked.map((r) => r.cursor), ["", String(STATEMENT_PAGE_LINES)]);
    // Let the server see the connection close, then answer the waiting page.
    await sleep(100);
    release();
    await sleep(300);
    t.is(asked.length, 2, "no page asked once the client was gone");
    t.false(app.logLines.some((l) => l.includes("statement failed while streaming")), "a client going away is not logged as a failure");
  } finally {
    paged = undefined;
  }
});
