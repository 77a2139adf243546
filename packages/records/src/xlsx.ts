/*
 * Spreadsheets (.xlsx) as merchants and operators open them: one sheet, a bold header row that
 * stays in view while scrolling (frozen), set column widths, and typed cells: text as text
 * (never a formula, whatever it starts with), whole numbers as numbers, amounts as numbers in
 * the currency's unit shown with two decimals, times as date cells in UTC. One implementation
 * for every spreadsheet the system writes (the gateway's statement, the operator CLI's bank
 * bulk-payment file), beside the CSV writer of csv.ts.
 *
 * Written with exceljs's streaming WorkbookWriter, row by row, so a sheet of any length never
 * sits whole in memory. records does not depend on exceljs: the gateway and the CLI, which do,
 * pass their writer in, and the interfaces below are what this module asks of it.
 */
import { kurusToLira } from "./csv.js";

/** The media type of an .xlsx file. */
export const XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/** How a column's cells are typed and shown. */
export type XlsxColumnKind = "text" | "time" | "integer" | "money";

export interface XlsxColumn {
  header: string;
  kind: XlsxColumnKind;
  /** In characters, as Excel measures a column's width. */
  width: number;
}

/**
 * Excel's number format of each kind. Format codes are stored language-neutral: Excel set to
 * Turkish shows `#,##0.00` as `1.234,56`. Text columns are formatted as text (`@`) too, so an
 * IBAN or an id someone retypes is not turned into a number.
 */
export const XLSX_NUMBER_FORMATS: Readonly<Record<XlsxColumnKind, string>> = {
  text: "@",
  time: "yyyy-mm-dd hh:mm:ss",
  integer: "0",
  money: "#,##0.00",
};

/** One cell: a string (text), a Date (time), a number (integer, money: see xlsxMoney), or null for an empty cell. */
export type XlsxValue = string | number | Date | null;

/**
 * Kuruş as the lira number a money cell holds: the exact decimal of kurusToLira (bigint
 * arithmetic) read as a number, so 150050 is the number Excel stores when 1500.50 is typed in.
 * Excel shows 15 significant digits: every amount below 10^13 lira is shown exactly.
 */
export function xlsxMoney(kurus: bigint | number): number {
  return Number(kurusToLira(kurus));
}

/** exceljs's streaming WorkbookWriter as far as XlsxSheet drives it. */
export interface XlsxWorkbookWriter {
  addWorksheet(name: string, options: { views: Array<{ state: "frozen"; ySplit: number }> }): XlsxWorksheetWriter;
  commit(): Promise<void>;
}

/** A worksheet of exceljs's streaming writer, as far as XlsxSheet drives it. */
export interface XlsxWorksheetWriter {
  getColumn(index: number): { width?: number; numFmt?: string };
  addRow(values: XlsxValue[]): XlsxRowWriter;
  commit(): void;
}

export interface XlsxRowWriter {
  font?: { bold?: boolean };
  commit(): void;
}

/**
 * Bytes of rows written but not yet compressed past which XlsxSheet.drained waits: about two
 * pages of a statement. exceljs's streaming writer has no backpressure of its own
 * (exceljs/exceljs#734): committed rows pile up in front of the zip compressor for as long as
 * whoever reads the file is slower than whoever writes it.
 */
export const XLSX_BACKLOG_BYTES = 512 * 1024;

/** Where a streaming worksheet's committed rows wait for the compressor: the input stream exceljs 4.4 pipes the sheet's XML into. */
interface RowBacklog {
  _writableState: { length: number };
  once(event: "drain", listener: () => void): unknown;
  removeListener(event: "drain", listener: () => void): unknown;
}

function isRowBacklog(value: unknown): value is RowBacklog {
  if (typeof value !== "object" || value === null) return false;
  const state = (value as { _writableState?: unknown })._writableState;
  return (
    typeof state === "object" &&
    state !== null &&
    typeof (state as { length?: unknown }).length === "number" &&
    typeof (value as { once?: unknown }).once === "function" &&
    typeof (value as { removeListener?: unknown }).removeListener === "function"
  );
}

/**
 * The worksheet's row backlog. exceljs offers no public way to it (#734), so this reads the
 * writer's internals: the sheet's `stream`, whose first pipe is the compressor's input. A
 * version of exceljs without that shape fails here, when the sheet is opened (before any byte
 * of a file is sent), not by streaming without a bound; the gateway's tests pin the bound.
 */
function rowBacklog(worksheet: XlsxWorksheetWriter): RowBacklog {
  const stream: unknown = (worksheet as unknown as { stream?: unknown }).stream;
  const pipes: unknown = typeof stream === "object" && stream !== null ? (stream as { pipes?: unknown }).pipes : undefined;
  const input: unknown = Array.isArray(pipes) ? (pipes as unknown[])[0] : undefined;
  if (!isRowBacklog(input)) throw new Error("exceljs's streaming worksheet has no longer the shape XlsxSheet reads its row backlog from (stream.pipes[0]._writableState): check the exceljs version");
  return input;
}

function checkCell(value: XlsxValue, column: XlsxColumn, row: number): void {
  if (value === null) return;
  const fits =
    column.kind === "text"
      ? typeof value === "string"
      : column.kind === "time"
        ? value instanceof Date && !Number.isNaN(value.getTime())
        : column.kind === "integer"
          ? Number.isSafeInteger(value)
          : typeof value === "number" && Number.isFinite(value);
  if (!fits) throw new Error(`row ${row}, column "${column.header}" (${column.kind}): ${String(value)} is not a ${column.kind} cell`);
}

/**
 * One sheet of a streaming workbook: its header row written, bold and frozen, its columns
 * sized and formatted. Rows are committed as they are added; `finish` ends the sheet and the
 * file.
 */
export class XlsxSheet {
  readonly #workbook: XlsxWorkbookWriter;
  readonly #worksheet: XlsxWorksheetWriter;
  readonly #columns: readonly XlsxColumn[];
  readonly #backlog: RowBacklog;
  #rows = 0;

  /** `name`: the sheet's tab, at most 31 characters and none of []:*?/\ (Excel's rules). */
  constructor(workbook: XlsxWorkbookWriter, name: string, columns: readonly XlsxColumn[]) {
    if (name.length === 0 || name.length > 31 || /[[\]:*?/\\]/.test(name)) throw new Error(`${JSON.stringify(name)} is not a sheet name Excel accepts`);
    this.#workbook = workbook;
    this.#columns = columns;
    this.#worksheet = workbook.addWorksheet(name, { views: [{ state: "frozen", ySplit: 1 }] });
    columns.forEach((column, i) => {
      const sheetColumn = this.#worksheet.getColumn(i + 1);
      sheetColumn.width = column.width;
      sheetColumn.numFmt = XLSX_NUMBER_FORMATS[column.kind];
    });
    const header = this.#worksheet.addRow(columns.map((c) => c.header));
    header.font = { bold: true };
    header.commit();
    this.#backlog = rowBacklog(this.#worksheet);
  }

  /** Rows written below the header so far. */
  get rows(): number {
    return this.#rows;
  }

  /** Writes one row, a value per column, each of its column's kind (a mismatch throws: it is a bug, never a cell of the wrong type). */
  add(values: readonly XlsxValue[]): void {
    const row = this.#rows + 2;
    if (values.length !== this.#columns.length) throw new Error(`row ${row} has ${values.length} values for ${this.#columns.length} columns`);
    values.forEach((value, i) => checkCell(value, this.#columns[i]!, row));
    this.#worksheet.addRow([...values]).commit();
    this.#rows++;
  }

  /**
   * Resolves once the rows written so far are no more than about XLSX_BACKLOG_BYTES ahead of
   * the compressor, which works only as fast as the file's reader takes what it makes; or at
   * once when `stop` is aborted (the reader went away). A writer of many rows awaits it
   * between batches, so the file stays bounded in memory whatever its length.
   */
  async drained(stop: AbortSignal): Promise<void> {
    const backlog = this.#backlog;
    if (stop.aborted || backlog._writableState.length <= XLSX_BACKLOG_BYTES) return;
    // Past its high-water mark the input always emits "drain" once emptied.
    await new Promise<void>((resolve) => {
      const done = () => {
        backlog.removeListener("drain", done);
        stop.removeEventListener("abort", done);
        resolve();
      };
      backlog.once("drain", done);
      stop.addEventListener("abort", done, { once: true });
    });
  }

  /** Ends the sheet and the workbook: resolves once the whole file has been handed to the output stream. */
  async finish(): Promise<void> {
    this.#worksheet.commit();
    await this.#workbook.commit();
  }
}
