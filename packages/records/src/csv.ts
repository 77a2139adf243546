/*
 * CSV as merchants and operators open it in a spreadsheet: RFC 4180 quoting, CRLF line ends,
 * text cells defused against formula injection, and amounts in lira written exactly from
 * kuruş. One implementation for every CSV the system writes (the operator CLI's bank
 * bulk-payment file, the gateway's statement export).
 *
 * Every CSV file starts with CSV_BOM: without it Excel reads UTF-8 as the machine's code page
 * (Windows-1254 in Türkiye) and "Ödeme" comes out as "Ã–deme". A file is written in one of two
 * dialects: English (`,` between cells, `.` in amounts: today's files) or Turkish (`;` between
 * cells, `,` in amounts), because Excel set to Turkish splits cells only at `;` and reads
 * `1500,50` as a number, so an English file opens there as one column of text.
 */

/** The UTF-8 byte-order mark every CSV file starts with, so Excel knows the file is UTF-8. */
export const CSV_BOM = "\uFEFF";

/** The languages a downloaded file (CSV or XLSX) can be asked in: its header names and, for a CSV, its dialect. */
export const FILE_LOCALES = ["en", "tr"] as const;
export type FileLocale = (typeof FILE_LOCALES)[number];

/** How a spreadsheet of one language reads a CSV. */
export interface CsvDialect {
  /** Between cells. */
  separator: "," | ";";
  /** Between lira and kuruş in an amount. */
  decimalMark: "." | ",";
}

/**
 * The dialect of each locale. Turkish amounts carry no thousands separator (`1234,56`, not
 * `1.234,56`): Excel's Turkish locale reads both as the same number, and without the dots an
 * amount is never mistaken for a date or for three decimals by another program.
 */
export const CSV_DIALECTS: Readonly<Record<FileLocale, CsvDialect>> = {
  en: { separator: ",", decimalMark: "." },
  tr: { separator: ";", decimalMark: "," },
};

const ENGLISH = CSV_DIALECTS.en;

/**
 * One CSV text cell. A value a spreadsheet would read as a formula (starting with =, +, -, @,
 * a tab or a carriage return) gets a leading apostrophe, so whoever opens the file never runs
 * a name someone else chose. Then RFC 4180: a value holding a double quote, CR, LF or the
 * separator of either dialect is quoted, its quotes doubled. Either, whatever the file's
 * dialect: Excel splits a CSV at its own language's separator, so an English file opened in
 * Turkish Excel (or a Turkish one in English Excel) would otherwise cut `Ali;=1+1` into a
 * second cell that starts with `=`; quoted, it stays one cell of text. `dialect` is the file's,
 * for symmetry with csvNumber and csvLines: a text cell is written the same in both.
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- kept on purpose (see above): callers pass the file's dialect as to csvNumber and csvLines
export function csvCell(value: string, _dialect: CsvDialect = ENGLISH): string {
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",;\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/**
 * One CSV number cell: an integer, or a decimal such as -1500.50, written as it is with the
 * dialect's decimal mark (-1500,50 in Turkish). A negative amount must stay a number the
 * spreadsheet sums, so it does not get csvCell's apostrophe; anything that is not such a
 * number is refused rather than written unguarded.
 */
export function csvNumber(value: bigint | number | string, dialect: CsvDialect = ENGLISH): string {
  const text = String(value);
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a plain number for a CSV number cell`);
  return dialect.decimalMark === "." ? text : text.replace(".", dialect.decimalMark);
}

/** Rows of already-encoded cells (csvCell, csvNumber of the same dialect) as lines: cells joined by the dialect's separator, every line ended by CRLF. */
export function csvLines(rows: readonly (readonly string[])[], dialect: CsvDialect = ENGLISH): string {
  return rows.map((row) => row.join(dialect.separator) + "\r\n").join("");
}

/**
 * Kuruş to lira with two decimals, exactly (bigint arithmetic, never a float), keeping the
 * sign: 150050 → "1500.50", -99 → "-0.99".
 */
export function kurusToLira(amount: bigint | number): string {
  const kurus = BigInt(amount);
  const magnitude = kurus < 0n ? -kurus : kurus;
  return `${kurus < 0n ? "-" : ""}${magnitude / 100n}.${(magnitude % 100n).toString().padStart(2, "0")}`;
}
