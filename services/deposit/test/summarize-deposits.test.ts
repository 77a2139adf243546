import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { constantOffsetSpans, type RunningServices } from "@payments/kit";
import {
  addTestReceivingAccounts,
  checkShopSummary,
  checkSummaryScope,
  createServiceClient,
  createTestDatabase,
  deleteTestStream,
  jetStreamTestEnv,
  manualClock,
  rejectionOf,
  SUMMARY_FROM,
  SUMMARY_START,
  summaryRange,
  summaryShops,
  summaryTimeline,
  TEST_OPERATOR_ENV,
  testMerchantUser,
  type ManualClock,
  type SummaryShops,
} from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";

// SummarizeDeposits (issue 24): the totals, the success rate, the median time to pay and the
// days cut at Türkiye's midnight (21:00 UTC), one merchant's only; the range refused past 92
// days. The same scenario on SQLite and on MySQL.

const at = (iso: string) => new Date(iso);

/** Deposits on the shared timeline: the unfinished ones one expired, one cancelled, one pending. */
async function scenario(url: string, clock: ManualClock): Promise<SummaryShops> {
  const deposits = createServiceClient(DepositService, url);
  const shops = await summaryShops(url);
  let n = 0;
  const create = async (merchantId: string, amount: bigint) =>
    (await deposits.createDeposit({ merchantId, processId: `sum-${++n}`, amount, customer: { id: `c${n}`, name: `Customer ${n}`, username: `c${n}` } })).deposit!.id;
  await summaryTimeline(clock, shops, {
    create,
    complete: (merchantId, depositId) => deposits.sandboxPayDeposit({ merchantId, depositId }),
    async unfinished(shop) {
      const d4 = await create(shop, 400_00n);
      await deposits.sandboxExpireDeposit({ merchantId: shop, depositId: d4 });
      const d5 = await create(shop, 500_00n);
      await deposits.cancelDeposit({ merchantId: shop, depositId: d5 });
      await create(shop, 600_00n); // pending
    },
  });
  return shops;
}

async function checks(t: ExecutionContext, url: string, shops: SummaryShops): Promise<void> {
  const { shop } = shops;
  const deposits = createServiceClient(DepositService, url);
  const range = summaryRange();
  const res = await deposits.summarizeDeposits({ merchantId: shop, ...range });
  checkShopSummary(t, res, 7n);
  t.is(res.totals!.failedCount, 1n, "expired counts as failed");
  t.is(res.totals!.openCount, 1n);

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

  // The other merchant's deposit is its own; the shop's viewer is pinned to the shop; more than 92 days is refused.
  const viewer = createServiceClient(DepositService, url, { operator: testMerchantUser(shop, "viewer") });
  await checkSummaryScope(t, { asAdmin: (request) => deposits.summarizeDeposits(request), asShopUser: (request) => viewer.summarizeDeposits(request) }, shops, 7n);
  t.is((await deposits.summarizeDeposits({ merchantId: shop, ...range, sandbox: false })).totals!.count, 0n, "a sandbox merchant has no live deposits");
  t.is((await deposits.summarizeDeposits({ merchantId: shop, ...range, currency: "EUR" })).totals!.count, 0n);
  t.is((await viewer.summarizeDeposits({ merchantId: shop, ...range })).totals!.count, 7n);

  // Refused: no range, an unknown zone, to before from; 92 days are not too many.
  t.is((await deposits.summarizeDeposits({ merchantId: shop, from: range.from, to: timestampFromDate(new Date(SUMMARY_FROM.getTime() + 92 * 86_400_000)) })).days.length, 92);
  t.is((await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, to: range.to }))).field, "from");
  t.is((await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, ...range, timeZone: "Mars/Olympus" }))).field, "time_zone");
  t.is((await rejectionOf(deposits.summarizeDeposits({ merchantId: shop, from: range.to, to: range.from }))).field, "to");
  t.is((await rejectionOf(deposits.summarizeDeposits({ ...range }))).field, "merchant_id");
}

test.serial("on SQLite: totals, median, Istanbul days, one merchant's, range refused", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "deposit-summary-"));
  const clock = manualClock(SUMMARY_START);
  let running: RunningServices | undefined;
  try {
    running = await startInProcess(["merchant", "bank-catalog", depositModule], { clock, env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "d7".repeat(32), DEPOSIT_EXPIRY_INTERVAL: "1h", ...TEST_OPERATOR_ENV }, receivingAccounts: true });
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
  const clock = manualClock(SUMMARY_START);
  const running = await startInProcess(["merchant", "bank-catalog", depositModule], { clock, env: { LOG_LEVEL: "fatal", MASTER_KEY: "d8".repeat(32), DEPOSIT_EXPIRY_INTERVAL: "1h", DATABASE_URL: database.url, ...nats, ...TEST_OPERATOR_ENV } });
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
