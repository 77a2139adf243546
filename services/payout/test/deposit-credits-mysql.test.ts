import test, { type ExecutionContext } from "ava";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, errorInfo, newId, openDatabase, type RunningServices } from "@payments/kit";
import { bankIban, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { Knex } from "knex";
import type { PayoutContext } from "../src/context.js";
import { creditDeposits, DEPOSIT_COMPLETED_TOPIC, type CreditOutcome } from "../src/deposit-credits.js";
import type { WithheldCreditRow } from "../src/withheld-credits.js";
import { payoutContext, sleep, transactionsRunning } from "./worker-fixtures.js";

// Deposit credits in batches (creditDeposits, and the consumer that hands it what arrived while
// the previous batch was credited) on MariaDB and JetStream: the merchant service (GetMerchant,
// the sandbox check) and the payout service in one process, worker off. A second "replica" is a
// second connection pool on the same payout database, crediting at the same time. Each test uses
// merchants of its own.
const clock = manualClock(new Date("2026-11-29T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let running: RunningServices | undefined;
let replicaDb: Knex | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "payout"], {
    clock,
    env: { LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER: "0", DATABASE_URL: database.url, ...nats },
  });
  // Opened as the payout service opens its own (REPEATABLE READ sessions).
  replicaDb = openDatabase({ url: deriveDatabaseUrl(database.url, "payout") });
});

test.after.always(async () => {
  await replicaDb?.destroy();
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const payout = (): PayoutContext => payoutContext(running!);
/** Another payout replica: its own connections to the same database. */
const replica = (): PayoutContext => ({ ...payout(), db: replicaDb! });
const payouts = () => createServiceClient(PayoutService, running!.server.url, { timeoutMs: 60_000 });
const merchants = () => createServiceClient(MerchantService, running!.server.url);

async function newMerchant(): Promise<string> {
  return (await merchants().createMerchant({ name: "Batch Credit Shop", sandbox: true })).merchant!.id;
}

/** A live merchant as the payout service would see one whose sandbox deposit raced its switch (SetSandbox refuses a merchant with deposits). */
async function liveMerchant(): Promise<string> {
  const id = await newMerchant();
  await running!.contexts.get("merchant")!.db("merchants").where({ id }).update({ sandbox: false });
  return id;
}

interface TestDeposit {
  id: string;
  merchantId: string;
  amount: number;
  currency: string;
  data: Uint8Array;
}

/** A completed deposit's event, as the deposit service publishes it. */
function completed(merchantId: string, amount: number, options: { sandbox?: boolean; currency?: string } = {}): TestDeposit {
  const id = newId("dep");
  const currency = options.currency ?? "TRY";
  const event = create(DepositStatusChangedSchema, {
    eventId: newId("evt"),
    deposit: {
      id,
      merchantId,
      processId: `order-${id.slice(-6)}`,
      amount: BigInt(amount),
      requestedAmount: BigInt(amount),
      currency,
      status: DepositStatus.COMPLETED,
      sequence: 2n,
      sandbox: options.sandbox ?? true,
    },
    previousStatus: DepositStatus.PENDING,
    occurredAt: timestampFromMs(clock.now().getTime()),
  });
  return { id, merchantId, amount, currency, data: toBinary(DepositStatusChangedSchema, event) };
}

/** The context with a GetMerchant that counts who was asked and how many asks were in flight at once. */
function countingAsks(ctx: PayoutContext): { ctx: PayoutContext; asked: string[]; mostAtOnce: () => number } {
  const asked: string[] = [];
  let inFlight = 0;
  let most = 0;
  const real = ctx.merchants;
  const counted: PayoutContext["merchants"] = {
    ...real,
    getMerchant: async (request, options) => {
      asked.push(request.merchantId ?? "");
      inFlight += 1;
      most = Math.max(most, inFlight);
      try {
        await sleep(20);
        return await real.getMerchant(request, options);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return { ctx: { ...ctx, merchants: counted }, asked, mostAtOnce: () => most };
}

/** Counts, from now on, the transactions of `db` that inserted ledger entries, and those insert statements. */
function ledgerWrites(db: Knex): { transactions: () => number; inserts: () => number; stop: () => void } {
  const statement = /^insert into `ledger_entries`/i;
  const transactions = transactionsRunning(db, statement);
  let inserts = 0;
  const listener = (query: { sql?: string }) => {
    if (statement.test(query.sql ?? "")) inserts += 1;
  };
  db.on("query", listener);
  return {
    transactions: transactions.count,
    inserts: () => inserts,
    stop: () => {
      transactions.stop();
      db.removeListener("query", listener);
    },
  };
}

const credits = async (depositId: string) => (await payout().db("ledger_entries").where({ kind: "deposit_credit", transaction_id: depositId })) as Array<{ available_delta: number; process_id: string | null }>;
const records = async (depositId: string) => (await payout().db("withheld_credits").where({ deposit_id: depositId })) as WithheldCreditRow[];

async function balance(merchantId: string, currency = "TRY"): Promise<{ available: number; held: number }> {
  const row = (await payout().db("balances").where({ merchant_id: merchantId, currency }).first()) as { available: number | string; held: number | string } | undefined;
  return { available: Number(row?.available ?? 0), held: Number(row?.held ?? 0) };
}

/** The balance row is the sum of its entries, and neither part is negative. */
async function assertBalanceIsLedger(t: ExecutionContext, merchantId: string, currency = "TRY"): Promise<void> {
  const sums = (await payout()
    .db("ledger_entries")
    .where({ merchant_id: merchantId, currency })
    .sum({ available: "available_delta", held: "held_delta" })
    .first()) as { available: number | string | null; held: number | string | null };
  const row = await balance(merchantId, currency);
  t.deepEqual(row, { available: Number(sums.available ?? 0), held: Number(sums.held ?? 0) }, `${merchantId} ${currency}: the balance is its ledger`);
  t.true(row.available >= 0 && row.held >= 0, `${merchantId} ${currency}: never negative (${row.available}, ${row.held})`);
}

test.serial("a batch with the same deposit twice credits it once, all in one transaction with one insert of the entries; the batch again credits nothing", async (t) => {
  const merchantId = await newMerchant();
  const [a, b, c] = [completed(merchantId, 1_000), completed(merchantId, 2_000), completed(merchantId, 3_000)];
  const writes = ledgerWrites(payout().db);
  const outcomes = await creditDeposits(payout(), [a, b, a, c, b]);
  writes.stop();
  t.deepEqual(outcomes, ["credited", "credited", "already", "credited", "already"]);
  t.is(writes.transactions(), 1, "one transaction for the batch");
  t.is(writes.inserts(), 1, "one multi-row insert of the entries");
  for (const d of [a, b, c]) {
    const posted = await credits(d.id);
    t.is(posted.length, 1, d.id);
    t.is(Number(posted[0]!.available_delta), d.amount);
    t.is(posted[0]!.process_id, `order-${d.id.slice(-6)}`, "the process id is kept with the credit, for statements");
  }
  t.deepEqual(await balance(merchantId), { available: 6_000, held: 0 });

  // Delivered again (a redelivery after a lost ack): nothing changes.
  t.deepEqual(await creditDeposits(payout(), [c, a, b]), ["already", "already", "already"]);
  t.deepEqual(await balance(merchantId), { available: 6_000, held: 0 });
  await assertBalanceIsLedger(t, merchantId);
});

test.serial("two replicas crediting overlapping batches at once credit each deposit exactly once, across merchants and currencies", async (t) => {
  const merchantIds = [await newMerchant(), await newMerchant(), await newMerchant()];
  for (let round = 0; round < 4; round++) {
    const deposits = Array.from({ length: 60 }, (_, i) => completed(merchantIds[i % 3]!, 100 + i, { currency: i % 4 === 0 ? "EUR" : "TRY" }));
    // The same deposits on both replicas, in batches of 10 cut differently and in opposite orders.
    const forward = Array.from({ length: 6 }, (_, i) => deposits.slice(i * 10, i * 10 + 10));
    const backward = [...deposits].reverse();
    const shifted = Array.from({ length: 7 }, (_, i) => backward.slice(Math.max(0, i * 10 - 5), i * 10 + 5)).filter((batch) => batch.length > 0);
    const calls: Array<Promise<{ batch: TestDeposit[]; outcomes: CreditOutcome[] }>> = [];
    for (let i = 0; i < Math.max(forward.length, shifted.length); i++) {
      const mine = forward[i];
      const theirs = shifted[i];
      if (mine) calls.push(creditDeposits(payout(), mine).then((outcomes) => ({ batch: mine, outcomes })));
      if (theirs) calls.push(creditDeposits(replica(), theirs).then((outcomes) => ({ batch: theirs, outcomes })));
    }
    const results = await Promise.all(calls);
    const creditedBy = new Map<string, number>();
    for (const { batch, outcomes } of results) {
      batch.forEach((d, i) => {
        if (outcomes[i] === "credited") creditedBy.set(d.id, (creditedBy.get(d.id) ?? 0) + 1);
        else t.is(outcomes[i], "already", d.id);
      });
    }
    const twice = deposits.filter((d) => creditedBy.get(d.id) !== 1).map((d) => `${d.id}: ${creditedBy.get(d.id) ?? 0}`);
    t.deepEqual(twice, [], `round ${round}: every deposit answered "credited" by exactly one batch`);
    const entries = await payout()
      .db("ledger_entries")
      .where({ kind: "deposit_credit" })
      .whereIn(
        "transaction_id",
        deposits.map((d) => d.id),
      )
      .select<Array<{ transaction_id: string }>>("transaction_id");
    t.is(entries.length, deposits.length, `round ${round}: one entry per deposit`);
  }
  for (const merchantId of merchantIds) {
    for (const currency of ["TRY", "EUR"]) await assertBalanceIsLedger(t, merchantId, currency);
  }
  // Every deposit's amount, once: 4 rounds of 60 deposits of 100…159.
  const total = async (merchantId: string) => (await balance(merchantId, "TRY")).available + (await balance(merchantId, "EUR")).available;
  const all = (await Promise.all(merchantIds.map(total))).reduce((a, b) => a + b, 0);
  t.is(all, 4 * Array.from({ length: 60 }, (_, i) => 100 + i).reduce((a, b) => a + b, 0));
});

test.serial("a batch with one sandbox deposit of a live merchant withholds just that one and credits the rest, asking the merchant service once per sandbox merchant, all at once", async (t) => {
  const sandboxShop = await newMerchant();
  const otherSandboxShop = await newMerchant();
  const liveShop = await liveMerchant();
  const batch = [
    completed(sandboxShop, 1_000),
    completed(sandboxShop, 2_000),
    completed(liveShop, 5_000, { sandbox: false }),
    completed(liveShop, 700), // sandbox money for a live merchant: the one to withhold
    completed(sandboxShop, 3_000),
    completed(otherSandboxShop, 500),
  ];
  const { ctx, asked, mostAtOnce } = countingAsks(payout());
  const outcomes = await creditDeposits(ctx, batch);
  t.deepEqual(outcomes, ["credited", "credited", "credited", "refused", "credited", "credited"]);
  t.deepEqual([...asked].sort(), [liveShop, otherSandboxShop, sandboxShop].sort(), "one GetMerchant per merchant with a sandbox deposit in the batch");
  t.is(mostAtOnce(), 3, "asked in parallel, not one after the other");

  const withheld = batch[3]!;
  const [record, ...more] = await records(withheld.id);
  t.deepEqual(more, []);
  t.like(record, { merchant_id: liveShop, status: "open", reason: "sandbox deposit of a live merchant", currency: "TRY", process_id: `order-${withheld.id.slice(-6)}` });
  t.is(Number(record!.amount), 700);
  t.deepEqual(await credits(withheld.id), []);
  for (const d of batch.filter((d) => d !== withheld)) t.is((await credits(d.id)).length, 1, d.id);
  t.deepEqual(await balance(liveShop), { available: 5_000, held: 0 });
  t.deepEqual(await balance(sandboxShop), { available: 6_000, held: 0 });
  t.deepEqual(await balance(otherSandboxShop), { available: 500, held: 0 });
  t.is((await payout().db("withheld_credits").whereIn("merchant_id", [sandboxShop, otherSandboxShop, liveShop])).length, 1, "no record for the credited ones");

  // Again, and then the withheld one alone after its merchant counts as sandbox again: still withheld, nothing credited twice.
  t.deepEqual(await creditDeposits(payout(), batch), ["already", "already", "already", "refused", "already", "already"]);
  await running!.contexts.get("merchant")!.db("merchants").where({ id: liveShop }).update({ sandbox: true });
  // A change made by hand in the database publishes nothing: the credit check sees it once the
  // cached answer goes (MERCHANT_CACHE_TTL; dropped here rather than waited for).
  payout().merchantCache.invalidate(liveShop);
  t.deepEqual(await creditDeposits(payout(), [withheld, completed(liveShop, 50)]), ["refused", "credited"]);
  t.is((await records(withheld.id)).length, 1);
  t.deepEqual(await credits(withheld.id), []);
  for (const merchantId of [sandboxShop, otherSandboxShop, liveShop]) await assertBalanceIsLedger(t, merchantId);
});

test.serial("batch credits racing withdrawals on the same merchant keep its balance equal to its ledger and never below zero; every refused withdrawal is INSUFFICIENT_BALANCE", async (t) => {
  const merchantId = await newMerchant();
  await payouts().adjustBalance({ merchantId, amount: 1_000n, reason: "opening funds" });
  let watching = true as boolean;
  let lowest = Number.POSITIVE_INFINITY;
  const watcher = (async () => {
    while (watching) {
      const row = await balance(merchantId);
      lowest = Math.min(lowest, row.available, row.held);
      await sleep(2);
    }
  })();

  const deposits = Array.from({ length: 50 }, () => completed(merchantId, 100, { sandbox: false }));
  const batches = Array.from({ length: 10 }, (_, i) => deposits.slice(i * 5, i * 5 + 5));
  let sequence = 0;
  const withdraw = () =>
    payouts().createWithdrawal({
      merchantId,
      processId: `race-${++sequence}`,
      amount: 100n,
      accountName: "Ayşe Yılmaz",
      iban: bankIban("00062", 7000 + sequence),
      userId: "u1",
      userName: "ayse",
      name: "Ayşe Yılmaz",
    });
  const [creditResults, withdrawals] = await Promise.all([
    Promise.all(batches.map((batch, i) => creditDeposits(i % 2 === 0 ? payout() : replica(), batch))),
    Promise.allSettled(Array.from({ length: 80 }, withdraw)),
  ]);
  watching = false;
  await watcher;

  t.deepEqual(creditResults.flat(), deposits.map(() => "credited"));
  const made = withdrawals.filter((w) => w.status === "fulfilled").length;
  for (const w of withdrawals) if (w.status === "rejected") t.like(errorInfo(w.reason), { reason: "INSUFFICIENT_BALANCE" });
  t.true(made >= 10 && made <= 60, `${made} withdrawals made`);
  t.deepEqual(await balance(merchantId), { available: 1_000 + 5_000 - 100 * made, held: 100 * made });
  t.true(lowest >= 0, `lowest seen: ${lowest}`);
  await assertBalanceIsLedger(t, merchantId);
});

test.serial("through the JetStream consumer, events that arrive while a batch is being credited go in the next batch: 30 deposits, each credited once, in far fewer transactions than events", async (t) => {
  const merchantId = await newMerchant();
  const deposits = Array.from({ length: 30 }, (_, i) => completed(merchantId, 10 + i, { sandbox: false }));
  const writes = ledgerWrites(payout().db);
  // Hold the merchant's balance row, so the consumer's first batch waits on it while the rest arrive.
  const holder = await payout().db.transaction();
  try {
    await holder("balances").insert({ merchant_id: merchantId, currency: "TRY", available: 0, held: 0, updated_at: 0 }).onConflict(["merchant_id", "currency"]).merge(["updated_at"]);
    await payout().bus.publish(DEPOSIT_COMPLETED_TOPIC, deposits[0]!.data, newId("msg"));
    await sleep(300);
    for (const d of deposits.slice(1)) await payout().bus.publish(DEPOSIT_COMPLETED_TOPIC, d.data, newId("msg"));
    await sleep(500);
  } finally {
    await holder.commit();
  }
  await eventually(async () => (await balance(merchantId)).available === deposits.reduce((sum, d) => sum + d.amount, 0), "every deposit credited", 15_000);
  writes.stop();
  for (const d of deposits) t.is((await credits(d.id)).length, 1, d.id);
  t.log(`${deposits.length} events credited in ${writes.transactions()} transactions`);
  t.true(writes.transactions() <= 3, `${writes.transactions()} transactions`);
  await assertBalanceIsLedger(t, merchantId);
});
