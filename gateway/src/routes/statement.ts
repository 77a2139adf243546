import { AsyncResource } from "node:async_hooks";
import { PassThrough, Readable } from "node:stream";
import type { Client } from "@connectrpc/connect";
import type { PayoutService } from "@payments/contracts/payout";
import type { Clock, Logger } from "@payments/kit";
import {
  CSV_BOM,
  FILE_LOCALES,
  XLSX_CONTENT_TYPE,
  knownTimeZone,
  statementMovement,
  statementPeriod,
  statementRecord,
  type FileLocale,
  type StatementMovement,
  type StatementRecord,
} from "@payments/records";
import { z } from "zod";
import { successJson } from "../envelope.js";
import { callService, validationFailure } from "../errors.js";
import { authenticatedMerchantId, optionalQueryValue, parseInput, queryValue, type Route } from "./route.js";
import { openStatementSheet, STATEMENT_WORKBOOK_OPTIONS, statementCsvHead, statementCsvRows, statementCsvTail, writeStatementSheet } from "./statement-files.js";
import { SCOPES } from "../key-scopes.js";

export { openStatementSheet, STATEMENT_WORKBOOK_OPTIONS, STATEMENT_ZIP_BUFFER_BYTES, statementCsv, writeStatementSheet } from "./statement-files.js";

/*
 * GET /v1/statement: the merchant's own ledger of one currency over whole UTC days, for an
 * accountant (or, with `timeZone`, over that zone's days: Europe/Istanbul's are Türkiye's; the
 * movements' times stay UTC instants). The balance it reports is the money the merchant owns: available + held of
 * GET /v1/balance. Money held for a withdrawal is still the merchant's until the withdrawal
 * completes, so a hold or a release moves nothing between the merchant and the world (amount
 * 0; availableChange and heldChange show the move between the two parts) and the
 * withdrawal's debit is when the money leaves.
 *
 * A statement has no size limit: the payout service answers it a page of lines at a time, and
 * the response is streamed, each page written as it arrives and the next asked for only when
 * the client has taken it, so the gateway holds about one page whatever the statement's size.
 *
 * Three formats: JSON (the default), CSV and XLSX, the files in English or Turkish (`locale`):
 * what an accountant opens in Excel. Every CSV starts with a UTF-8 byte-order mark; a Turkish
 * one is `;`-separated with comma decimals. The XLSX has typed cells (times as date cells in
 * UTC, amounts as numbers) and the CSV's rows.
 */

/** Lines asked of the payout service per page: about what the gateway holds of a statement at once. */
export const STATEMENT_PAGE_LINES = 1000;

export { STATEMENT_KIND_BY_LEDGER_KIND, STATEMENT_KINDS, STATEMENT_MAX_DAYS, statementRecord, type StatementHead, type StatementKind, type StatementMovement, type StatementRecord } from "@payments/records";

export const STATEMENT_FORMATS = ["json", "csv", "xlsx"] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** The languages of a statement file (CSV, XLSX); the JSON is the same whatever the locale. */
export const STATEMENT_LOCALES = FILE_LOCALES;

const DATE_PROBLEM = "must be a date, YYYY-MM-DD (a whole UTC day, or timeZone's; a time of day is not accepted)";
const TIME_ZONE_PROBLEM = "must be an IANA time zone name, e.g. Europe/Istanbul or UTC (not an offset such as +03:00)";

/** An optional IANA time zone, as Intl knows it, in its canonical spelling. */
const timeZone = optionalQueryValue.transform((value, ctx) => {
  if (value === undefined) return undefined;
  const known = knownTimeZone(value);
  if (known !== undefined) return known;
  ctx.addIssue({ code: "custom", message: TIME_ZONE_PROBLEM });
  return z.NEVER;
});
const isoDate = z.iso.date();

/** A calendar date (YYYY-MM-DD, a real day) as the epoch ms of its start in UTC. */
const day = queryValue.transform((value, ctx) => {
  if (!isoDate.safeParse(value).success) {
    ctx.addIssue({ code: "custom", message: DATE_PROBLEM });
    return z.NEVER;
  }
  return Date.parse(`${value}T00:00:00.000Z`);
});

/** An optional parameter that is one of `values`, exactly as written. */
function oneOf<const T extends readonly string[]>(values: T) {
  return optionalQueryValue.transform((value, ctx): T[number] | undefined => {
    if (value === undefined) return undefined;
    const known = values.find((v) => v === value);
    if (known !== undefined) return known;
    ctx.addIssue({ code: "custom", message: `must be one of ${values.join(", ")}` });
    return z.NEVER;
  });
}

/** Unknown parameters are ignored; a known one given twice is a VALIDATION_ERROR. */
export const statementQuery = z.object({
  currency: optionalQueryValue,
  from: day,
  to: day,
  format: oneOf(STATEMENT_FORMATS),
  locale: oneOf(STATEMENT_LOCALES),
  timeZone,
});

/** The payout service's request fields by the merchant's query parameters, for its VALIDATION_ERROR. */
const STATEMENT_FIELDS: Readonly<Record<string, string>> = { currency: "currency", from_ms: "from", to_ms: "to" };

/**
 * The JSON envelope of a statement in three parts: everything before the first movement, and
 * after the last; the movements go between, comma-separated. Made from the same `successJson`
 * and record as a whole response would be, so the bytes are the ones JSON.stringify gives.
 */
function jsonFrame(head: Omit<StatementRecord, "movements">, clock: Clock): { before: string; after: string } {
  const marker = "\u0000";
  const [envelopeBefore, envelopeAfter] = successJson(marker, clock).split(marker) as [string, string];
  const data = JSON.stringify({ ...head, movements: [] });
  // movements is the record's last key: its empty array closes the data object.
  if (!data.endsWith(',"movements":[]}')) throw new Error("a statement record's last key must be movements");
  return { before: `${envelopeBefore}${data.slice(0, -"]}".length)}`, after: `]}${envelopeAfter}` };
}

/** GET /v1/statement, JSON (default), CSV (format=csv) or XLSX (format=xlsx), in English or Turkish (locale), from the payout service, streamed. */
export function statement(deps: { payouts: Pick<Client<typeof PayoutService>, "getStatement">; clock: Clock; logger: Logger }): Route[] {
  return [
    {
      method: "GET",
      path: "/v1/statement",
      access: "merchant",
      scopes: SCOPES.read,
      handler: async (ctx) => {
        const query = parseInput(statementQuery, ctx.query, "query");
        const period = statementPeriod(query.from, query.to, query.timeZone);
        if ("problem" in period) throw validationFailure([{ field: "to", problem: period.problem }]);
        const format: StatementFormat = query.format ?? "json";
        const locale: FileLocale = query.locale ?? "en";
        // `to` is a whole day (UTC's, or timeZone's): the statement ends where the next day starts.
        const { startMs, endMs, from, to } = period;
        const merchantId = authenticatedMerchantId(ctx);
        // Bound to this request's context: the later pages are asked while the body streams, from the
        // stream's own context, and must still speak for this merchant (the gateway's signed voice).
        const ask = AsyncResource.bind((cursor: string) =>
          callService(
            deps.payouts.getStatement({ merchantId, currency: query.currency ?? "", fromMs: BigInt(startMs), toMs: BigInt(endMs), limit: STATEMENT_PAGE_LINES, cursor }),
            { fields: STATEMENT_FIELDS },
          ),
        );
        // The first page before any header is sent: a refusal or an outage is still the JSON
        // error envelope, with its status.
        const first = await ask("");
        const { movements: firstMovements, ...head } = statementRecord(first, from, to, query.timeZone);

        let written = 0;
        /** The pages, each counted as written once the next is asked for (the log of a failure says how far it got). */
        async function* movementPages(): AsyncGenerator<StatementMovement[]> {
          yield firstMovements;
          written += firstMovements.length;
          let cursor = first.nextCursor;
          while (cursor !== "") {
            const page = await ask(cursor);
            const movements = page.lines.map(statementMovement);
            yield movements;
            written += movements.length;
            cursor = page.nextCursor;
          }
        }
        const failed = (err: unknown) =>
          deps.logger.error({ err, merchantId, from, to, format, movementsSent: written }, "statement failed while streaming; response aborted");

        ctx.status = 200;
        // The currency is the service's configured code and the dates were validated: nothing here needs quoting rules.
        const attachment = (extension: string) => ctx.set("Content-Disposition", `attachment; filename="statement-${head.currency}-${from}-${to}.${extension}"`);

        if (format === "xlsx") {
          // Loaded on the first XLSX statement, not at start: exceljs is about 30 MiB of resident
          // memory that every gateway held idle for a format few ask for (issue 22).
          const { default: ExcelJS } = await import("exceljs");
          const output = new PassThrough();
          const stop = new AbortController();
          // Koa destroys the body when the response closes, also when the client goes away first.
          output.once("close", () => stop.abort());
          const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: output, ...STATEMENT_WORKBOOK_OPTIONS });
          const sheet = openStatementSheet(workbook, head, startMs, locale);
          ctx.type = XLSX_CONTENT_TYPE;
          attachment("xlsx");
          ctx.body = output;
          // Not awaited: the handler returns so Koa sends the status and streams `output` while
          // the pages are written into it. A read moves no money; a failure is logged and
          // destroys `output`, so the client sees the response break off (an .xlsx cut short
          // does not open), never a file that merely looks complete.
          void writeStatementSheet(sheet, movementPages(), head, endMs, stop.signal).catch((err: unknown) => {
            failed(err);
            output.destroy(err instanceof Error ? err : new Error(String(err)));
          });
          return;
        }

        async function* body(): AsyncGenerator<string> {
          try {
            if (format === "csv") {
              yield CSV_BOM + statementCsvHead(head, startMs, locale);
              for await (const movements of movementPages()) yield statementCsvRows(movements, locale);
              yield statementCsvTail(head, endMs, locale);
              return;
            }
            const frame = jsonFrame(head, deps.clock);
            yield frame.before;
            let any = false;
            for await (const movements of movementPages()) {
              if (movements.length === 0) continue;
              yield (any ? "," : "") + movements.map((m) => JSON.stringify(m)).join(",");
              any = true;
            }
            yield frame.after;
          } catch (err) {
            // The status and part of the body are sent. Throwing destroys the stream, and Koa
            // then destroys the response, so the client sees a broken transfer, never a
            // statement that merely looks complete.
            failed(err);
            throw err;
          }
        }

        if (format === "csv") {
          ctx.type = "text/csv; charset=utf-8";
          attachment("csv");
        } else {
          ctx.type = "application/json; charset=utf-8";
        }
        // Bytes, not objects: the stream's buffer is then 16 KiB, so the next page is asked
        // for only once the client has taken most of this one.
        ctx.body = Readable.from(body(), { objectMode: false });
      },
    },
  ];
}
