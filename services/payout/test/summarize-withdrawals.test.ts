import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, openDatabase, type Db, type RunningServices } from "@payments/kit";
import {
  bankIban,
  checkShopSummary,
  checkSummaryScope,
  createServiceClient,
  createTestDatabase,
  deleteTestStream,
  jetStreamTestEnv,
  manualClock,
  rejectionOf,
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

// SummarizeWithdrawals (issue 24): the totals, the success rate, the median time to pay out and
// the days cut at Türkiye's midnight (21:00 UTC), one merchant's only; the range refused past
// 92 days. The same scenario on SQLite and on MySQL. The worker is off: the bank's outcomes are
// written on the rows (completed_at at a known time), which is all a summary reads.

const ENV = { LOG_LEVEL: "fatal", MASTER_KEY: "ac".repeat(32), PAYOUT_WORKER: "0", ...TEST_OPERATOR_ENV };
const IBAN = bankIban("00062", 4811);

/** Withdrawals on the shared timeline: the unfinished ones one failed, one cancelled, one processing, one pending. */
async function scenario(url: string, db: Db, clock: ManualClock): Promise<SummaryShops> {
  const payouts = createServiceClient(PayoutService, url);
  const shops = await summaryShops(url);
  for (const merchantId of [shops.shop, shops.other]) await payouts.adjustBalance({ merchantId, amount: 10_000_000n, reason: "test funding" });
  let n = 0;
  const create = async (merchantId: string, amount: bigint) =>
    (await payouts.createWithdrawal({ merchantId, processId: `sum-${++n}`, amount, accountName: `Holder ${n}`, iban: IBAN, userId: `u${n}`, userName: `user${n}`, name: `Holder ${n}` })).withdrawal!.id;
  const settle = (id: string, status: "completed" | "failed" | "processing") =>
    db("withdrawals").where({ id }).update({ status, ...(status === "processing" ? {} : { completed_at: clock.now().getTime() }) });

  await summaryTimeline(clock, shops, {
    create,
    complete: (_merchantId, id) => settle(id, "completed"),
    async unfinished(shop) {
      await settle(await create(shop, 400_00n), "failed");
      const w5 = await create(shop, 500_00n);
      await payouts.cancelWithdrawal({ merchantId: shop, withdrawalId: w5 });
      await settle(await create(shop, 600_00n), "processing");
      await create(shop, 650_00n); // pending
    },
  });
  return shops;
}

async function checks(t: ExecutionContext, url: string, shops: SummaryShops): Promise<void> {
  const { shop } = shops;
  const payouts = createServiceClient(PayoutService, url);
  const range = summaryRange();
  const res = await payouts.summarizeWithdrawals({ merchantId: shop, ...range });
  checkShopSummary(t, res, 8n);
  t.is(res.totals!.failedCount, 1n);
  t.is(res.totals!.openCount, 2n, "pending and processing");

  // The other merchant's withdrawal is its own; the shop's finance user is pinned to the shop; more than 92 days is refused.
  const finance = createServiceClient(PayoutService, url, { operator: testMerchantUser(shop, "finance") });
  await checkSummaryScope(t, { asAdmin: (request) => payouts.summarizeWithdrawals(request), asShopUser: (request) => finance.summarizeWithdrawals(request) }, shops, 8n);
  t.is((await rejectionOf(payouts.summarizeWithdrawals({ merchantId: shop, from: range.from }))).field, "to");
  t.is((await rejectionOf(payouts.summarizeWithdrawals({ merchantId: shop, ...range, timeZone: "Nowhere/Else" }))).field, "time_zone");
}

test.serial("on SQLite: totals, median, Istanbul days, one merchant's, range refused", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "payout-summary-"));
  const clock = manualClock(SUMMARY_START);
  let running: RunningServices | undefined;
  let db: Db | undefined;
  try {
    running = await startInProcess(["merchant", "bank-catalog", "payout"], { clock, env: { ...ENV, DATA_DIR: dir } });
    db = openDatabase({ sqliteFile: join(dir, "payout.sqlite") });
    const url = running.server.url;
    await checks(t, url, await scenario(url, db, clock));
  } finally {
    await db?.destroy();
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.serial("on MySQL: the same numbers", async (t) => {
  const database = await createTestDatabase();
  const nats = jetStreamTestEnv();
  const clock = manualClock(SUMMARY_START);
  const running = await startInProcess(["merchant", "bank-catalog", "payout"], { clock, env: { ...ENV, DATABASE_URL: database.url, ...nats } });
  const db = openDatabase({ url: deriveDatabaseUrl(database.url, "payout") });
  try {
    const url = running.server.url;
    await checks(t, url, await scenario(url, db, clock));
  } finally {
    await db.destroy();
    await running.stop();
    await database.drop();
    await deleteTestStream(nats);
  }
});
