import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalStatus, type ListWithdrawalsRequestSchema, type Withdrawal } from "@payments/contracts/payout";
import type { RunningServices } from "@payments/kit";
import { bankIban, createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock, rejectionOf } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// ListWithdrawals' search filters (issue 23): destination IBAN, holder name prefix and amount,
// each alone, with merchant and status, and through the cursor. SQLite for the behaviour; one
// case on MySQL runs every filter on the real dialect. The worker is off: withdrawals stay pending.
const clock = manualClock(new Date("2026-11-29T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "payout-list-filters-"));
const ENV = { LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER: "0" };
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "payout"], { clock, env: { ...ENV, DATA_DIR: dir } });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type ListInit = MessageInitShape<typeof ListWithdrawalsRequestSchema>;
let sequence = 0;
const IBAN_A = bankIban("00062", 4711);
const IBAN_B = bankIban("00064", 4712);

async function merchant(url: string, sandbox = true): Promise<string> {
  const merchantId = (await createServiceClient(MerchantService, url).createMerchant({ name: `Filters Shop ${++sequence}`, sandbox })).merchant!.id;
  await createServiceClient(PayoutService, url).adjustBalance({ merchantId, amount: 10_000_000n, reason: "test funding" });
  return merchantId;
}

async function withdrawal(url: string, merchantId: string, amount: bigint, accountName: string, iban: string): Promise<Withdrawal> {
  clock.advance(1000);
  const { withdrawal } = await createServiceClient(PayoutService, url).createWithdrawal({
    merchantId,
    processId: `filters-${++sequence}`,
    amount,
    accountName,
    iban,
    userId: "u1",
    userName: "user",
    name: accountName,
  });
  return withdrawal!;
}

/** Every id the listing gives, page by page through the cursor, `limit` at a time. */
async function allIds(url: string, request: ListInit, limit = 100): Promise<string[]> {
  const ids: string[] = [];
  let cursor = "";
  for (;;) {
    const page = await createServiceClient(PayoutService, url).listWithdrawals({ ...request, limit, cursor });
    ids.push(...page.withdrawals.map((w) => w.id));
    if (page.nextCursor === "") return ids;
    cursor = page.nextCursor;
  }
}

const newestFirst = (...withdrawals: Withdrawal[]) => withdrawals.map((w) => w.id).reverse();

test.serial("each filter alone finds exactly its withdrawals, newest first, and combines with merchant and status", async (t) => {
  const url = running!.server.url;
  const shop = await merchant(url);
  const other = await merchant(url);
  const a1 = await withdrawal(url, shop, 10_000n, "Elif Şahin", IBAN_A);
  const b1 = await withdrawal(url, shop, 25_050n, "Elifnur Kaya", IBAN_B);
  const a2 = await withdrawal(url, shop, 25_050n, "Elif Şahin", IBAN_A);
  const c1 = await withdrawal(url, shop, 7_500n, "elif can", IBAN_B);
  const o1 = await withdrawal(url, other, 25_050n, "Elif Şahin", IBAN_A);
  await createServiceClient(PayoutService, url).cancelWithdrawal({ merchantId: shop, withdrawalId: a2.id });

  // The IBAN with spaces and in lower case.
  const spaced = IBAN_A.toLowerCase().replace(/(.{4})/g, "$1 ");
  t.deepEqual(await allIds(url, { merchantId: shop, iban: spaced }), newestFirst(a1, a2));
  t.deepEqual(await allIds(url, { allMerchants: true, iban: IBAN_A }).then((ids) => ids.filter((id) => [a1.id, a2.id, o1.id].includes(id))), newestFirst(a1, a2, o1));
  t.deepEqual(await allIds(url, { merchantId: shop, iban: IBAN_A, status: WithdrawalStatus.CANCELLED }), [a2.id]);

  // A prefix, exact as typed: "Elif" finds Elif and Elifnur, not "elif can".
  t.deepEqual(await allIds(url, { merchantId: shop, holderName: "Elif" }), newestFirst(a1, b1, a2));
  t.deepEqual(await allIds(url, { merchantId: shop, holderName: "Elif Ş" }), newestFirst(a1, a2));
  t.deepEqual(await allIds(url, { merchantId: shop, holderName: "elif" }), [c1.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, holderName: "El%" }), [], "a wildcard in the prefix is taken literally");
  t.deepEqual(await allIds(url, { merchantId: shop, holderName: "Eli*" }), []);
  t.deepEqual(await allIds(url, { merchantId: shop, holderName: "Elif", status: WithdrawalStatus.PENDING }), newestFirst(a1, b1));

  t.deepEqual(await allIds(url, { merchantId: shop, amount: 25_050n }), newestFirst(b1, a2));
  t.deepEqual(await allIds(url, { merchantId: shop, amount: 25_050n, status: WithdrawalStatus.PENDING }), [b1.id]);
  t.deepEqual(await allIds(url, { merchantId: shop, amount: 25_050n, iban: IBAN_A, holderName: "Elif" }), [a2.id]);
  t.deepEqual(await allIds(url, { merchantId: other, amount: 10_000n }), []);
});

test.serial("a filtered list pages through the cursor without skipping or repeating, inside the filter", async (t) => {
  const url = running!.server.url;
  const shop = await merchant(url);
  const wanted: Withdrawal[] = [];
  for (let i = 0; i < 7; i++) {
    wanted.push(await withdrawal(url, shop, 33_300n, "Mehmet Öz", IBAN_A));
    await withdrawal(url, shop, 33_301n, "Zeynep Kaya", IBAN_B);
  }
  for (const filter of [{ amount: 33_300n }, { iban: IBAN_A }, { holderName: "Meh" }] satisfies ListInit[]) {
    t.deepEqual(await allIds(url, { merchantId: shop, ...filter }, 2), newestFirst(...wanted), JSON.stringify(filter, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
  }
});

test.serial("sandbox narrows the list to sandbox or live withdrawals, across merchants and for one, through the cursor; unset gives both", async (t) => {
  const url = running!.server.url;
  const play = await merchant(url, true);
  const real = await merchant(url, false);
  const sandboxed: Withdrawal[] = [];
  const live: Withdrawal[] = [];
  for (let i = 0; i < 3; i++) {
    sandboxed.push(await withdrawal(url, play, 55_500n, "Deniz Ak", IBAN_A));
    live.push(await withdrawal(url, real, 55_500n, "Deniz Ak", IBAN_A));
  }
  t.true(sandboxed.every((w) => w.sandbox) && live.every((w) => !w.sandbox));
  const mine = (ids: string[]) => ids.filter((id) => [...sandboxed, ...live].some((w) => w.id === id));
  t.deepEqual(mine(await allIds(url, { allMerchants: true, sandbox: true, amount: 55_500n }, 1)), newestFirst(...sandboxed));
  t.deepEqual(mine(await allIds(url, { allMerchants: true, sandbox: false }, 2)), newestFirst(...live));
  t.deepEqual(mine(await allIds(url, { allMerchants: true, amount: 55_500n }, 2)), newestFirst(...sandboxed.flatMap((w, i) => [w, live[i]!])), "unset: both");
  t.deepEqual(await allIds(url, { merchantId: real, sandbox: false, holderName: "Deniz" }, 1), newestFirst(...live));
  t.deepEqual(await allIds(url, { merchantId: real, sandbox: true }), []);
  t.deepEqual(await allIds(url, { merchantId: play, sandbox: true, status: WithdrawalStatus.PENDING }, 2), newestFirst(...sandboxed));
});

test.serial("a filter's invalid value is VALIDATION_ERROR naming its field", async (t) => {
  const payouts = createServiceClient(PayoutService, running!.server.url);
  const cases: Array<[ListInit, string]> = [
    [{ iban: "TR00 0000" }, "iban"],
    [{ iban: "DE89370400440532013000" }, "iban"],
    [{ holderName: "x".repeat(201) }, "holder_name"],
    [{ holderName: "Elif\u0000" }, "holder_name"],
    [{ amount: 0n }, "amount"],
    [{ amount: -5n }, "amount"],
  ];
  for (const [filter, field] of cases) {
    t.like(await rejectionOf(payouts.listWithdrawals({ allMerchants: true, ...filter })), { reason: "VALIDATION_ERROR", field }, field);
  }
});

test.serial("on MySQL (utf8mb4_bin) every filter runs and finds the same withdrawals", async (t) => {
  const database = await createTestDatabase();
  const nats = jetStreamTestEnv();
  const mysql = await startInProcess(["merchant", "bank-catalog", "payout"], { clock, env: { ...ENV, DATABASE_URL: database.url, ...nats } });
  try {
    const url = mysql.server.url;
    const shop = await merchant(url);
    const a1 = await withdrawal(url, shop, 12_345n, "Elif Şahin", IBAN_A);
    const b1 = await withdrawal(url, shop, 12_345n, "elif_x", IBAN_B);
    const a2 = await withdrawal(url, shop, 999n, "Elifnur", IBAN_A);
    t.deepEqual(await allIds(url, { merchantId: shop, iban: IBAN_A.toLowerCase(), status: WithdrawalStatus.PENDING }), newestFirst(a1, a2));
    t.deepEqual(await allIds(url, { merchantId: shop, holderName: "Elif" }), newestFirst(a1, a2), "exact case on utf8mb4_bin");
    t.deepEqual(await allIds(url, { merchantId: shop, holderName: "elif_" }), [b1.id]);
    t.deepEqual(await allIds(url, { merchantId: shop, holderName: "elif%" }), []);
    t.deepEqual(await allIds(url, { allMerchants: true, amount: 12_345n, holderName: "e" }, 1), [b1.id]);
    t.deepEqual(await allIds(url, { merchantId: shop, amount: 12_345n }, 1), newestFirst(a1, b1));
  } finally {
    await mysql.stop();
    await database.drop();
    await deleteTestStream(nats);
  }
});
