import test, { type ExecutionContext } from "ava";
import { formatDay, formatMajorPlain, formatMoney, formatTime, localeOf, majorDecimal, parseMoney, TIME_ZONE, turkeyDay } from "../src/shared/format.js";

/*
 * The console's money and time rules (shared/format.ts) beyond test/format.test.ts: what an
 * amount typed in either language becomes, how every amount is written back, and which Türkiye
 * day an instant falls on around midnight, month and year ends.
 */

const nbsp = "\u00a0";

test("the locales are Türkiye's for Turkish and British English for English, and the zone is Istanbul's", (t) => {
  t.is(localeOf("tr"), "tr-TR");
  t.is(localeOf("en"), "en-GB");
  t.is(TIME_ZONE, "Europe/Istanbul");
});

test("majorDecimal writes the smallest unit as an exact decimal of the main unit", (t) => {
  t.is(majorDecimal(0n), "0.00");
  t.is(majorDecimal(1n), "0.01");
  t.is(majorDecimal(10n), "0.10");
  t.is(majorDecimal(100n), "1.00");
  t.is(majorDecimal(-1n), "-0.01");
  t.is(majorDecimal(-100n), "-1.00");
  t.is(majorDecimal(-123456n), "-1234.56");
  t.is(majorDecimal(99999999999999999999n), "999999999999999999.99", "beyond a float, digit by digit");
});

test("majorDecimal takes another number of decimals", (t) => {
  t.is(majorDecimal(1n, 3), "0.001");
  t.is(majorDecimal(1234n, 3), "1.234");
  t.is(majorDecimal(5n, 0).startsWith("5."), true, "no decimals still writes the whole part first");
  t.is(majorDecimal(-7n, 1), "-0.7");
});

test("formatMoney takes a bigint, a number or a decimal string of kuruş alike", (t) => {
  t.is(formatMoney(125075n, "TRY", "tr"), "₺1.250,75");
  t.is(formatMoney(125075, "TRY", "tr"), "₺1.250,75");
  t.is(formatMoney("125075", "TRY", "tr"), "₺1.250,75");
});

test("formatMoney writes negatives with a leading minus in both languages", (t) => {
  t.is(formatMoney(-125075n, "TRY", "tr"), "-₺1.250,75");
  t.is(formatMoney(-125075n, "TRY", "en"), `-TRY${nbsp}1,250.75`);
  t.is(formatMoney(-1n, "TRY", "en"), `-TRY${nbsp}0.01`);
});

test("formatMoney groups large amounts every three digits, the page's way", (t) => {
  t.is(formatMoney(100000000n, "TRY", "tr"), "₺1.000.000,00");
  t.is(formatMoney(100000000n, "TRY", "en"), `TRY${nbsp}1,000,000.00`);
  t.is(formatMoney(123456789012345678n, "TRY", "en"), `TRY${nbsp}1,234,567,890,123,456.78`, "exact past 2^53");
});

test("formatMoney keeps always two decimals, even for whole amounts", (t) => {
  t.is(formatMoney(100n, "TRY", "tr"), "₺1,00");
  t.is(formatMoney(100n, "TRY", "en"), `TRY${nbsp}1.00`);
  t.is(formatMoney(5n, "TRY", "en"), `TRY${nbsp}0.05`);
});

test("formatMoney writes other currencies Intl knows with their own sign or code", (t) => {
  t.is(formatMoney(125075n, "USD", "en"), "US$1,250.75");
  t.is(formatMoney(125075n, "EUR", "en"), "€1,250.75");
  t.is(formatMoney(125075n, "EUR", "tr"), "€1.250,75");
  t.is(formatMoney(125075n, "USD", "tr"), "$1.250,75");
});

test("formatMoney with no currency writes Turkish lira", (t) => {
  t.is(formatMoney(125075n, "", "tr"), "₺1.250,75");
  t.is(formatMoney(125075n, "", "en"), `TRY${nbsp}1,250.75`);
});

test("formatMoney with a code Intl refuses writes the number in the page's form and the code as it came", (t) => {
  t.is(formatMoney(125075n, "XYZ1", "tr"), "1.250,75 XYZ1");
  t.is(formatMoney(125075n, "b4d", "en"), "1,250.75 b4d");
  t.is(formatMoney(-5n, "??", "tr"), "-0,05 ??");
});

test("formatMoney reuses its formats: the same call twice gives the same text", (t) => {
  const first = formatMoney(42n, "TRY", "tr");
  t.is(formatMoney(42n, "TRY", "tr"), first);
  t.not(formatMoney(42n, "TRY", "en"), first, "each language has its own cached format");
});

test("formatMajorPlain writes the number without a currency, for form values and CSV", (t) => {
  t.is(formatMajorPlain(125075n, "tr"), "1.250,75");
  t.is(formatMajorPlain(125075n, "en"), "1,250.75");
  t.is(formatMajorPlain(0n, "tr"), "0,00");
  t.is(formatMajorPlain(-5n, "tr"), "-0,05");
  t.is(formatMajorPlain(100000000n, "en"), "1,000,000.00");
});

test("every amount written in a page's language is read back to the same kuruş in that language", (t) => {
  for (const minor of [1n, 5n, 99n, 100n, 125075n, 100000n, 99999999n, 123456789012n]) {
    for (const lang of ["tr", "en"] as const) {
      t.is(parseMoney(formatMoney(minor, "TRY", lang), lang), minor, `${minor} ${lang} with the sign`);
      t.is(parseMoney(formatMajorPlain(minor, lang), lang), minor, `${minor} ${lang} plain`);
    }
  }
});

test("parseMoney reads the currency before or after the number, any case, with or without space", (t) => {
  t.is(parseMoney("₺ 10"), 1000n);
  t.is(parseMoney("TRY 10"), 1000n);
  t.is(parseMoney("try10"), 1000n);
  t.is(parseMoney("10 tl"), 1000n);
  t.is(parseMoney("10TL"), 1000n);
  t.is(parseMoney("10 ₺"), 1000n);
  t.is(parseMoney("10 TRY"), 1000n);
});

test("parseMoney refuses another currency's sign and a currency on both sides more than once", (t) => {
  t.is(parseMoney("$10"), undefined);
  t.is(parseMoney("10 USD"), undefined);
  t.is(parseMoney("€10"), undefined);
  t.is(parseMoney("₺₺10"), undefined);
});

test("parseMoney ignores surrounding whitespace, no-break spaces, narrow no-break spaces and apostrophes between groups", (t) => {
  t.is(parseMoney("  12,50  "), 1250n);
  t.is(parseMoney(`1${nbsp}250,75`), 125075n);
  t.is(parseMoney("1\u202f250,75"), 125075n);
  t.is(parseMoney("1'250.75", "en"), 125075n);
  t.is(parseMoney("\t7\n"), 700n);
});

test("parseMoney refuses signs, exponents, letters and empty text", (t) => {
  for (const text of ["+5", "-0", "5-", "1e2", "0x10", "ten", "   ", "₺", "TL", ",", ".", ",5", ".5", "5..0", "5,,0"]) {
    t.is(parseMoney(text), undefined, JSON.stringify(text));
  }
});

test("parseMoney reads one or two decimals and pads them to kuruş", (t) => {
  t.is(parseMoney("3,5"), 350n);
  t.is(parseMoney("3.5"), 350n);
  t.is(parseMoney("3,05"), 305n);
  t.is(parseMoney("0,01"), 1n);
  t.is(parseMoney("0"), 0n, "zero is read; refusing it is the caller's");
  t.is(parseMoney("0,00"), 0n);
  t.is(parseMoney("007"), 700n, "leading zeros are only digits");
});

test("parseMoney takes a trailing decimal mark as no decimals", (t) => {
  t.is(parseMoney("5,"), 500n);
  t.is(parseMoney("5.", "en"), 500n);
});

test("parseMoney refuses a third decimal unless more digits are asked for", (t) => {
  t.is(parseMoney("1,234", "en"), 123400n, "English: a comma before three digits groups thousands");
  t.is(parseMoney("1,234", "tr"), undefined, "Turkish: a comma is the decimal mark, three decimals are too many");
  t.is(parseMoney("1,234", "tr", 3), 1234n, "with three digits allowed, it is 1.234 exactly");
  t.is(parseMoney("0.5", "tr", 0), undefined, "no decimals allowed");
  t.is(parseMoney("5", "tr", 0), 5n);
});

test("parseMoney with both marks takes the last as the decimal mark and checks the grouping before it", (t) => {
  t.is(parseMoney("12.345.678,90"), 1234567890n);
  t.is(parseMoney("12,345,678.90", "tr"), 1234567890n, "the English way is read on a Turkish page too");
  t.is(parseMoney("1234.567,89"), undefined, "a first group of four digits is no grouping");
  t.is(parseMoney("1.23,45"), undefined, "a group of two digits is no grouping");
  t.is(parseMoney("1.2345,67"), undefined);
  t.is(parseMoney("1,234.5,6"), undefined, "a group mark after the decimal mark");
  t.is(parseMoney("1.234,567"), undefined, "three decimals");
});

test("parseMoney with one kind of mark repeated reads thousands only when every group has three digits", (t) => {
  t.is(parseMoney("1.000.000", "tr"), 100000000n);
  t.is(parseMoney("1.000.000", "en"), 100000000n);
  t.is(parseMoney("1,000,000", "tr"), 100000000n);
  t.is(parseMoney("1,000,000", "en"), 100000000n);
  t.is(parseMoney("1.00.000"), undefined);
  t.is(parseMoney("1.000.00"), undefined);
  t.is(parseMoney("1000.000.000"), undefined);
});

test("parseMoney with one mark once and three digits after it reads it by the page's grouping mark", (t) => {
  t.is(parseMoney("12.345", "tr"), 1234500n, "Türkiye groups with a dot");
  t.is(parseMoney("12,345", "en"), 1234500n, "English groups with a comma");
  t.is(parseMoney("12.345", "en"), undefined, "an English dot is the decimal mark: three decimals");
  t.is(parseMoney("12,345", "tr"), undefined, "a Turkish comma is the decimal mark: three decimals");
  t.is(parseMoney("1234.567", "tr"), undefined, "four digits before the dot is no grouping");
});

test("parseMoney defaults to Turkish reading", (t) => {
  t.is(parseMoney("1.250"), 125000n);
  t.is(parseMoney("1,25"), 125n);
});

test("parseMoney takes at most fifteen whole digits and twenty-four characters", (t) => {
  t.is(parseMoney("999999999999999"), 99999999999999900n);
  t.is(parseMoney("1000000000000000"), undefined, "sixteen digits");
  t.is(parseMoney("999.999.999.999.999,99"), 99999999999999999n, "grouped, under the length");
  t.is(parseMoney("1.000.000.000.000.000,00"), undefined, "sixteen whole digits, grouped");
  t.is(parseMoney(`${"1".repeat(25)}`), undefined);
});

test("formatTime writes the instant in Türkiye's time (UTC+3) with seconds", (t) => {
  const at = new Date("2026-06-15T09:05:07Z");
  t.regex(formatTime(at, "tr"), /^15 Haz 2026 12:05:07$/);
  t.regex(formatTime(at, "en"), /^15 Jun 2026, 12:05:07$/);
});

/** The last instant of a Türkiye day and the first of the next: their days, and the next one's as each language writes it. */
function dayTurns(t: ExecutionContext, last: Date, first: Date, days: [string, string], labels: { tr: string; en: string }): void {
  t.is(turkeyDay(last), days[0]);
  t.is(turkeyDay(first), days[1]);
  t.is(formatDay(first, "tr"), labels.tr);
  t.is(formatDay(first, "en"), labels.en);
}

test("formatDay and turkeyDay move to the next day at Türkiye's midnight, three hours before UTC's", (t) => {
  const before = new Date("2026-03-09T20:59:59.999Z");
  dayTurns(t, before, new Date("2026-03-09T21:00:00Z"), ["2026-03-09", "2026-03-10"], { tr: "10 Mar 2026", en: "10 Mar 2026" });
  t.is(formatDay(before, "tr"), "9 Mar 2026");
});

test("the year turns in Türkiye at 21:00 UTC on the 31st of December", (t) => {
  const newYear = new Date("2026-12-31T21:00:00Z");
  dayTurns(t, new Date("2026-12-31T20:59:59Z"), newYear, ["2026-12-31", "2027-01-01"], { tr: "1 Oca 2027", en: "1 Jan 2027" });
  t.regex(formatTime(newYear, "tr"), /^1 Oca 2027 00:00:00$/);
});

test("month ends and a leap day fall on Türkiye's date, not UTC's", (t) => {
  t.is(turkeyDay(new Date("2028-02-28T21:00:00Z")), "2028-02-29", "2028 is a leap year");
  t.is(turkeyDay(new Date("2027-02-28T21:00:00Z")), "2027-03-01");
  t.is(turkeyDay(new Date("2026-04-30T22:00:00Z")), "2026-05-01");
  t.is(turkeyDay(new Date("2026-04-30T20:00:00Z")), "2026-04-30");
});

test("Türkiye keeps UTC+3 all year: no daylight-saving shift in summer or winter", (t) => {
  t.regex(formatTime(new Date("2026-01-15T12:00:00Z"), "en"), /15:00:00$/);
  t.regex(formatTime(new Date("2026-07-15T12:00:00Z"), "en"), /15:00:00$/);
  t.regex(formatTime(new Date("2026-03-29T00:30:00Z"), "en"), /03:30:00$/, "Europe's spring change is not Türkiye's");
  t.regex(formatTime(new Date("2026-10-25T00:30:00Z"), "en"), /03:30:00$/, "nor its autumn one");
});

test("every Turkish month has its Turkish short name in formatDay", (t) => {
  const names = ["Oca", "Şub", "Mar", "Nis", "May", "Haz", "Tem", "Ağu", "Eyl", "Eki", "Kas", "Ara"];
  names.forEach((name, month) => {
    const at = new Date(Date.UTC(2026, month, 10, 9));
    t.is(formatDay(at, "tr"), `10 ${name} 2026`);
  });
});
