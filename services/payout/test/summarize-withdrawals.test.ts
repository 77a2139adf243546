import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Code } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, openDatabase, type Db, type RunningServices } from "@payments/kit";
import { bankIban, createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock, rejectionOf, TEST_OPERATOR_ENV, testMerchantUser, type ManualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// SummarizeWithdrawals (issue 24): the totals, the success rate, the median time to pay out and
// the days cut at Türkiye's midnight (21:00 UTC), one merchant's only; the range refused past
// 92 days. The same scenario on SQLite and on MySQL. The worker is off: the bank's outcomes are
// written on the rows (completed_at at a known time), which is all a summary reads.

const at = (iso: string) => new Date(iso);
const FROM = at("2026-11-27T21:00:00Z"); // 2026-11-28 00:00 in Istanbul
const TO = at("2026-11-30T21:00:00Z"); // 2026-12-01 00:00 in Istanbul
const ENV = { LOG_LEVEL: "fatal", MASTER_KEY: "ac".repeat(32), PAYOUT_WORKER: "0", ...TEST_OPERATOR_ENV };
const IBAN = bankIban("00062", 4811);

interface Shop {
  shop: string;
  other: string;
}

/** Withdrawals at known times: four paid out after 60, 120, 600 and 30 s, one failed, one cancelled, two open, one before the range, one of another merchant. */
async function scenario(url: string, db: Db, clock: ManualClock): Promise<Shop> {
  const merchants = createServiceClient(MerchantService, url);
  const payouts = createServiceClient(PayoutService, url);
  const shop = (await merchants.createMerchant({ name: "Summary Shop", sandbox: true })).merchant!.id;
  const other = (await merchants.createMerchant({ name: "Other Shop", sandbox: true })).merchant!.id;
  for (const merchantId of [shop, other]) await payouts.adjustBalance({ merchantId, amount: 10_000_000n, reason: "test funding" });
  let n = 0;
  const create = async (merchantId: string, amount: bigint) =>
    (await payouts.createWithdrawal({ merchantId, processId: `sum-${++n}`, amount, accountName: `Holder ${n}`, iban: IBAN, userId: `u${n}`, userName: `user${n}`, name: `Holder ${n}` })).withdrawal!.id;
  const settle = (id: string, status: "completed" | "failed" | "processing") =>
    db("withdrawals").where({ id }).update({ status, ...(status === "processing" ? {} : { completed_at: clock.now().getTime() }) });

  clock.set(at("2026-11-27T20:00:00Z"));
  await settle(await create(shop, 99_00n), "completed"); // 27 Nov 23:00 in Istanbul: outside
  clock.set(at("2026-11-28T08:00:00Z"));
  const w1 = await create(shop, 100_00n);
  clock.advance(60_000);
  await settle(w1, "completed");
  clock.set(at("2026-11-28T20:59:59Z")); // 23:59:59 on the 28th in Istanbul
  const w2 = await create(shop, 200_00n);
  clock.set(at("2026-11-28T21:00:00Z")); // 00:00 on the 29th in Istanbul
  const w3 = await create(shop, 300_00n);
  clock.set(at("2026-11-28T21:01:59Z"));
  await settle(w2, "completed");
  clock.set(at("2026-11-28T21:10:00Z"));
  await settle(w3, "completed");
  clock.set(at("2026-11-29T10:00:00Z"));
  await settle(await create(shop, 400_00n), "failed");
  const w5 = await create(shop, 500_00n);
  await payouts.cancelWithdrawal({ merchantId: shop, withdrawalId: w5 });
  await settle(await create(shop, 600_00n), "processing");
  await create(shop, 650_00n); // pending
  await settle(await create(other, 700_00n), "completed");
  clock.set(at("2026-11-30T12:00:00Z"));
  const w7 = await create(shop, 50_00n);
  clock.advance(30_000);
  await settle(w7, "completed");
  return { shop, other };
}

async function checks(t: ExecutionContext, url: string, { shop, other }: Shop): Promise<void> {
  const payouts = createServiceClient(PayoutService, url);
  const range = { from: timestampFromDate(FROM), to: timestampFromDate(TO) };
  const res = await payouts.summarizeWithdrawals({ merchantId: shop, ...range });
  t.is(res.timeZone, "Europe/Istanbul");
  const totals = res.totals!;
  t.is(totals.count, 8n);
  t.is(totals.completedCount, 4n);
  t.is(totals.failedCount, 1n);
  t.is(totals.cancelledCount, 1n);
  t.is(totals.openCount, 2n, "pending and processing");
  t.is(totals.completedVolume, 100_00n + 200_00n + 300_00n + 50_00n);
  t.is(totals.successRateBp, 6666, "4 of the 6 finished, rounded down");
  t.is(totals.medianSecondsToComplete, 90n, "30, 60, 120, 600: the mean of the middle two");
  t.deepEqual(
    res.days.map((d) => [d.date, d.count, d.completedCount, d.completedVolume]),
    [
      ["2026-11-28", 2n, 2n, 300_00n],
      ["2026-11-29", 5n, 1n, 300_00n],
      ["2026-11-30", 1n, 1n, 50_00n],
    ],
    "23:59:59 and 00:00 in Istanbul fall on either side of the day",
  );

  const theirs = await payouts.summarizeWithdrawals({ merchantId: other, ...range });
  t.is(theirs.totals!.count, 1n);
  t.is(theirs.totals!.completedVolume, 700_00n);

  // A merchant's own user: pinned to its merchant; another merchant's id is NOT_FOUND.
  const finance = createServiceClient(PayoutService, url, { operator: testMerchantUser(shop, "finance") });
  t.is((await finance.summarizeWithdrawals({ ...range })).totals!.count, 8n);
  t.is((await rejectionOf(finance.summarizeWithdrawals({ merchantId: other, ...range }))).code, Code.NotFound);

  const long = await rejectionOf(payouts.summarizeWithdrawals({ merchantId: shop, from: range.from, to: timestampFromDate(new Date(FROM.getTime() + 93 * 86_400_000)) }));
  t.is(long.reason, "VALIDATION_ERROR");
  t.is(long.field, "to");
  t.is((await rejectionOf(payouts.summarizeWithdrawals({ merchantId: shop, from: range.from }))).field, "to");
  t.is((await rejectionOf(payouts.summarizeWithdrawals({ merchantId: shop, ...range, timeZone: "Nowhere/Else" }))).field, "time_zone");
}

test.serial("on SQLite: totals, median, Istanbul days, one merchant's, range refused", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "payout-summary-"));
  const clock = manualClock(at("2026-11-27T20:00:00Z"));
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
  const clock = manualClock(at("2026-11-27T20:00:00Z"));
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
