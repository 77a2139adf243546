import test from "ava";
import { parse } from "csv-parse/sync";
import { CSV_BOM, CSV_DIALECTS, FILE_LOCALES, csvCell, csvLines, csvNumber, kurusToLira } from "../src/index.js";

/*
 * The CSV writer in both dialects: English (`,` between cells, `1500.50`) and Turkish (`;`,
 * `1500,50`), each file read back with csv-parse, which is not the writer.
 */

const en = CSV_DIALECTS.en;
const tr = CSV_DIALECTS.tr;

test("CSV_BOM is the UTF-8 byte-order mark: EF BB BF once encoded", (t) => {
  t.is(CSV_BOM, "\uFEFF");
  t.deepEqual([...Buffer.from(CSV_BOM, "utf8")], [0xef, 0xbb, 0xbf]);
  t.deepEqual(FILE_LOCALES, ["en", "tr"]);
  t.deepEqual(CSV_DIALECTS, { en: { separator: ",", decimalMark: "." }, tr: { separator: ";", decimalMark: "," } });
});

test("csvCell quotes what holds either dialect's separator, a quote or a line break, and nothing else", (t) => {
  for (const dialect of [undefined, en, tr]) {
    t.is(csvCell("Ayşe Yılmaz", dialect), "Ayşe Yılmaz");
    t.is(csvCell("payout, 1", dialect), '"payout, 1"');
    t.is(csvCell("a;b", dialect), '"a;b"');
    t.is(csvCell('say "hi"', dialect), '"say ""hi"""');
    t.is(csvCell("two\nlines", dialect), '"two\nlines"');
    t.is(csvCell("two\r\nlines", dialect), '"two\r\nlines"');
    t.is(csvCell("1.5 TL: ok", dialect), "1.5 TL: ok");
  }
});

test("a text cell stays one cell when a spreadsheet of the other language splits the file at its own separator", (t) => {
  const hostile = ["Ali;=1+1", "Ali,=1+1", "x;@SUM(A1)", "x,+90", 'a;"=2"', "1;-2"];
  for (const [written, readAs] of [[en, tr], [tr, en]] as const) {
    const file = CSV_BOM + csvLines(hostile.map((text) => [csvCell(text, written)]), written);
    const rows = parse(file, { bom: true, delimiter: readAs.separator, relax_column_count: true });
    t.deepEqual(rows, hostile.map((text) => [text]), `written ${written.separator}, read ${readAs.separator}`);
  }
});

test("csvCell's formula guard: = + - @ tab and CR first get a leading apostrophe, in both dialects", (t) => {
  for (const dialect of [en, tr]) {
    t.is(csvCell("=1+1", dialect), "'=1+1");
    t.is(csvCell("+90 555", dialect), "'+90 555");
    t.is(csvCell("-500,00", dialect), `"'-500,00"`, "text that looks like a negative amount stays text");
    t.is(csvCell("@SUM(A1)", dialect), "'@SUM(A1)");
    t.is(csvCell("\tx", dialect), "'\tx");
    t.is(csvCell("\rx", dialect), `"'\rx"`);
    t.is(csvCell('=HYPERLINK("x")', dialect), `"'=HYPERLINK(""x"")"`);
    t.is(csvCell("a=b", dialect), "a=b", "only a value starting with one is a formula");
    t.is(csvCell("", dialect), "");
  }
  t.is(csvCell("=A1;B1", tr), `"'=A1;B1"`, "guarded, then quoted for the Turkish separator");
});

test("csvNumber writes numbers with the dialect's decimal mark, never a guard, and refuses what is not a plain number", (t) => {
  t.is(csvNumber(150_050), "150050");
  t.is(csvNumber(150_050n, tr), "150050");
  t.is(csvNumber("1500.50"), "1500.50");
  t.is(csvNumber("1500.50", tr), "1500,50");
  t.is(csvNumber("-500.00"), "-500.00");
  t.is(csvNumber("-500.00", tr), "-500,00");
  t.is(csvNumber(-99, tr), "-99");
  t.is(csvNumber(kurusToLira(-99), tr), "-0,99");
  t.is(csvNumber(kurusToLira(123_456_789n), tr), "1234567,89", "no thousands separator");
  for (const dialect of [en, tr]) {
    for (const bad of ["1,500.50", "1500,50", "1.234,56", "=1+1", "", " 1", "1e21", "NaN", "-", ".5", "5."]) {
      t.throws(() => csvNumber(bad, dialect), { message: /is not a plain number/ }, `${JSON.stringify(bad)}`);
    }
  }
  t.throws(() => csvNumber(1e21), { message: /is not a plain number/ });
});

test("kurusToLira is exact with two decimals and the sign", (t) => {
  t.is(kurusToLira(150_050), "1500.50");
  t.is(kurusToLira(-50_000n), "-500.00");
  t.is(kurusToLira(-99), "-0.99");
  t.is(kurusToLira(0), "0.00");
  t.is(kurusToLira(9_007_199_254_740_993n), "90071992547409.93");
});

test("csvLines joins by the dialect's separator and ends every line with CRLF", (t) => {
  t.is(csvLines([]), "");
  t.is(csvLines([["a", "b"], ["c", ""]]), "a,b\r\nc,\r\n");
  t.is(csvLines([["a", "b"], ["c", ""]], en), "a,b\r\nc,\r\n");
  t.is(csvLines([["a", "b"], ["c", ""]], tr), "a;b\r\nc;\r\n");
});

/** A file of tricky rows in `dialect`, with its byte-order mark, and what a reader must get back. */
function roundTrip(dialect: typeof en) {
  const texts = ["Ayşe Yılmaz", "payout, 1", "a;b", 'say "hi"', "two\r\nlines", "=cmd|' /C calc'!A0", "-500,00", "Ödeme"];
  const amounts = [150_050, -50_000, -99, 0];
  const rows = texts.map((text, i) => [csvCell(text, dialect), csvNumber(amounts[i % amounts.length]!, dialect), csvNumber(kurusToLira(amounts[i % amounts.length]!), dialect)]);
  const file = Buffer.from(CSV_BOM + csvLines([["Name", "Kuruş", "Lira"].map((h) => csvCell(h, dialect)), ...rows], dialect), "utf8");
  const expected = [
    ["Name", "Kuruş", "Lira"],
    ...texts.map((text, i) => {
      const kurus = amounts[i % amounts.length]!;
      return [/^[=+\-@\t\r]/.test(text) ? `'${text}` : text, String(kurus), kurusToLira(kurus).replace(".", dialect.decimalMark)];
    }),
  ];
  return { file, expected };
}

test("a file in either dialect, byte-order mark first, reads back with csv-parse cell for cell", (t) => {
  for (const dialect of [en, tr]) {
    const { file, expected } = roundTrip(dialect);
    t.deepEqual([...file.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const rows = parse(file, { bom: true, delimiter: dialect.separator, record_delimiter: "\r\n" });
    t.deepEqual(rows, expected, dialect.separator);
    // The amounts convert back to kuruş exactly.
    for (const row of rows.slice(1)) {
      const lira = row[2]!.replace(dialect.decimalMark, ".");
      t.is(BigInt(lira.replace(".", "")), BigInt(row[1]!), `${row[2]} is ${row[1]} kuruş`);
    }
  }
});
