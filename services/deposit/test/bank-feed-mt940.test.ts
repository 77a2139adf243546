import { readFileSync } from "node:fs";
import test from "ava";
import { BankFeedError, decodeStatement, joinWrapped, mt940Adapter, parseMt940, type IncomingTransferRecord } from "../src/bank-feed/index.js";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/mt940/${name}`, import.meta.url));

const ACCOUNT = "TR330006100519786457841326";

test("credits become records, exact in kuruş, with joined Turkish descriptions", (t) => {
  const { records } = parseMt940(fixture("credits-and-debits.mt940"));
  t.deepEqual(records.slice(0, 2), [
    {
      receivingIban: ACCOUNT,
      amount: 150000,
      currency: "TRY",
      valueDate: "2024-06-15",
      senderName: "ŞÜKRÜ ÖZTÜRK",
      senderIban: "TR290006400000112345678901",
      description: "GELEN EFT ŞÜKRÜ ÖZTÜRK TR29 0006 4000 0011 2345 6789 01 ODEME REF AB-CD 2345 SİPARİŞ ÖDEMESİ",
      bankTransactionId: "2406150000123456",
    },
    {
      receivingIban: ACCOUNT,
      amount: 275050,
      currency: "TRY",
      valueDate: "2024-06-15",
      senderName: "ĞÜLŞEN ÇAĞLAR IŞIK",
      // The 65-character line was cut inside "9876" by the bank: joined with nothing in between.
      description: "GELEN HAVALE ĞÜLŞEN ÇAĞLAR IŞIK KİRA ÖDEMESİ DAİRE 1250 TEMMUZ AYI ŞUBAT FARKI ODEME REF XY-ZT 9876 TEŞEKKÜRLER ıiİI",
      bankTransactionId: "MUSTERIREF01",
    },
  ]);
  const third = records[2]!;
  t.like(third, {
    receivingIban: ACCOUNT,
    amount: 9999,
    currency: "TRY",
    valueDate: "2024-06-15",
    senderName: "İBRAHİM IĞDIRLI",
    description: "FAST GELEN İBRAHİM IĞDIRLI AÇIKLAMA: ODEME REF QW-ER 1234 ıı",
  });
  t.false("senderIban" in third);
  t.regex(third.bankTransactionId, /^MT940-[0-9a-f]{32}$/, "no reference on the line (NONREF, no //): a derived id");
  // Structured ?20/?31/?32/?33 subfields; "12,5" is 12.50 TRY.
  t.deepEqual(records[3], {
    receivingIban: ACCOUNT,
    amount: 1250,
    currency: "TRY",
    valueDate: "2024-06-15",
    senderName: "MEHMET ÖZ DEMİR",
    senderIban: "TR830001200000555500002222",
    description: "ODEME REF ZZ-YY 4321 AİDAT",
    bankTransactionId: "BR00007",
  });
  t.is(records.length, 4);
});

test("debits and reversals are skipped, each with its reason and line", (t) => {
  const { skipped } = parseMt940(fixture("credits-and-debits.mt940"));
  t.deepEqual(
    skipped.map((s) => [s.entry, s.line]),
    [
      ["statement 1 (:20: STMT240615001, :28C: 00042/001), :61: #2", 8],
      ["statement 1 (:20: STMT240615001, :28C: 00042/001), :61: #5", 17],
      ["statement 1 (:20: STMT240615001, :28C: 00042/001), :61: #6", 19],
    ],
  );
  t.regex(skipped[0]!.reason, /^debit/);
  t.regex(skipped[1]!.reason, /^reversal of a debit/);
  t.regex(skipped[2]!.reason, /^reversal of an earlier credit/);
});

test("ids are stable across two parses (string and bytes alike)", (t) => {
  const first = parseMt940(fixture("credits-and-debits.mt940"));
  const second = parseMt940(fixture("credits-and-debits.mt940").toString("utf8"));
  t.deepEqual(second, first);
  t.deepEqual(mt940Adapter.parse(fixture("credits-and-debits.mt940")), first);
  t.is(mt940Adapter.name, "mt940");
});

test("a statement split over two files: each parses alone; together every transaction once", (t) => {
  const part1 = parseMt940(fixture("split-statement-part1.mt940"));
  const part2 = parseMt940(fixture("split-statement-part2.mt940"));
  const key = (r: IncomingTransferRecord) => `${r.receivingIban}|${r.bankTransactionId}`;
  const ids1 = part1.records.map(key);
  const ids2 = part2.records.map(key);
  t.is(ids1.length, 2);
  t.is(ids2.length, 2);
  t.deepEqual(
    ids1.filter((id) => ids2.includes(id)),
    [],
    "disjoint, although both pages open with the same unreferenced 500,00 TRY line",
  );
  const union = [...part1.records, ...part2.records];
  t.deepEqual(
    union.map((r) => [r.amount, r.senderName]),
    [
      [50000, "AYŞE YILMAZ"],
      [30000, "ÇİĞDEM ŞEN"],
      [50000, "AYŞE YILMAZ"],
      [120000, "ÖMER ÇELİK"],
    ],
  );
  t.true(union.every((r) => r.receivingIban === ACCOUNT && r.valueDate === "2024-06-16" && r.currency === "TRY"), ":25: in groups of four is normalised");
  t.is(union[3]!.senderIban, "TR830001200000555500002222");
  t.deepEqual(part2.skipped.map((s) => s.reason.split(" ")[0]), ["debit"]);
  // Re-importing the pages gives the same ids.
  t.deepEqual(parseMt940(fixture("split-statement-part1.mt940")).records.map(key), ids1);
  t.deepEqual(parseMt940(fixture("split-statement-part2.mt940")).records.map(key), ids2);
});

test("a Windows-1254 file with CRLF lines decodes with its Turkish letters", (t) => {
  const bytes = fixture("windows-1254.mt940");
  t.throws(() => new TextDecoder("utf-8", { fatal: true }).decode(bytes), undefined, "the fixture really is not UTF-8");
  const { records, skipped } = parseMt940(bytes);
  t.deepEqual(records, [
    {
      receivingIban: "TR890001000000987654321001",
      amount: 234567,
      currency: "TRY",
      valueDate: "2024-06-17",
      senderName: "ŞEYMA GÜLER IŞIKÇI",
      description: "GELEN EFT ŞEYMA GÜLER IŞIKÇI ODEME REF GH-JK 5678 ğüşiöçı ĞÜŞİÖÇI",
      bankTransactionId: "ZB2406170001",
    },
  ]);
  t.is(skipped.length, 1);
  // The same text as UTF-8 gives the same records.
  t.deepEqual(parseMt940(Buffer.from(decodeStatement(bytes), "utf8")).records, records);
});

test("a file with two statements for two accounts", (t) => {
  const { records, skipped } = parseMt940(fixture("two-accounts.mt940"));
  t.deepEqual(
    records.map((r) => [r.receivingIban, r.currency, r.amount, r.bankTransactionId, r.senderName]),
    [
      ["TR340004600000888800001111", "TRY", 25000, "AKB0001", "ZEYNEP KOÇ"],
      ["TR320006700000123400009999", "EUR", 100001, "YKB0001", "HÜSEYİN ŞAHİN"],
    ],
  );
  t.deepEqual(skipped.map((s) => [s.entry, s.line]), [["statement 2 (:20: GUN240618B, :28C: 00055/001), :61: #2", 17]]);
});

test("a statement of a non-Turkish account is skipped whole; the file's other statements import", (t) => {
  const { records, skipped } = parseMt940(fixture("foreign-account.mt940"));
  t.deepEqual(
    records.map((r) => [r.receivingIban, r.amount, r.bankTransactionId]),
    [["TR340004600000888800001111", 7525, "AKB0002"]],
  );
  t.deepEqual(skipped, [
    {
      entry: "statement 1 (:20: FX240619, :28C: 00001/001)",
      line: 1,
      reason: ':25: "DE89370400440532013000" is not a Turkish IBAN: this account\'s 1 entry was not imported',
    },
  ]);
});

const statement = (lines61: string[], opening = "C240614TRY0,00", closing = "C240615TRY1500,00") =>
  [":20:T1", `:25:${ACCOUNT}`, ":28C:1/1", `:60F:${opening}`, ...lines61, `:62F:${closing}`, "-"].join("\n");

test("malformed MT940 is refused with a clear error, not a crash", (t) => {
  const refused = (input: string, pattern: RegExp) => {
    const err = t.throws(() => parseMt940(input), { instanceOf: BankFeedError });
    t.regex(err!.message, pattern);
  };
  refused("", /empty/);
  refused("hello\nthis is not a statement", /line 1: a statement must start with :20:/);
  refused(":20:T1\n:25:X\n:28C:1\n:60F:C240614TRY0,00\n-", /Mandatory tag 62 is missing/);
  refused(statement([":61:2406150615C1500,00NTRFNONREF"], "C240614TRY0,00", "C240615TRY1000,00"), /Sum of lines/);
  refused(statement([":61:GARBAGE"]), /Cannot parse tag 61/);
  refused(statement([":61:2413150615C1500,00NTRFNONREF"]), /line 5: :61: value date 241315 is not a date/);
  refused(statement([":61:2406150615C1500,001NTRFNONREF"], "C240614TRY0,00", "C240615TRY1500,001"), /amount "1500,001" is not an amount in TRY/);
  refused(":20:T1\n:25:X\n:99Z:what\n", /Unknown tag 99Z/);
});

test("amounts are read from the text, never through a float", (t) => {
  const one = (amount: string) => parseMt940(statement([`:61:2406150615C${amount}NTRFNONREF//R1`], "C240614TRY0,00", `C240615TRY${amount}`)).records[0]!.amount;
  t.is(one("1500,00"), 150000);
  t.is(one("1500,"), 150000);
  t.is(one("0,29"), 29);
  t.is(one("1,1"), 110);
  t.is(one("4503599627,37"), 450359962737);
  t.is(one("1234567,890"), 123456789, "a trailing zero decimal is allowed");
});

test("a customer reference that repeats within a statement is not used as the id", (t) => {
  const input = statement(
    [":61:2406150615C500,00NTRFSAMEREF", ":86:GELEN EFT A", ":61:2406150615C1000,00NTRFSAMEREF", ":86:GELEN EFT B"],
    "C240614TRY0,00",
    "C240615TRY1500,00",
  );
  const ids = parseMt940(input).records.map((r) => r.bankTransactionId);
  t.is(new Set(ids).size, 2);
  t.true(ids.every((id) => id.startsWith("MT940-")));
});

test("joinWrapped: a full-width line continues, a shorter one ends", (t) => {
  const full = "X".repeat(64) + "Y";
  t.deepEqual(joinWrapped([full, "Z rest", "next line"]), [`${full}Z rest`, "next line"]);
  t.deepEqual(joinWrapped(["short", "line"]), ["short", "line"]);
  t.deepEqual(joinWrapped([`${"X".repeat(64)} `, "word"]), ["X".repeat(64), "word"], "a full line ending in a space ended at a word");
});
