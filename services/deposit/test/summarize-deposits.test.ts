import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Code } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { constantOffsetSpans, type RunningServices } from "@payments/kit";
import {
  addTestReceivingAccounts,
  createServiceClient,
  createTestDatabase,
  deleteTestStream,
  jetStreamTestEnv,
  manualClock,
  rejectionOf,
  TEST_OPERATOR_ENV,
  testMerchantUser,
  type ManualClock,
} from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";

// SummarizeDeposits (issue 24): the totals, the success rate, the median time to pay and the
// days cut at Türkiye's midnight (21:00 UTC), one merchant's only; the range refused past 92
// days. The same scenario on SQLite and on MySQL.

const at = (iso: string) => new Date(iso);
const FROM = at("2026-11-27T21:00:00Z"); // 2026-11-28 00:00 in Istanbul
const TO = at("2026-11-30T21:00:00Z"); // 2026-12-01 00:00 in Istanbul

interface Shop {
  shop: string;
  other: string;
}

/** Deposits at known times: four paid after 60, 120, 600 and 30 s, one expired, one cancelled, one pending, one before the range, one of another merchant. */
async function scenario(url: string, clock: ManualClock): Promise<Shop> {
  const merchants = createServiceClient(MerchantService, url);
  const deposits = createServiceClient(DepositService, url);
  const shop = (await merchants.createMerchant({ name: "Summary Shop", sandbox: true })).merchant!.id;
  const other = (await merchants.createMerchant({ name: "Other Shop", sandbox: true })).merchant!.id;
  let n = 0;
  const create = async (merchantId: string, amount: bigint) =>
    (await deposits.createDeposit({ merchantId, processId: `sum-${++n}`, amount, customer: { id: `c${n}`, name: `Customer ${n}`, username: `c${n}` } })).deposit!.id;
  const pay = (merchantId: string, depositId: string) => deposits.sandboxPayDeposit({ merchantId, depositId });

  clock.set(at("2026-11-27T20:00:00Z"));
  const before = await create(shop, 99_00n); // 27 Nov 23:00 in Istanbul: outside
  await pay(shop, before);
  clock.set(at("2026-11-28T08:00:00Z"));
  const d1 = await create(shop, 100_00n);
  clock.advance(60_000);
  await pay(shop, d1);
  clock.set(at("2026-11-28T20:59:59Z")); // 23:59:59 on the 28th in Istanbul
  const d2 = await create(shop, 200_00n);
  clock.set(at("2026-11-28T21:00:00Z")); // 00:00 on the 29th in Istanbul
  const d3 = await create(shop, 300_00n);
  clock.set(at("2026-11-28T21:01:59Z"));
  await pay(shop, d2);
  clock.set(at("2026-11-28T21:10:00Z"));
  await pay(shop, d3);
  clock.set(at("2026-11-29T10:00:00Z"));
  const d4 = await create(shop, 400_00n);
  await deposits.sandboxExpireDeposit({ merchantId: shop, depositId: d4 });
  const d5 = await create(shop, 500_00n);
  await deposits.cancelDeposit({ merchantId: shop, depositId: d5 });
  await create(shop, 600_00n); // pending
  const o1 = await create(other, 700_00n);
  await pay(other, o1);
  clock.set(at("2026-11-30T12:00:00Z"));
  const d7 = await create(shop, 50_00n);
  clock.advance(30_000);
  await pay(shop, d7);
  return { shop, other };
}

async function checks(t: ExecutionContext, url: string, { shop, other }: Shop): Promise<void> {
  const deposits = createServiceClient(DepositService, url);
  const range = { from: timestampFromDate(FROM), to: timestampFromDate(TO) };
  const res = await deposits.summarizeDeposits({ merchantId: shop, ...range });
  t.is(res.timeZone, "Europe/Istanbul");
  const totals = res.totals!;
  t.is(totals.count, 7n);
  t.is(totals.completedCount, 4n);
  t.is(totals.failedCount, 1n, "expired counts as failed");
  t.is(totals.cancelledCount, 1n);
  t.is(totals.openCount, 1n);
  t.is(totals.completedVolume, 100_00n + 200_00n + 300_00n + 50_00n);
  t.is(totals.successRateBp, 6666, "4 of the 6 finished, rounded down");
  t.is(totals.medianSecondsToComplete, 90n, "30, 60, 120, 600: the mean of the middle two");
  t.deepEqual(
    res.days.map((d) => [d.date, d.count, d.completedCount, d.completedVolume]),
    [
      ["2026-11-28", 2n, 2n, 300_00n],
      ["2026-11-29", 4n, 1n, 300_00n],
      ["2026-11-30", 1n, 1n, 50_00n],
    ],
    "23:59:59 and 00:00 in Istanbul fall on either side of the day",
  );

  // The same instants cut in London (UTC in November): 20:59:59 and 21:00 UTC are one day.
  const london = await deposits.summarizeDeposits({ merchantId: shop, ...range, timeZone: "Europe/London" });
  t.deepEqual(
    london.days.map((d) => [d.date, d.count]),
    [
      ["2026-11-27", 0n],
      ["2026-11-28", 3n],
      ["2026-11-29", 3n],
      ["2026-11-30", 1n],
    ],
  );

  // A range with nothing: zeros, every day listed, no median.
  const empty = await deposits.summarizeDeposits({ merchantId: shop, from: timestampFromDate(at("2026-10-31T21:00:00Z")), to: timestampFromDate(at("2026-11-02T21:00:00Z")) });
  t.is(empty.totals!.count, 0n);
  t.is(empty.totals!.successRateBp, 0);
  t.is(empty.totals!.medianSecondsToComplete, undefined);
  t.deepEqual(
    empty.days.map((d) => d.date),
    ["2026-11-01", "2026-11-02"],
  );

  // The other merchant's deposit is its own.
  const theirs = await deposits.summarizeDeposits({ merchantId: other, ...range });
  t.is(theirs.totals!.count, 1n);
  t.is(theirs.totals!.completedVolume, 700_00n);
  t.is((await deposits.summarizeDeposits({ merchantId: shop, ...range, sandbox: false })).totals!.count, 0n, "a sandbox merchant has no live deposits");
  t.is((await deposits.summarizeDeposits({ merchantId: shop, ...range, currency: "EUR" })).totals!.count, 0n);

  // A merchant's own user: pinned to its merchant; another merchant's id is NOT_FOUND.
  const viewer = createServiceClient(DepositService, url, { operator: testMerchantUser(shop, "viewer") });
  t.is((await viewer.summarizeDeposits({ merchantId: shop, ...range })).totals!.count, 7n);
  t.is((await viewer.summarizeDeposits({ ...range })).totals!.count, 7n, "an empty merchant id is the user's own");
  t.is((await rejectionOf(viewer.summarizeDeposits({ merchantId: other, ...range }))).code, Code.NotFound);

  // Refused: more than 92 days, no range, an unknown zone, to before from.
  const long = await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, from: range.from, to: timestampFromDate(new Date(FROM.getTime() + 93 * 86_400_000)) }));
  t.is(long.reason, "VALIDATION_ERROR");
  t.is(long.field, "to");
  t.is((await deposits.summarizeDeposits({ merchantId: shop, from: range.from, to: timestampFromDate(new Date(FROM.getTime() + 92 * 86_400_000)) })).days.length, 92);
  t.is((await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, to: range.to }))).field, "from");
  t.is((await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, ...range, timeZone: "Mars/Olympus" }))).field, "time_zone");
  t.is((await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, from: range.to, to: range.from }))).field, "to");
  t.is((await rejectionOf(deposits.summarizeDeposits({ ...range }))).field, "merchant_id");
}

test.serial("on SQLite: totals, median, Istanbul days, one merchant's, range refused", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "deposit-summary-"));
  const clock = manualClock(at("2026-11-27T20:00:00Z"));
  let running: RunningServices | undefined;
  try {
    running = await startInProcess(["merchant", "bank-catalog", depositModule], { clock, env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "d7".repeat(32), ...TEST_OPERATOR_ENV }, receivingAccounts: true });
    const url = running.server.url;
    await checks(t, url, await scenario(url, clock));
  } finally {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.serial("on MySQL: the same numbers", async (t) => {
  const database = await createTestDatabase();
  const nats = jetStreamTestEnv();
  const clock = manualClock(at("2026-11-27T20:00:00Z"));
  const running = await startInProcess(["merchant", "bank-catalog", depositModule], { clock, env: { LOG_LEVEL: "fatal", MASTER_KEY: "d8".repeat(32), DATABASE_URL: database.url, ...nats, ...TEST_OPERATOR_ENV } });
  try {
    const url = running.server.url;
    await addTestReceivingAccounts(createServiceClient(BankCatalogService, url));
    await checks(t, url, await scenario(url, clock));
  } finally {
    await running.stop();
    await database.drop();
    await deleteTestStream(nats);
  }
});

test("a zone's offset changes are found to the second (Berlin's autumn change, 2026-10-25 01:00 UTC)", (t) => {
  const spans = constantOffsetSpans(Date.parse("2026-10-20T00:00:00Z"), Date.parse("2026-10-30T00:00:00Z"), "Europe/Berlin");
  t.deepEqual(
    spans.map((s) => [new Date(s.from).toISOString(), new Date(s.to).toISOString(), s.offset / 3_600_000]),
    [
      ["2026-10-20T00:00:00.000Z", "2026-10-25T01:00:00.000Z", 2],
      ["2026-10-25T01:00:00.000Z", "2026-10-30T00:00:00.000Z", 1],
    ],
  );
  t.is(constantOffsetSpans(0, 92 * 86_400_000, "Europe/Istanbul").length, 1);
});
