/*
 * Calendar days in a time zone, for a statement over a zone's days (GET /v1/statement's
 * `timeZone`): the instant a day starts there, from the zone rules Intl (ICU) carries. No offset
 * is assumed fixed: a zone's offset may change between two days (daylight saving, a law), and a
 * day may start later than midnight where the clocks skip it.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What a time zone parameter may look like: an IANA name (`Europe/Istanbul`, `UTC`, `Etc/GMT-3`), never an offset (`+03:00`). */
export const TIME_ZONE_PATTERN = "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$";
const ZONE_NAME = new RegExp(TIME_ZONE_PATTERN);

/** The longest zone name accepted (the IANA database's longest is 32 characters). */
export const TIME_ZONE_MAX = 64;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * An IANA time zone name as Intl knows it, in its canonical spelling (`europe/istanbul` and
 * the old link `Turkey` are `Europe/Istanbul`), or undefined for a name Intl does not know, an
 * offset, or anything else.
 */
export function knownTimeZone(name: string): string | undefined {
  if (name.length > TIME_ZONE_MAX || !ZONE_NAME.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** The zone's wall clock at `instant`, as the epoch ms that clock time would be in UTC (whole seconds). */
function wallClock(instant: number, timeZone: string): number {
  const parts = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
  for (const { type, value } of formatterOf(timeZone).formatToParts(instant)) if (type in parts) parts[type as keyof typeof parts] = Number(value);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
}

/**
 * The instant the calendar day `dayMs` (that date's 00:00 UTC, epoch ms) starts in `timeZone`
 * (a name knownTimeZone accepted): its midnight there, the first one where the clocks go back
 * over midnight, or where they skip midnight the first instant of the day they show.
 */
export function zoneDayStart(dayMs: number, timeZone: string): number {
  // The offsets in force around that day: midnight is that day's 00:00 less one of them.
  const offsets = new Set([-DAY_MS, 0, DAY_MS].map((shift) => wallClock(dayMs + shift, timeZone) - (dayMs + shift)));
  const midnights = [...offsets].map((offset) => dayMs - offset).filter((instant) => wallClock(instant, timeZone) === dayMs);
  if (midnights.length > 0) return Math.min(...midnights);
  // No instant shows 00:00 (the clocks skip it): the first second whose wall clock is on or after it.
  // Offsets are within −12 h and +14 h, so the day starts within 15 h either side of dayMs.
  let before = dayMs - 15 * HOUR_MS;
  let after = dayMs + 15 * HOUR_MS;
  while (after - before > 1000) {
    const middle = before + Math.floor((after - before) / 2000) * 1000;
    if (wallClock(middle, timeZone) >= dayMs) after = middle;
    else before = middle;
  }
  return after;
}
