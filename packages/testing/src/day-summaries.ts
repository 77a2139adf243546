import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import type { ManualClock } from "./clock.js";
import { createServiceClient } from "./operators.js";
import { rejectionOf } from "./rejection.js";

// What the SummarizeDeposits and SummarizeWithdrawals tests share (issue 24): one timeline of a
// merchant's payments at known instants around Türkiye's midnight (21:00 UTC), and the numbers
// both summaries must give for it. Each test keeps what only its own kind of payment has.

const at = (iso: string) => new Date(iso);
const DAY = 86_400_000;

/** Where the timeline starts: 27 Nov 2026 23:00 in Istanbul, an hour before the range. */
export const SUMMARY_START = at("2026-11-27T20:00:00Z");
/** The range summarized: 2026-11-28 00:00 in Istanbul… */
export const SUMMARY_FROM = at("2026-11-27T21:00:00Z");
/** …to 2026-12-01 00:00 in Istanbul. */
export const SUMMARY_TO = at("2026-11-30T21:00:00Z");

/** The range, as a Summarize… request's `from` and `to`. */
export function summaryRange(): { from: Timestamp; to: Timestamp } {
  return { from: timestampFromDate(SUMMARY_FROM), to: timestampFromDate(SUMMARY_TO) };
}

/** The merchant whose payments are summarized, and another, whose one payment must not count. */
export interface SummaryShops {
  shop: string;
  other: string;
}

/** Creates the two sandbox merchants ("Summary Shop", "Other Shop") of the timeline. */
export async function summaryShops(url: string): Promise<SummaryShops> {
  const merchants = createServiceClient(MerchantService, url);
  const shop = (await merchants.createMerchant({ name: "Summary Shop", sandbox: true })).merchant!.id;
  const other = (await merchants.createMerchant({ name: "Other Shop", sandbox: true })).merchant!.id;
  return { shop, other };
}

/** How one kind of payment (a deposit, a withdrawal) is made and ended, at the clock's time. */
export interface SummaryPayments {
  /** Creates one; its id. */
  create(merchantId: string, amount: bigint): Promise<string>;
  /** Completes one (paid, paid out). */
  complete(merchantId: string, id: string): Promise<unknown>;
  /** The shop's unfinished ones, at 29 Nov 10:00 UTC: one of 400 TRY that fails, one of 500 TRY cancelled, then those left open (600 TRY and on). */
  unfinished(shop: string): Promise<void>;
}

/**
 * The timeline: one completed before the range; four completed after 60, 120, 600 and 30 s
 * (one created at 23:59:59 and one at 00:00 in Istanbul, either side of the day); the
 * unfinished ones on the 29th; one of the other merchant's, completed.
 */
export async function summaryTimeline(clock: ManualClock, { shop, other }: SummaryShops, payments: SummaryPayments): Promise<void> {
  const { create, complete } = payments;
  clock.set(SUMMARY_START);
  await complete(shop, await create(shop, 99_00n)); // 27 Nov 23:00 in Istanbul: outside
  clock.set(at("2026-11-28T08:00:00Z"));
  const first = await create(shop, 100_00n);
  clock.advance(60_000);
  await complete(shop, first);
  clock.set(at("2026-11-28T20:59:59Z")); // 23:59:59 on the 28th in Istanbul
  const second = await create(shop, 200_00n);
  clock.set(at("2026-11-28T21:00:00Z")); // 00:00 on the 29th in Istanbul
  const third = await create(shop, 300_00n);
  clock.set(at("2026-11-28T21:01:59Z"));
  await complete(shop, second);
  clock.set(at("2026-11-28T21:10:00Z"));
  await complete(shop, third);
  clock.set(at("2026-11-29T10:00:00Z"));
  await payments.unfinished(shop);
  await complete(other, await create(other, 700_00n));
  clock.set(at("2026-11-30T12:00:00Z"));
  const last = await create(shop, 50_00n);
  clock.advance(30_000);
  await complete(shop, last);
}

/** ava's `t`, as much of it as the checks use. */
export interface SummaryAssertions {
  is(actual: unknown, expected: unknown, message?: string): unknown;
  deepEqual(actual: unknown, expected: unknown, message?: string): unknown;
}

/** A SummarizeDeposits or SummarizeWithdrawals answer. */
export interface SummaryAnswer {
  timeZone: string;
  totals?: { count: bigint; completedCount: bigint; cancelledCount: bigint; completedVolume: bigint; successRateBp: number; medianSecondsToComplete?: bigint };
  days: { date: string; count: bigint; completedCount: bigint; completedVolume: bigint }[];
}

/**
 * Asserts what the timeline gives the shop whatever the kind of payment: `count` in all (the
 * 29th has all but the other days' three), four completed for 650 TRY, one cancelled, the
 * success rate, the median and the days cut in Istanbul. The failed and open counts, which
 * mean something of each kind's own, stay with each test.
 */
export function checkShopSummary(t: SummaryAssertions, res: SummaryAnswer, count: bigint): void {
  t.is(res.timeZone, "Europe/Istanbul");
  const totals = res.totals!;
  t.is(totals.count, count);
  t.is(totals.completedCount, 4n);
  t.is(totals.cancelledCount, 1n);
  t.is(totals.completedVolume, 100_00n + 200_00n + 300_00n + 50_00n);
  t.is(totals.successRateBp, 6666, "4 of the 6 finished, rounded down");
  t.is(totals.medianSecondsToComplete, 90n, "30, 60, 120, 600: the mean of the middle two");
  t.deepEqual(
    res.days.map((d) => [d.date, d.count, d.completedCount, d.completedVolume]),
    [
      ["2026-11-28", 2n, 2n, 300_00n],
      ["2026-11-29", count - 3n, 1n, 300_00n],
      ["2026-11-30", 1n, 1n, 50_00n],
    ],
    "23:59:59 and 00:00 in Istanbul fall on either side of the day",
  );
}

/** A Summarize… request, as the checks send it. */
export interface SummaryRequest {
  merchantId?: string;
  from?: Timestamp;
  to?: Timestamp;
}

/** One Summarize… call, as the test admin and as one of the shop's own users. */
export interface SummaryCalls {
  asAdmin(request: SummaryRequest): Promise<SummaryAnswer>;
  asShopUser(request: SummaryRequest): Promise<SummaryAnswer>;
}

/**
 * Asserts whose payments a summary counts and which range it refuses: the other merchant's
 * one payment is its own; the shop's user is pinned to the shop (an empty merchant id is its
 * own, `count` payments; another merchant's is NOT_FOUND); more than 92 days is refused on `to`.
 */
export async function checkSummaryScope(t: SummaryAssertions, calls: SummaryCalls, { shop, other }: SummaryShops, count: bigint): Promise<void> {
  const range = summaryRange();
  const theirs = await calls.asAdmin({ merchantId: other, ...range });
  t.is(theirs.totals!.count, 1n);
  t.is(theirs.totals!.completedVolume, 700_00n);

  // A merchant's own user: pinned to its merchant; another merchant's id is NOT_FOUND.
  t.is((await calls.asShopUser({ ...range })).totals!.count, count, "an empty merchant id is the user's own");
  t.is((await rejectionOf(calls.asShopUser({ merchantId: other, ...range }))).code, Code.NotFound);

  const long = await rejectionOf(calls.asAdmin({ merchantId: shop, from: range.from, to: timestampFromDate(new Date(SUMMARY_FROM.getTime() + 93 * DAY)) }));
  t.is(long.reason, "VALIDATION_ERROR");
  t.is(long.field, "to");
}
