import test from "ava";
import { knownTimeZone, STATEMENT_MAX_DAYS, statementPeriod, statementRecord, zoneDayStart } from "../src/index.js";
import { create } from "@bufbuild/protobuf";
import { GetStatementResponseSchema } from "@payments/contracts/payout";

const day = (date: string) => Date.parse(`${date}T00:00:00.000Z`);
const iso = (ms: number) => new Date(ms).toISOString();

test("knownTimeZone: IANA names Intl knows, canonically spelled; offsets, unknown names and junk are not zones", (t) => {
  t.is(knownTimeZone("Europe/Istanbul"), "Europe/Istanbul");
  t.is(knownTimeZone("europe/istanbul"), "Europe/Istanbul");
  t.is(knownTimeZone("Turkey"), "Europe/Istanbul");
  t.is(knownTimeZone("UTC"), "UTC");
  t.is(knownTimeZone("Etc/GMT-3"), "Etc/GMT-3");
  for (const bad of ["", "+03:00", "UTC+3", "Europe/Nowhere", "Mars/Base", "Europe/Istanbul ", "../etc/passwd", "Europe//Istanbul", "A".repeat(65)]) {
    t.is(knownTimeZone(bad), undefined, JSON.stringify(bad));
  }
});

test("zoneDayStart: a day's first instant in the zone, whatever its offset that day", (t) => {
  t.is(iso(zoneDayStart(day("2026-12-01"), "Europe/Istanbul")), "2026-11-30T21:00:00.000Z");
  t.is(iso(zoneDayStart(day("2026-12-01"), "UTC")), "2026-12-01T00:00:00.000Z");
  // Türkiye kept summer time until 2016: +3 in July 2015, +2 in December.
  t.is(iso(zoneDayStart(day("2015-07-01"), "Europe/Istanbul")), "2015-06-30T21:00:00.000Z");
  t.is(iso(zoneDayStart(day("2015-12-01"), "Europe/Istanbul")), "2015-11-30T22:00:00.000Z");
  // The far ends of the world's offsets.
  t.is(iso(zoneDayStart(day("2026-12-01"), "Pacific/Kiritimati")), "2026-11-30T10:00:00.000Z");
  t.is(iso(zoneDayStart(day("2026-12-01"), "Etc/GMT+12")), "2026-12-01T12:00:00.000Z");
  // Clocks back from 01:00 to 00:00 (Havana, 2022-11-06): the day starts at the first midnight.
  t.is(iso(zoneDayStart(day("2022-11-06"), "America/Havana")), "2022-11-06T04:00:00.000Z");
  // Clocks forward from 00:00 to 01:00 (Santiago, 2022-09-11): no midnight; the day starts at 01:00.
  t.is(iso(zoneDayStart(day("2022-09-11"), "America/Santiago")), "2022-09-11T04:00:00.000Z");
});

test("statementPeriod without a zone is whole UTC days, as it always was; with one, the zone's midnights", (t) => {
  t.deepEqual(statementPeriod(day("2026-12-01"), day("2026-12-31")), { startMs: day("2026-12-01"), endMs: day("2027-01-01"), from: "2026-12-01", to: "2026-12-31" });
  t.deepEqual(statementPeriod(day("2026-12-01"), day("2026-12-31"), "Europe/Istanbul"), {
    startMs: Date.parse("2026-11-30T21:00:00.000Z"),
    endMs: Date.parse("2026-12-31T21:00:00.000Z"),
    from: "2026-12-01",
    to: "2026-12-31",
  });
  // The same refusals either way.
  t.deepEqual(statementPeriod(day("2026-12-02"), day("2026-12-01"), "Europe/Istanbul"), { problem: "must not be before from" });
  t.regex((statementPeriod(day("2026-01-01"), day("2027-01-02"), "Europe/Istanbul") as { problem: string }).problem, new RegExp(`at most ${STATEMENT_MAX_DAYS} days`));
});

test("statementPeriod: 366 days over which the clocks only go back are an hour too long for the payout service, and refused as such", (t) => {
  // Berlin, 2023-03-27 .. 2024-03-26: 366 days, the autumn's hour back inside, the spring's hour forward not.
  const period = statementPeriod(day("2023-03-27"), day("2024-03-26"), "Europe/Berlin");
  t.deepEqual(period, { problem: `must be at most ${STATEMENT_MAX_DAYS} × 24 hours after from's start in Europe/Berlin (the clocks go back in this range): end it a day earlier` });
  t.false("problem" in statementPeriod(day("2023-03-27"), day("2024-03-25"), "Europe/Berlin"));
  t.false("problem" in statementPeriod(day("2023-03-27"), day("2024-03-26")), "UTC days never are");
});

test("statementRecord names the zone after `to` only when one was asked for", (t) => {
  const res = create(GetStatementResponseSchema, { currency: "TRY" });
  t.deepEqual(Object.keys(statementRecord(res, "2026-12-01", "2026-12-31")), ["currency", "from", "to", "openingBalance", "closingBalance", "movements"]);
  const zoned = statementRecord(res, "2026-12-01", "2026-12-31", "Europe/Istanbul");
  t.deepEqual(Object.keys(zoned), ["currency", "from", "to", "timeZone", "openingBalance", "closingBalance", "movements"]);
  t.is(zoned.timeZone, "Europe/Istanbul");
});
