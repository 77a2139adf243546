import test from "ava";
import { formatDay, formatMoney, formatTime, majorDecimal, parseMoney, turkeyDay } from "../src/shared/format.js";

test("money reads as Türkiye writes it in Turkish and as English writes it in English, exactly", (t) => {
  t.is(formatMoney(2257450n, "TRY", "tr"), "₺22.574,50");
  t.is(formatMoney(2257450n, "TRY", "en"), "TRY\u00a022,574.50", "a no-break space keeps the code with the number");
  t.is(formatMoney(-5n, "TRY", "tr"), "-₺0,05");
  t.is(formatMoney(0, "TRY", "tr"), "₺0,00");
  t.is(formatMoney(900719925474099312n, "TRY", "tr"), "₺9.007.199.254.740.993,12", "beyond a float's digits, exact");
  t.is(majorDecimal(123456n), "1234.56");
});

test("an amount typed the Turkish way, the plain way or the English way is read exactly", (t) => {
  const cases: Array<[string, "tr" | "en", bigint | undefined]> = [
    ["1.250,75", "tr", 125075n],
    ["1250,75", "tr", 125075n],
    ["1250.75", "tr", 125075n],
    ["1250.75", "en", 125075n],
    ["1,250.75", "en", 125075n],
    ["1,250.75", "tr", 125075n],
    ["₺1.250,75", "tr", 125075n],
    ["1.250,75 TL", "tr", 125075n],
    ["1 250,75", "tr", 125075n],
    ["1.250", "tr", 125000n],
    ["1,250", "en", 125000n],
    ["1.250.000", "en", 125000000n],
    ["1,5", "en", 150n],
    ["0,05", "tr", 5n],
    ["1250", "tr", 125000n],
    ["1.250", "en", undefined],
    ["1,250", "tr", undefined],
    ["1250.755", "tr", undefined],
    ["12.5.5", "tr", undefined],
    ["1.25,50", "tr", undefined],
    ["1,250.75.1", "en", undefined],
    ["-5", "tr", undefined],
    ["abc", "tr", undefined],
    ["", "tr", undefined],
    ["1e5", "tr", undefined],
    ["1234567890123456", "tr", undefined],
  ];
  for (const [text, lang, expected] of cases) t.is(parseMoney(text, lang), expected, `${text} (${lang})`);
});

test("times are Türkiye's, whatever the machine's zone", (t) => {
  const at = new Date("2026-12-07T21:30:00Z");
  t.regex(formatTime(at, "tr"), /8 Ara 2026 00:30:00/);
  t.regex(formatTime(at, "en"), /8 Dec 2026, 00:30:00/);
  t.regex(formatDay(at, "tr"), /8 Ara 2026/);
  t.is(turkeyDay(at), "2026-12-08");
});
