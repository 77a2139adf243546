import { readFileSync } from "node:fs";
import test from "ava";
import fc from "fast-check";
import { BankFeedError, decodeStatement, derivedTransactionId, joinWrapped, mt940Adapter, parseMt940, senderOf, type IncomingTransferRecord } from "../src/bank-feed/index.js";

/** A fixture file as written, with its "#" header of sources (which MT940 itself does not allow). */
const rawFixture = (name: string) => readFileSync(new URL(`./fixtures/mt940/${name}`, import.meta.url));

/** A fixture's statement: the file without its leading "#" lines. Line numbers in results count from there. */
const fixture = (name: string) => {
  let bytes = rawFixture(name);
  while (bytes[0] === 0x23 /* # */ && bytes.includes(0x0a)) bytes = bytes.subarray(bytes.indexOf(0x0a) + 1);
  return bytes;
};

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
      // No bank reference: the customer reference MUSTERIREF01 counts in the derived id, it is not the id.
      bankTransactionId: derivedTransactionId({
        statementReference: "STMT240615001",
        receivingIban: ACCOUNT,
        statementNumber: "00042/001",
        valueDate: "2024-06-15",
        amount: 275050,
        currency: "TRY",
        index: 2,
        customerReference: "MUSTERIREF01",
      }),
      // The id the rule before issue 18 gave it (unique in its statement): an import from then is still recognised.
      formerIds: ["MUSTERIREF01"],
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

test("a statement of a non-Turkish account is listed in statements without receivingIban, and yields no records nor skipped entries", (t) => {
  const { records, skipped, statements } = parseMt940(fixture("foreign-account.mt940"));
  t.deepEqual(
    records.map((r) => [r.receivingIban, r.amount, r.bankTransactionId]),
    [["TR340004600000888800001111", 7525, "AKB0002"]],
  );
  t.deepEqual(skipped, [], "the importer refuses the file for the foreign account; its lines are not skipped entries");
  t.deepEqual(statements, [
    { label: "statement 1 (:20: FX240619, :28C: 00001/001)", account: "DE89370400440532013000", line: 1 },
    { label: "statement 2 (:20: TR240619, :28C: 00102/001)", account: "TR340004600000888800001111", line: 9, receivingIban: "TR340004600000888800001111" },
  ]);
});

const statement = (lines61: string[], opening = "C240614TRY0,00", closing = "C240615TRY1500,00") =>
  [":20:T1", `:25:${ACCOUNT}`, ":28C:1/1", `:60F:${opening}`, ...lines61, `:62F:${closing}`, "-"].join("\n");

test("malformed MT940 is refused with a clear error, not a crash", (t) => {
  const refused = (input: string, pattern: RegExp) => {
    const err = t.throws(() => parseMt940(input), { instanceOf: BankFeedError });
    t.regex(err.message, pattern);
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

// ---------------------------------------------------------------------------------------------
// Fixtures modelled on Turkish banks (sources and assumptions in each file's "#" header).

const ZIRAAT = "TR130001000225700012345001";
const HALKBANK = "TR070001200099900045678001";
const GARANTI = "TR060006200070300006291234";
const VAKIFBANK = "TR500001501580007298765401";

test("a fixture's # header is not MT940: the parser refuses it, so fixtures are read without it", (t) => {
  const err = t.throws(() => parseMt940(rawFixture("ziraat.mt940")), { instanceOf: BankFeedError });
  t.regex(err.message, /line 1: a statement must start with :20:/);
});

test("Ziraat: senders from 'Gönd:' and 'Gönderen :' fields ending at 'Açıklama :' or 'Alıcı:'; '00000000' customer references give derived ids", (t) => {
  const { records, skipped } = parseMt940(fixture("ziraat.mt940"));
  const derived = (index: number, amount: number) =>
    derivedTransactionId({ statementReference: "ZRT241105", receivingIban: ZIRAAT, statementNumber: "00310/001", valueDate: "2024-11-05", amount, currency: "TRY", index, customerReference: "00000000" });
  t.deepEqual(records, [
    {
      receivingIban: ZIRAAT,
      amount: 125000,
      currency: "TRY",
      valueDate: "2024-11-05",
      senderName: "AYŞE YILMAZ",
      description: "Gönd: AYŞE YILMAZ Açıklama : ODEME REF KL-MN 4821",
      bankTransactionId: derived(0, 125000),
    },
    {
      receivingIban: ZIRAAT,
      amount: 300000,
      currency: "TRY",
      valueDate: "2024-11-05",
      senderName: "ÇAĞLA ŞENGÜL",
      description: "Gönderen : ÇAĞLA ŞENGÜL Alıcı: ÖRNEK ÖDEME HİZMETLERİ A.Ş. Açıklama : SİPARİŞ QW-ER 7315",
      bankTransactionId: "2257HOHI24000117",
    },
    {
      receivingIban: ZIRAAT,
      amount: 8990,
      currency: "TRY",
      valueDate: "2024-11-05",
      senderName: "İSMAİL IŞIK",
      senderIban: "TR020004600012880000345678",
      description: "Gönd: İSMAİL IŞIK TR02 0004 6000 1288 0000 3456 78 Açıklama : ZX-CV 5610",
      bankTransactionId: derived(3, 8990),
    },
  ]);
  t.deepEqual(skipped, [{ entry: "statement 1 (:20: ZRT241105, :28C: 00310/001), :61: #3", line: 10, reason: "debit (money out of the account): only credits are imported" }]);
});

test("Halkbank: senders on labelled lines after the first (AD SOYAD:, ÜNVAN:), IBAN from 'IBAN:', never İŞLEM YAPAN; a line opening with AÇIKLAMA: names no one", (t) => {
  const { records, skipped } = parseMt940(fixture("halkbank.mt940"));
  t.deepEqual(records, [
    {
      receivingIban: HALKBANK,
      amount: 425000,
      currency: "TRY",
      valueDate: "2024-11-06",
      senderName: "MEHMET ALİ KAYA",
      senderIban: "TR920006400000112233445566",
      description: "GELEN EFT AD SOYAD: MEHMET ALİ KAYA IBAN: TR92 0006 4000 0011 2233 4455 66 AÇIKLAMA: ODEME REF PR-ST 2288",
      bankTransactionId: "HB24110600001",
    },
    {
      receivingIban: HALKBANK,
      amount: 1500000,
      currency: "TRY",
      valueDate: "2024-11-06",
      senderName: "KARDELEN GIDA SAN. VE TİC. LTD. ŞTİ.",
      senderIban: "TR480011100000000098765432",
      description:
        "GELEN HAVALE ÜNVAN: KARDELEN GIDA SAN. VE TİC. LTD. ŞTİ. VKN: 5230012345 IBAN: TR48 0011 1000 0000 0098 7654 32 İŞLEM YAPAN: OSMAN TÜRKOĞLU AÇIKLAMA: FATURA GH-JK 9081",
      bankTransactionId: "HB24110600002",
    },
    {
      receivingIban: HALKBANK,
      amount: 72550,
      currency: "TRY",
      valueDate: "2024-11-06",
      senderName: "",
      description: "AÇIKLAMA: ODEME REF TY-UI 3310",
      bankTransactionId: "HB24110600003",
    },
  ]);
  t.deepEqual(skipped, [{ entry: "statement 1 (:20: HB20241106, :28C: 00120/001), :61: #4", line: 18, reason: "debit (money out of the account): only credits are imported" }]);
});

test("Garanti BBVA: senders in the :61: supplementary details and between '/'-separated labels, IBAN from 'GÖNDEREN IBAN:', a 65-character line joined, SWIFT envelope", (t) => {
  const { records, skipped, statements } = parseMt940(fixture("garanti.mt940"));
  t.deepEqual(records, [
    {
      receivingIban: GARANTI,
      amount: 240000,
      currency: "TRY",
      valueDate: "2024-11-07",
      senderName: "ZEYNEP ÖZTÜRK",
      description: "GELEN FAST ODEME REF BN-MK 6240",
      bankTransactionId: "7031124000881234",
    },
    {
      receivingIban: GARANTI,
      amount: 97500,
      currency: "TRY",
      valueDate: "2024-11-07",
      senderName: "AYŞE YILMAZ",
      senderIban: "TR210006700100000012345678",
      description: "GELEN EFT / GÖNDEREN: AYŞE YILMAZ / AÇIKLAMA: REF XC-VB 1190 GÖNDEREN IBAN: TR21 0006 7001 0000 0012 3456 78",
      bankTransactionId: "7031124000881235",
    },
    {
      receivingIban: GARANTI,
      amount: 560000,
      currency: "TRY",
      valueDate: "2024-11-07",
      senderName: "HÜSEYİN ÇELİKKAYA",
      description: "GELEN HAVALE SİPARİŞ 882310 ODEME REF MN-BV 7702 KALAN TUTAR AY SONUNDA",
      bankTransactionId: derivedTransactionId({
        statementReference: "GRN241107",
        receivingIban: GARANTI,
        statementNumber: "00045/001",
        valueDate: "2024-11-07",
        amount: 560000,
        currency: "TRY",
        index: 2,
        customerReference: "FT2411070042",
      }),
      formerIds: ["FT2411070042"],
    },
  ]);
  t.deepEqual(skipped, [{ entry: "statement 1 (:20: GRN241107, :28C: 00045/001), :61: #4", line: 16, reason: "debit (money out of the account): only credits are imported" }]);
  t.is(statements[0]!.line, 2, "the {1:}{2:}{4: envelope line comes first");
});

test("VakıfBank: colon-less fields ('GONDEREN AD …', 'GONDEREN HESAP …'); ALICI AD and ALICI HESAP never give the sender; CRLF, no '-'", (t) => {
  const { records, skipped } = parseMt940(fixture("vakifbank.mt940"));
  t.deepEqual(records, [
    {
      receivingIban: VAKIFBANK,
      amount: 675000,
      currency: "TRY",
      valueDate: "2024-11-08",
      senderName: "KARDELEN GIDA SAN. VE TİC. LTD. ŞTİ.",
      description: "GONDEREN AD KARDELEN GIDA SAN. VE TİC. LTD. ŞTİ. GONDEREN ŞUBE KONAK/İZMİR ALICI AD ÖRNEK ÖDEME HİZMETLERİ A.Ş. İŞLEM AÇIKLAMASI FATURA LK-JH 5521",
      bankTransactionId: "2024VKF081100001",
    },
    {
      receivingIban: VAKIFBANK,
      amount: 199999,
      currency: "TRY",
      valueDate: "2024-11-08",
      senderName: "",
      description: "ALICI AD ÖRNEK ÖDEME HİZMETLERİ A.Ş. ALICI HESAP TR50 0001 5015 8000 7298 7654 01 İŞLEM AÇIKLAMASI ODEME REF DF-GH 0642",
      bankTransactionId: "2024VKF081100002",
    },
    {
      receivingIban: VAKIFBANK,
      amount: 31000,
      currency: "TRY",
      valueDate: "2024-11-08",
      senderName: "ŞÜKRÜ GÜNDOĞDU",
      senderIban: "TR900001000148800054321009",
      description: "GONDEREN AD ŞÜKRÜ GÜNDOĞDU GONDEREN HESAP TR90 0001 0001 4880 0054 3210 09 İŞLEM AÇIKLAMASI ODEME REF RT-YU 7710",
      bankTransactionId: "2024VKF081100003",
    },
  ]);
  t.deepEqual(skipped, [{ entry: "statement 1 (:20: VKF20241108, :28C: 00077/001), :61: #4", line: 20, reason: "debit (money out of the account): only credits are imported" }]);
});

test("each bank's fixture parses to the same result twice (a re-import gives the same ids)", (t) => {
  for (const name of ["ziraat.mt940", "halkbank.mt940", "garanti.mt940", "vakifbank.mt940"]) {
    t.deepEqual(parseMt940(fixture(name)), parseMt940(fixture(name)), name);
  }
});

// ---------------------------------------------------------------------------------------------
// Sender names and IBANs.

const SENDER_IBAN = "TR920006400000112233445566";
const SENDER_IBAN_PRINTED = "TR92 0006 4000 0011 2233 4455 66";
const OTHER_IBAN = "TR020004600012880000345678";
const nameOf = (details: string, supplementary = "") => senderOf(details, undefined, ACCOUNT, supplementary).name;
const ibanOf = (details: string, supplementary = "") => senderOf(details, undefined, ACCOUNT, supplementary).iban;

test("a sender on a labelled :86: line that is not the first: GÖNDEREN, GÖNDEREN ADI, AD SOYAD, ÜNVAN, in ASCII, any case and either I", (t) => {
  const cases: Array<[string, string]> = [
    ["GELEN EFT\nGÖNDEREN: AYŞE YILMAZ\nAÇIKLAMA: ODEME REF AB-12 3456", "AYŞE YILMAZ"],
    ["GELEN EFT\nGONDEREN: AYSE YILMAZ", "AYSE YILMAZ"],
    ["GELEN EFT\ngönderen : Ayşe Yılmaz", "Ayşe Yılmaz"],
    ["FAST\nGÖNDEREN ADI: İPEK IŞIL", "İPEK IŞIL"],
    ["FAST\nGONDEREN ADI: IPEK ISIL", "IPEK ISIL"],
    ["FAST\nGÖNDEREN ADİ: İPEK IŞIL", "İPEK IŞIL"],
    ["FAST\nGönderen Adı: İpek Işıl", "İpek Işıl"],
    ["HAVALE\nAD SOYAD: MEHMET ÖZ", "MEHMET ÖZ"],
    ["HAVALE\nADI SOYADI: MEHMET ÖZ", "MEHMET ÖZ"],
    ["HAVALE\nÜNVAN: ABC TEKSTİL SAN. VE TİC. A.Ş.", "ABC TEKSTİL SAN. VE TİC. A.Ş."],
    ["HAVALE\nUNVAN: ABC TEKSTIL A.S.", "ABC TEKSTIL A.S."],
    ["HAVALE\nünvanı: Abc Tekstil", "Abc Tekstil"],
  ];
  for (const [details, name] of cases) t.is(nameOf(details), name, details);
});

test("a sender between labels on one line: 'GELEN EFT / GÖNDEREN: AYŞE YILMAZ / AÇIKLAMA: …' gives AYŞE YILMAZ", (t) => {
  t.is(nameOf("GELEN EFT / GÖNDEREN: AYŞE YILMAZ / AÇIKLAMA: ODEME REF AB-12 3456"), "AYŞE YILMAZ");
  t.is(nameOf("GELEN EFT/GÖNDEREN:AYŞE YILMAZ/AÇIKLAMA:ODEME REF AB-12 3456"), "AYŞE YILMAZ");
  t.is(nameOf("GELEN EFT | GÖNDEREN ADI: AYŞE YILMAZ | REF: AB-12 3456"), "AYŞE YILMAZ");
});

test("a name never carries another label's content, with or without a colon", (t) => {
  const labels = ["AÇIKLAMA", "ACIKLAMA", "Açıklama ", "IBAN", "REF", "REFERANS NO", "TUTAR", "TARİH", "TARIH", "ALICI", "ALİCİ", "ALICI ADI", "SORGU NO", "VKN", "MESAJ", "KANAL"];
  for (const label of labels) {
    t.is(nameOf(`GELEN EFT GÖNDEREN: AYŞE YILMAZ ${label}: 12 X`), "AYŞE YILMAZ", label);
    t.is(nameOf(`GELEN EFT AYŞE YILMAZ ${label}: 12 X`), "AYŞE YILMAZ", `${label}, first line`);
  }
  for (const word of ["AÇIKLAMA", "IBAN", "REF", "TUTAR", "TARİH", "ALICI"]) {
    t.is(nameOf(`GELEN EFT AYŞE YILMAZ ${word} AB-12 3456`), "AYŞE YILMAZ", `${word} without a colon`);
  }
  t.is(nameOf(`GELEN EFT GÖNDEREN: AYŞE YILMAZ ${SENDER_IBAN_PRINTED} ODEME REF AB-12`), "AYŞE YILMAZ", "an IBAN ends the name too");
});

test("a label naming the receiver (ALICI …) is never the sender; nothing naming the sender gives ''", (t) => {
  t.is(nameOf("ALICI: BİZİM ÖDEME A.Ş.\nAÇIKLAMA: ODEME REF AB-12"), "");
  t.is(nameOf("GELEN EFT ALICI ÜNVAN: BİZİM ÖDEME A.Ş. / GÖNDEREN: AYŞE YILMAZ"), "AYŞE YILMAZ");
  t.is(nameOf("ALICI ADI: BİZİM ÖDEME A.Ş. GÖNDEREN ADI: AYŞE YILMAZ"), "AYŞE YILMAZ");
  t.is(nameOf("AÇIKLAMA: ODEME REF AB-12 3456"), "", "a description that is label and text is no name");
  t.is(nameOf("GELEN EFT\nTUTAR: 1.500,00 TL"), "");
  t.is(nameOf("REF: 12345"), "");
  t.is(nameOf("ODEME REF AB-12", "ALICI: BİZİM ÖDEME A.Ş."), "", "nor in the supplementary details");
});

test("a sender in the :61: supplementary details (the line after :61:), taken whole, when :86: names no one", (t) => {
  const lines = [
    ":61:2406150615C100,00NTRFNONREF//S1",
    "ZEYNEP KAYA",
    ":86:GELEN FAST ODEME REF AB-12 3456",
    ":61:2406150615C200,00NTRFNONREF//S2",
    "KARDELEN GIDA SANAYİ VE TİCARET LİMİTED ŞİRKETİ",
    ":86:HAVALE REF CD-34 5678",
    ":61:2406150615C300,00NTRFNONREF//S3",
    "/OCMT/TRY300,00",
    ":86:GELEN EFT AYŞE YILMAZ",
    ":61:2406150615C400,00NTRFNONREF//S4",
    "MEHMET ÖZ",
  ];
  const { records } = parseMt940(statement(lines, "C240614TRY0,00", "C240615TRY1000,00"));
  t.deepEqual(
    records.map((r) => [r.senderName, r.description]),
    [
      ["ZEYNEP KAYA", "GELEN FAST ODEME REF AB-12 3456"],
      ["KARDELEN GIDA SANAYİ VE TİCARET LİMİTED ŞİRKETİ", "HAVALE REF CD-34 5678"],
      ["AYŞE YILMAZ", "GELEN EFT AYŞE YILMAZ"],
      ["MEHMET ÖZ", "MEHMET ÖZ"],
    ],
  );
  t.is(nameOf("GELEN EFT\nGÖNDEREN: AYŞE YILMAZ", "ZEYNEP KAYA"), "AYŞE YILMAZ", "a sender field of :86: comes first");
});

test("the sender IBAN from GÖNDEREN IBAN: or IBAN:, never the receiving account's, never one under an ALICI label", (t) => {
  t.is(ibanOf(`ALICI IBAN: ${ACCOUNT} GÖNDEREN IBAN: ${SENDER_IBAN_PRINTED}`), SENDER_IBAN);
  t.is(ibanOf(`GELEN EFT\nIBAN: ${SENDER_IBAN}`), SENDER_IBAN);
  t.is(ibanOf(`GELEN EFT AYŞE YILMAZ ${ACCOUNT}\nGÖNDEREN IBAN: ${SENDER_IBAN_PRINTED}`), SENDER_IBAN, "the labelled one, not the first one");
  t.is(ibanOf(`ALICI HESAP: ${OTHER_IBAN}\nAÇIKLAMA: REF 1`), undefined, "a receiver's IBAN is not the sender's");
  t.is(ibanOf(`GELEN EFT ${ACCOUNT}`), undefined);
  t.is(ibanOf(`GELEN EFT AYŞE YILMAZ ${SENDER_IBAN_PRINTED}`), SENDER_IBAN, "the heuristic: the first IBAN that is not ours");
  t.is(ibanOf("GELEN EFT AYŞE YILMAZ", `AYŞE YILMAZ ${SENDER_IBAN}`), SENDER_IBAN, "from the supplementary details");
});

test("structured :86: layouts keep their subfields: ?32/?33 and ?31, /NAME/ and /IBAN/", (t) => {
  const slashes = senderOf(`/NAME/AYŞE YILMAZ/REMI/ODEME REF AB-12/IBAN/${SENDER_IBAN}`, { NAME: "AYŞE YILMAZ", REMI: "ODEME REF AB-12", IBAN: SENDER_IBAN }, ACCOUNT);
  t.like(slashes, { name: "AYŞE YILMAZ", iban: SENDER_IBAN });
  const { records } = parseMt940(fixture("credits-and-debits.mt940"));
  t.like(records[3], { senderName: "MEHMET ÖZ DEMİR", senderIban: "TR830001200000555500002222", description: "ODEME REF ZZ-YY 4321 AİDAT" });
});

// ---------------------------------------------------------------------------------------------
// Ids without a bank reference.

/** One statement with one unreferenced credit of 500,00 TRY carrying customer reference INV2024-118. */
const oneCredit = (reference: string, number: string, day: string) =>
  [`:20:${reference}`, `:25:${ACCOUNT}`, `:28C:${number}`, `:60F:C2406${day}TRY0,00`, `:61:2406${day}06${day}C500,00NTRFINV2024-118`, ":86:GELEN EFT AYŞE YILMAZ", `:62F:C2406${day}TRY500,00`, "-"].join("\n");

test("the same customer reference on two days' statements, without a bank reference, gives two ids", (t) => {
  const monday = parseMt940(oneCredit("STMT240617", "00044/001", "17")).records[0]!.bankTransactionId;
  const tuesday = parseMt940(oneCredit("STMT240618", "00045/001", "18")).records[0]!.bankTransactionId;
  t.not(monday, tuesday);
  t.regex(monday, /^MT940-[0-9a-f]{32}$/);
  t.regex(tuesday, /^MT940-[0-9a-f]{32}$/);
});

test("the two halves of a split statement (another :28C:) never collide, even with the same line at the same place", (t) => {
  const first = parseMt940(oneCredit("STMT240617", "00044/001", "17")).records[0]!.bankTransactionId;
  const second = parseMt940(oneCredit("STMT240617", "00044/002", "17")).records[0]!.bankTransactionId;
  t.not(first, second);
  t.is(parseMt940(oneCredit("STMT240617", "00044/001", "17")).records[0]!.bankTransactionId, first, "the very same line of the very same statement: the same id");
});

test("a line with neither bank nor customer reference keeps the id it had before customer references counted", (t) => {
  // The value the adapter gave this line before the change, so transfers already recorded are recognised on re-import.
  t.is(parseMt940(fixture("credits-and-debits.mt940")).records[2]!.bankTransactionId, "MT940-de69ef7b26c20ab82e9cc8a08731d9cd");
});

// ---------------------------------------------------------------------------------------------
// Completeness (for the drop directory).

const completeness = (input: string | Uint8Array) => mt940Adapter.completeness!(typeof input === "string" ? new TextEncoder().encode(input) : input);
const incomplete = (t: { like: (value: unknown, selector: object, message?: string) => void; regex: (value: string, pattern: RegExp, message?: string) => void }, input: string, pattern: RegExp) => {
  const result = completeness(input);
  t.like(result, { complete: false }, input.slice(-40));
  t.regex(result.complete ? "" : result.reason, pattern, input.slice(-40));
};
const closed = [":20:T1", `:25:${ACCOUNT}`, ":28C:1/1", ":60F:C240614TRY0,00", ":61:2406150615C1500,00NTRFNONREF//R1", ":86:GELEN EFT AYŞE YILMAZ", ":62F:C240615TRY1500,00"];

test("completeness: every fixture is complete, with CRLF, trailing blank lines, :64:/:86: after the balance, or a {5:} trailer", (t) => {
  for (const name of ["credits-and-debits.mt940", "foreign-account.mt940", "split-statement-part1.mt940", "split-statement-part2.mt940", "two-accounts.mt940", "windows-1254.mt940", "ziraat.mt940", "halkbank.mt940", "garanti.mt940", "vakifbank.mt940"]) {
    t.deepEqual(completeness(fixture(name)), { complete: true }, name);
  }
  t.deepEqual(completeness([...closed, "-", "", "", ""].join("\r\n")), { complete: true });
  t.deepEqual(completeness([...closed, ":64:C240615TRY1500,00", ":65:C240616TRY1500,00", ":86:GÜN SONU", "-"].join("\n")), { complete: true });
  t.deepEqual(completeness([...closed, "-", "{5:{CHK:123456789ABC}}", ""].join("\n")), { complete: true });
  t.deepEqual(completeness([...closed, "-}{5:{MAC:00000000}{CHK:123456789ABC}}"].join("\n")), { complete: true });
  t.is(typeof mt940Adapter.completeness, "function");
});

/** The cut must be taken for incomplete; a reason in words comes with it. */
const assertIncomplete = (t: { fail: (message: string) => void }, name: string, bytes: Uint8Array, cut: number) => {
  const result = completeness(bytes.subarray(0, cut));
  if (result.complete) t.fail(`${name} cut after ${cut} of ${bytes.length} bytes was taken for complete`);
  else if (result.reason.length < 10) t.fail(`${name} cut after ${cut} bytes: no reason in words`);
};

test("completeness: a one-statement file cut anywhere before its closing balance is whole is incomplete, with a reason", (t) => {
  // Up to the decimal comma of the last :62F:/:62M:; after it, a file with no "-" yet reads as a
  // bank's that never writes one (see the no-"-" rule).
  for (const name of ["credits-and-debits.mt940", "split-statement-part1.mt940", "split-statement-part2.mt940", "windows-1254.mt940", "ziraat.mt940", "halkbank.mt940", "vakifbank.mt940"]) {
    const bytes = fixture(name);
    const comma = bytes.indexOf(",", Math.max(bytes.lastIndexOf(":62F:"), bytes.lastIndexOf(":62M:")));
    for (let cut = 0; cut <= comma; cut++) assertIncomplete(t, name, bytes, cut);
  }
  t.pass();
});

test("completeness: in a SWIFT envelope, or after statements that end with '-', every cut before the final '-' is incomplete", (t) => {
  const garanti = fixture("garanti.mt940");
  const blockEnd = garanti.indexOf("-}") + 2;
  for (let cut = 0; cut <= garanti.lastIndexOf(0x7d /* } */); cut++) {
    // "-}" alone is a whole end (the {5:} trailer is optional); "-}{5:{CHK:9F…" is a trailer cut short.
    if (cut !== blockEnd) assertIncomplete(t, "garanti.mt940", garanti, cut);
  }
  t.deepEqual(completeness(garanti.subarray(0, blockEnd)), { complete: true });
  const two = fixture("two-accounts.mt940");
  const second = two.indexOf(":20:GUN240618B");
  for (let cut = second + 1; cut <= two.lastIndexOf(0x2d /* - */); cut++) assertIncomplete(t, "two-accounts.mt940", two, cut);
  // The documented limit: cut exactly after the first statement's "-", the file is a whole one-statement file.
  t.deepEqual(completeness(two.subarray(0, second)), { complete: true });
  t.pass();
});

test("completeness: a statement cut in its closing balance, or before it, is incomplete", (t) => {
  incomplete(t, [...closed.slice(0, -1), ":62F:C2406"].join("\n"), /cut inside its closing balance at line 7/);
  incomplete(t, [...closed.slice(0, -1), ":62F:C240615TRY1500"].join("\n"), /cut inside its closing balance/);
  incomplete(t, [...closed.slice(0, -1), ":62"].join("\n"), /is cut: it ends in its :86: at line 6/);
  incomplete(t, closed.slice(0, 5).join("\n"), /is cut: it ends in its :61: at line 5, with no closing balance/);
  incomplete(t, [...closed, ":61:2406150615C1,00NTRFNONREF//R2"].join("\n"), /is cut: it ends in its :61: at line 8/);
});

test("completeness: a last statement with its closing balance but no '-' is incomplete when the file's earlier statements end with '-'", (t) => {
  const two = [...closed, "-", ":20:T2", `:25:${ACCOUNT}`, ":28C:2/1", ":60F:C240615TRY1500,00", ":61:2406160616C1,00NTRFNONREF//R3", ":62F:C240616TRY1501,00"].join("\n");
  incomplete(t, two, /statement 2 \(:20: T2, line 9\) has its closing balance \(line 14\) but not yet the "-" that ends it/);
  t.deepEqual(completeness(`${two}\n-\n`), { complete: true });
});

test("completeness without '-' anywhere (a bank that never writes it): a whole closing balance at the end is the end", (t) => {
  t.deepEqual(completeness(closed.join("\n")), { complete: true });
  t.deepEqual(completeness([...closed, ":64:C240615TRY1500,00", ""].join("\r\n")), { complete: true });
  incomplete(t, [...closed, ":64:C2406"].join("\n"), /cut inside its :64: balance/);
  incomplete(t, [...closed, ":86:GÜN SONU BAKİYE"].join("\n"), /ends in :86: text at line 8 after its closing balance, with no "-"/);
  incomplete(t, [...closed.slice(0, -1), ":62F:C241315TRY1500,00"].join("\n"), /cut inside its closing balance/);
  const bytes = fixture("vakifbank.mt940");
  const comma = bytes.indexOf(",", bytes.indexOf(":62F:"));
  for (let cut = 0; cut < comma; cut++) t.false(completeness(bytes.subarray(0, cut)).complete, `vakifbank.mt940 cut after ${cut} bytes`);
});

test("completeness: a SWIFT envelope ends with '-}', and its {5:} trailer must be closed", (t) => {
  const envelope = ["{1:F01TGBATRISAXXX0000000000}{2:O9401800240615TGBATRISAXXX00000000002406151800N}{4:", ...closed];
  incomplete(t, [...envelope, "-"].join("\n"), /SWIFT text block \{4: that is not closed yet/);
  incomplete(t, envelope.join("\n"), /SWIFT text block \{4: that is not closed yet: no "-}" after it/);
  t.deepEqual(completeness([...envelope, "-}"].join("\n")), { complete: true });
  incomplete(t, [...envelope, "-}{5:{CHK:12345"].join("\n"), /trailer block at line 9 is not closed yet/);
  incomplete(t, [...closed, "-", "{5:{CHK:12"].join("\n"), /trailer block at line 9 is not closed yet/);
  incomplete(t, [...envelope, "-}{5:{CHK:123456789ABC}}", "{1:F01TGBATRISAXXX0000000000}{2:O94018"].join("\n"), /goes on at line 10 \("\{1:F01TGBATRIS.*with no :20: yet/);
});

test("completeness: an empty file or a bare header may still grow; text that is not MT940 is complete (parse refuses it)", (t) => {
  incomplete(t, "", /empty/);
  incomplete(t, "\r\n\r\n", /empty/);
  incomplete(t, "{1:F01AKBKTRISAXXX0000", /no statement yet/);
  incomplete(t, ":2", /no statement yet/);
  t.deepEqual(completeness("hello\nthis is not a statement"), { complete: true });
  t.throws(() => parseMt940("hello\nthis is not a statement"), { instanceOf: BankFeedError });
});

test("completeness: once '-' is written the message is finished, even without a closing balance (parse refuses it)", (t) => {
  const broken = [...closed.slice(0, -1), "-"].join("\n");
  t.deepEqual(completeness(broken), { complete: true });
  t.throws(() => parseMt940(broken), { instanceOf: BankFeedError, message: /Mandatory tag 62 is missing/ });
});

test("completeness never throws, whatever the bytes", (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 200 }), (bytes, text) => {
      const a = completeness(bytes);
      const b = completeness([...closed.slice(0, 3), text].join("\n"));
      return typeof a.complete === "boolean" && typeof b.complete === "boolean";
    }),
  );
  t.pass();
});
