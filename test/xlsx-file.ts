import { inflateRawSync } from "node:zlib";
import { readSheet, type Row } from "read-excel-file/node";

/*
 * Reading the .xlsx files the product writes, apart from the writer (exceljs): the cells with
 * read-excel-file, and what it does not report (frozen rows, column widths, number formats)
 * from the file's XML, unzipped here with node:zlib. Shared by the gateway's statement tests,
 * the statement's end-to-end test and the CLI's export tests.
 */

/** The rows of the first sheet as read-excel-file reads them: strings, numbers, Dates, null for an empty cell. */
export async function xlsxRows(file: Uint8Array): Promise<Row[]> {
  return readSheet(Buffer.from(file));
}

/** The text of one part of the file (e.g. `xl/worksheets/sheet1.xml`), found through the zip's central directory. */
export function xlsxPart(file: Uint8Array, name: string): string {
  const zip = Buffer.from(file);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip file: no end of central directory");
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i++) {
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (zip.toString("utf8", at + 46, at + 46 + nameLength) === name) {
      const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(dataAt, dataAt + compressedSize);
      return (method === 8 ? inflateRawSync(data) : data).toString("utf8");
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`no ${name} in the file`);
}

/** Excel's built-in number formats the writer uses, by id (ECMA-376 §18.8.30). */
const BUILT_IN_FORMATS: Readonly<Record<string, string>> = { "0": "General", "1": "0", "4": "#,##0.00", "49": "@" };

/** What the first sheet says about its layout: rows frozen at the top, each column's width (in column order, from A), and each cell's number format by reference (A1, C3, …). */
export function xlsxLayout(file: Uint8Array): { frozenRows: number; widths: number[]; formats: Map<string, string> } {
  const sheet = xlsxPart(file, "xl/worksheets/sheet1.xml");
  const styles = xlsxPart(file, "xl/styles.xml");
  const custom = new Map([...styles.matchAll(/<numFmt numFmtId="(\d+)" formatCode="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll("&quot;", '"')]));
  const cellXfs = /<cellXfs[^>]*>(.*?)<\/cellXfs>/s.exec(styles)?.[1] ?? "";
  const formatIds = [...cellXfs.matchAll(/<xf [^>]*numFmtId="(\d+)"/g)].map((m) => m[1]!);
  const formatOf = (style: string | undefined) => {
    const id = formatIds[Number(style ?? 0)] ?? "0";
    return custom.get(id) ?? BUILT_IN_FORMATS[id] ?? `numFmtId ${id}`;
  };
  const pane = /<pane [^>]*ySplit="(\d+)"[^>]*state="frozen"/.exec(sheet);
  // One <col> may stand for several columns of the same width (min..max).
  const widths = [...sheet.matchAll(/<col min="(\d+)" max="(\d+)" width="([\d.]+)"/g)].flatMap((m) => Array<number>(Number(m[2]) - Number(m[1]) + 1).fill(Number(m[3])));
  const formats = new Map([...sheet.matchAll(/<c r="([A-Z]+\d+)"(?: s="(\d+)")?/g)].map((m) => [m[1]!, formatOf(m[2])]));
  return { frozenRows: pane ? Number(pane[1]) : 0, widths, formats };
}

/**
 * Whether a date cell as read-excel-file reads it is the instant `expected`. The file holds a
 * time as a number of days; read-excel-file turns that into milliseconds with Math.floor, so a
 * time with milliseconds may read 1 ms early (the float is a hair under the exact
 * millisecond). Excel, which rounds, shows it exact.
 */
export function isInstant(cell: unknown, expected: Date | string): boolean {
  const ms = typeof expected === "string" ? Date.parse(expected) : expected.getTime();
  return cell instanceof Date && (cell.getTime() === ms || cell.getTime() === ms - 1);
}
