import {
  XlsxSheet,
  statementHeaders,
  xlsxMoney,
  type FileLocale,
  type StatementHead,
  type StatementMovement,
  type XlsxColumn,
  type XlsxColumnKind,
  type XlsxValue,
  type XlsxWorkbookWriter,
} from "@payments/records";
import type ExcelJS from "exceljs";

/*
 * The XLSX file of GET /v1/statement (statement.ts, the route): the streamed sheet, in English
 * or Turkish. The CSV (head, rows, tail) is @payments/records' statement.ts, which the merchant
 * dashboard's statement uses too.
 */

export { statementCsv, statementCsvHead, statementCsvRows, statementCsvTail } from "@payments/records";

// ---------------------------------------------------------------------------------------------
// XLSX.

/** The kinds and least widths of the statement sheet's columns, in order; a wider header widens its column. */
const STATEMENT_SHEET_COLUMNS: ReadonlyArray<{ kind: XlsxColumnKind; width: number }> = [
  { kind: "time", width: 20 },
  { kind: "text", width: 18 },
  { kind: "integer", width: 15 },
  { kind: "money", width: 15 },
  { kind: "integer", width: 15 },
  { kind: "money", width: 15 },
  { kind: "text", width: 26 },
  { kind: "text", width: 26 },
];

/** The sheet's tab by locale. */
const STATEMENT_SHEET_NAME: Readonly<Record<FileLocale, string>> = { en: "Statement", tr: "Hesap ekstresi" };

/** Bytes of the finished (compressed) file the zip writer holds for a reader that is slower than the writer. */
export const STATEMENT_ZIP_BUFFER_BYTES = 64 * 1024;

/**
 * The options of the streaming workbook a statement is written with: no shared-strings table,
 * which would hold every id of the statement in memory; and the zip writer's buffer at
 * STATEMENT_ZIP_BUFFER_BYTES. archiver's own default is 1 MiB of compressed rows, which for a
 * reader that stalls is some forty pages asked of the payout service ahead of it
 * (XlsxSheet.drained bounds only what waits in front of the compressor). exceljs passes `zip`
 * to archiver, whose options its types do not list.
 */
export const STATEMENT_WORKBOOK_OPTIONS = {
  useStyles: true,
  useSharedStrings: false,
  zip: { highWaterMark: STATEMENT_ZIP_BUFFER_BYTES } as Partial<ExcelJS.stream.xlsx.ArchiverZipOptions>,
} as const;

/**
 * Opens the statement's sheet in `workbook` and writes its header row and opening row (at the
 * start of `from`, a date cell in UTC). Synchronous, so the route opens it before the status is
 * sent: a writer that cannot be opened is still the JSON error envelope.
 */
export function openStatementSheet(workbook: XlsxWorkbookWriter, statement: StatementHead, startMs: number, locale: FileLocale): XlsxSheet {
  const headers = statementHeaders(statement.currency, locale, "xlsx");
  const columns: XlsxColumn[] = STATEMENT_SHEET_COLUMNS.map((c, i) => ({ header: headers[i]!, kind: c.kind, width: Math.max(c.width, headers[i]!.length + 2) }));
  const sheet = new XlsxSheet(workbook, STATEMENT_SHEET_NAME[locale], columns);
  sheet.add([new Date(startMs), "opening_balance", null, null, statement.openingBalance, xlsxMoney(statement.openingBalance), null, null]);
  return sheet;
}

/** One sheet row of a movement: the CSV's cells, typed. */
function statementSheetRow(m: StatementMovement): XlsxValue[] {
  return [new Date(m.at), m.kind, m.amount, xlsxMoney(m.amount), m.balanceAfter, xlsxMoney(m.balanceAfter), m.transactionId, m.processId];
}

/**
 * Writes the movements into the opened sheet page by page, then the closing row (at the end of
 * `to`, exclusive) and the end of the file. Before each next page it waits until the file's
 * reader has taken about all but XLSX_BACKLOG_BYTES of what was written (XlsxSheet.drained):
 * the next page is asked of the payout service only then, as the CSV and JSON are. When
 * `stop` is aborted (the client went away) it stops asking and resolves without ending the file.
 */
export async function writeStatementSheet(sheet: XlsxSheet, pages: AsyncIterable<readonly StatementMovement[]>, statement: StatementHead, endMs: number, stop: AbortSignal): Promise<void> {
  for await (const movements of pages) {
    for (const m of movements) sheet.add(statementSheetRow(m));
    await sheet.drained(stop);
    if (stop.aborted) return;
  }
  sheet.add([new Date(endMs), "closing_balance", null, null, statement.closingBalance, xlsxMoney(statement.closingBalance), null, null]);
  // A reader gone while the file ends would leave the workbook waiting for a stream that no longer flows.
  await Promise.race([sheet.finish(), new Promise<void>((resolve) => stop.addEventListener("abort", () => resolve(), { once: true }))]);
}
