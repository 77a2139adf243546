import type { Knex } from "knex";
import { z } from "zod";
import { validationError } from "./errors.js";
import { identifier, optionalTimestamp } from "./request.js";

/** Türkiye's time: the default day of the dashboards' summaries. */
export const DEFAULT_SUMMARY_TIME_ZONE = "Europe/Istanbul";
/** The longest range a summary counts: a quarter. */
export const MAX_SUMMARY_DAYS = 92;

const DAY_MS = 86_400_000;

/** The time zone's formatter (cached: building one costs far more than using it), or undefined for a name Intl does not know. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(timeZone: string): Intl.DateTimeFormat | undefined {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    } catch {
      return undefined;
    }
    if (formatters.size > 100) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** How far the zone's wall clock is ahead of UTC at `atMs`, in milliseconds (whole seconds). */
export function zoneOffsetMs(atMs: number, timeZone: string): number {
  const f = formatterOf(timeZone);
  if (!f) throw new RangeError(`unknown time zone ${timeZone}`);
  const parts: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(atMs))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(atMs / 1000) * 1000;
}

/** Stretches of [from, to) over which the zone's offset does not change (one for Türkiye, which keeps UTC+3 all year). */
export function constantOffsetSpans(fromMs: number, toMs: number, timeZone: string): Array<{ from: number; to: number; offset: number }> {
  const spans: Array<{ from: number; to: number; offset: number }> = [];
  let start = fromMs;
  let offset = zoneOffsetMs(start, timeZone);
  // Offsets change a few times a year at most: probe every 12 hours, then find the change to the second.
  for (let probe = start; probe < toMs - 1; ) {
    const next = Math.min(probe + DAY_MS / 2, toMs - 1);
    if (zoneOffsetMs(next, timeZone) === offset) {
      probe = next;
      continue;
    }
    let lo = Math.floor(probe / 1000); // whole seconds: the old offset at lo, a new one at hi
    let hi = Math.floor(next / 1000);
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (zoneOffsetMs(mid * 1000, timeZone) === offset) lo = mid;
      else hi = mid;
    }
    const change = Math.max(hi * 1000, start + 1);
    spans.push({ from: start, to: change, offset });
    start = change;
    offset = zoneOffsetMs(start, timeZone);
    probe = start;
  }
  spans.push({ from: start, to: toMs, offset });
  return spans;
}

/** The zone's calendar date (YYYY-MM-DD) of an instant. */
export function zoneDate(atMs: number, timeZone: string): string {
  return new Date(atMs + zoneOffsetMs(atMs, timeZone)).toISOString().slice(0, 10);
}

/** Every calendar date from `first` to `last` (YYYY-MM-DD), both included. */
function datesBetween(first: string, last: string): string[] {
  const out: string[] = [];
  for (let d = Date.parse(`${first}T00:00:00Z`), end = Date.parse(`${last}T00:00:00Z`); d <= end; d += DAY_MS) out.push(new Date(d).toISOString().slice(0, 10));
  return out;
}

/** A summary's range, checked: both ends given, from before to, at most MAX_SUMMARY_DAYS, a time zone Intl knows. */
export function summaryRange(input: { from: number | undefined; to: number | undefined; timeZone: string }): { from: number; to: number; timeZone: string } {
  const timeZone = input.timeZone.trim() === "" ? DEFAULT_SUMMARY_TIME_ZONE : input.timeZone.trim();
  if (timeZone.length > 64 || !formatterOf(timeZone)) throw validationError("time_zone", "time_zone: is not an IANA time zone (e.g. Europe/Istanbul)");
  if (input.from === undefined) throw validationError("from", "from: is required");
  if (input.to === undefined) throw validationError("to", "to: is required");
  if (input.to <= input.from) throw validationError("to", "to: must be after from");
  if (input.to - input.from > MAX_SUMMARY_DAYS * DAY_MS) throw validationError("to", `to: the range is at most ${MAX_SUMMARY_DAYS} days`);
  return { from: input.from, to: input.to, timeZone };
}

/**
 * A Summarize… request (SummarizeDeposits, SummarizeWithdrawals): one merchant, a range of
 * created times, the zone its days are cut in, one currency ("" is TRY; a currency no longer
 * configured still has its history) and optionally sandbox or live only. Check the range
 * with summaryRange after parsing.
 */
export const summaryRequest = z.object({
  merchantId: identifier(100),
  from: optionalTimestamp,
  to: optionalTimestamp,
  timeZone: z.string().max(64, "must be at most 64 characters"),
  currency: z
    .string()
    .trim()
    .transform((c) => (c === "" ? "TRY" : c.toUpperCase()))
    .refine((c) => /^[A-Z]{3}$/.test(c), "must be a three-letter currency code"),
  sandbox: z.boolean().optional(),
});

/** How a table's statuses count in a summary; a status listed nowhere counts only in `count`. */
export interface SummaryStatuses {
  completed: string;
  failed: readonly string[];
  cancelled: readonly string[];
  open: readonly string[];
}

export interface SummaryTotals {
  count: bigint;
  completedCount: bigint;
  failedCount: bigint;
  cancelledCount: bigint;
  openCount: bigint;
  completedVolume: bigint;
  successRateBp: number;
  medianSecondsToComplete?: bigint;
}

export interface SummaryDay {
  date: string;
  count: bigint;
  completedCount: bigint;
  completedVolume: bigint;
}

export interface SummaryQuery {
  /** deposits or withdrawals: each has merchant_id, status, amount, currency, sandbox, created_at, completed_at (epoch ms). */
  table: string;
  merchantId: string;
  currency: string;
  sandbox: boolean | undefined;
  from: number;
  to: number;
  timeZone: string;
  statuses: SummaryStatuses;
}

interface GroupRow {
  day_ms: number | string;
  status: string;
  n: number | string;
  volume: number | string | null;
}

/**
 * A merchant's transactions created in [from, to), counted in the database: one grouped query
 * per stretch of constant offset (so one for Türkiye) over the (merchant_id, created_at) index,
 * grouped by the zone's day and status; the day is the created_at shifted by the offset, cut to
 * whole days with `%`, which MariaDB and SQLite compute alike. The median time to complete is
 * found in SQL too: the completed ones' durations ordered, and only the middle one (or two)
 * read (LIMIT/OFFSET), so no row list ever reaches the service.
 */
export async function summarizeByDay(db: Knex, q: SummaryQuery): Promise<{ totals: SummaryTotals; days: SummaryDay[] }> {
  const scoped = () => {
    const query = db(q.table).where({ merchant_id: q.merchantId, currency: q.currency }).where("created_at", ">=", q.from).where("created_at", "<", q.to);
    if (q.sandbox !== undefined) query.where({ sandbox: q.sandbox });
    return query;
  };
  const days = new Map<string, SummaryDay>(datesBetween(zoneDate(q.from, q.timeZone), zoneDate(q.to - 1, q.timeZone)).map((date) => [date, { date, count: 0n, completedCount: 0n, completedVolume: 0n }]));
  const byStatus = new Map<string, { n: bigint; volume: bigint }>();
  for (const span of constantOffsetSpans(q.from, q.to, q.timeZone)) {
    const rows = (await scoped()
      .where("created_at", ">=", span.from)
      .where("created_at", "<", span.to)
      .select(db.raw("(created_at + ?) - ((created_at + ?) % ?) as day_ms", [span.offset, span.offset, DAY_MS]), "status")
      .count({ n: "*" })
      .sum({ volume: "amount" })
      .groupBy("day_ms", "status")) as unknown as GroupRow[];
    for (const row of rows) {
      const n = BigInt(row.n);
      const volume = row.volume === null ? 0n : BigInt(String(row.volume).split(".")[0]!);
      const date = new Date(Number(row.day_ms)).toISOString().slice(0, 10);
      const day = days.get(date) ?? { date, count: 0n, completedCount: 0n, completedVolume: 0n };
      days.set(date, day);
      day.count += n;
      if (row.status === q.statuses.completed) {
        day.completedCount += n;
        day.completedVolume += volume;
      }
      const s = byStatus.get(row.status) ?? { n: 0n, volume: 0n };
      s.n += n;
      s.volume += volume;
      byStatus.set(row.status, s);
    }
  }
  const countOf = (statuses: readonly string[]) => statuses.reduce((sum, s) => sum + (byStatus.get(s)?.n ?? 0n), 0n);
  const count = [...byStatus.values()].reduce((sum, s) => sum + s.n, 0n);
  const completedCount = countOf([q.statuses.completed]);
  const failedCount = countOf(q.statuses.failed);
  const cancelledCount = countOf(q.statuses.cancelled);
  const finished = completedCount + failedCount + cancelledCount;
  const totals: SummaryTotals = {
    count,
    completedCount,
    failedCount,
    cancelledCount,
    openCount: countOf(q.statuses.open),
    completedVolume: byStatus.get(q.statuses.completed)?.volume ?? 0n,
    successRateBp: finished === 0n ? 0 : Number((completedCount * 10_000n) / finished),
  };
  const median = await medianDuration(db, scoped, q.statuses.completed);
  if (median !== undefined) totals.medianSecondsToComplete = BigInt(Math.floor(median / 1000));
  return { totals, days: [...days.values()].sort((a, b) => a.date.localeCompare(b.date)) };
}

/** The median of completed_at - created_at over the completed ones (the mean of the middle two of an even count), in ms. */
async function medianDuration(db: Knex, scoped: () => Knex.QueryBuilder, completed: string): Promise<number | undefined> {
  const done = () => scoped().where({ status: completed }).whereNotNull("completed_at");
  const counted = (await done().count({ n: "*" }).first()) as { n: number | string } | undefined;
  const n = Number(counted?.n ?? 0);
  if (n === 0) return undefined;
  const middle = (await done()
    .select(db.raw("completed_at - created_at as d"))
    .orderBy("d", "asc")
    .limit(n % 2 === 0 ? 2 : 1)
    .offset(Math.floor((n - 1) / 2))) as Array<{ d: number | string }>;
  const values = middle.map((r) => Number(r.d));
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}
