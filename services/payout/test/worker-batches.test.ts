import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, errorInfo, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { BankConnector, PayoutInstruction, PayoutResult } from "../src/bank-connector.js";
import { createPayoutModule } from "../src/index.js";
import { moveWithdrawal } from "../src/withdrawal-moves.js";
import { claimPendingWithdrawals, createAnswerRecorder, SEND_CONCURRENCY } from "../src/worker.js";
import { eventTrail, insertPendingWithdrawals, ledgerSums, outboxEventsByWithdrawal, payoutContext, sleep, transactionsRunning, withdrawalRows } from "./worker-fixtures.js";

// The payout worker in batches, on MySQL: the all-in-one process serves the RPCs with its worker
// off; each test starts the worker replica it needs, in front of a bank of its own that counts
// every send and how many were in flight at once. The clock never moves: nothing is re-sent.
const clock = manualClock(new Date("2026-11-29T12:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const common = { GRPC_PORT: "0", LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", PAYOUT_RESEND_AFTER: "1m", ...nats };
let api: RunningServices | undefined;
const replicas: RunningServices[] = [];

test.before(async () => {
  api = await startInProcess(["merchant", "bank-catalog", "payout"], { clock, env: { ...common, DATABASE_URL: database.url, PAYOUT_WORKER: "false" } });
});

test.after.always(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await api?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const payouts = () => createServiceClient(PayoutService, api!.server.url);

async function fundedMerchant(amount: number): Promise<string> {
  const { merchant } = await createServiceClient(MerchantService, api!.server.url).createMerchant({ name: "Batch Payout Shop", sandbox: true });
  await payouts().adjustBalance({ merchantId: merchant!.id, amount: BigInt(amount), reason: "test funding" });
  return merchant!.id;
}

/** A bank that answers after `delayMs` (or when let go), by the answers set per key (default completed), counting sends. */
class CountingBank {
  readonly sends = new Map<string, number>();
  readonly answers = new Map<string, PayoutResult>();
  private inFlight = 0;
  mostAtOnce = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  constructor(private readonly delayMs: number) {}

  /** Sends wait until `letGo()`. */
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  letGo(): void {
    this.open?.();
    this.gate = undefined;
  }

  connector(): BankConnector {
    return {
      name: "counting",
      send: async (instruction: PayoutInstruction) => {
        const key = instruction.idempotencyKey;
        this.sends.set(key, (this.sends.get(key) ?? 0) + 1);
        this.inFlight += 1;
        this.mostAtOnce = Math.max(this.mostAtOnce, this.inFlight);
        try {
          await sleep(this.delayMs);
          await this.gate;
          return this.answers.get(key) ?? { outcome: "completed", bankReference: `BANK-${key}` };
        } finally {
          this.inFlight -= 1;
        }
      },
    };
  }
}

async function startWorker(bank: CountingBank, env: Record<string, string> = {}): Promise<RunningServices> {
  const replica = await startServices([createPayoutModule({ sandboxConnector: bank.connector() })], {
    mode: "split",
    clock,
    env: { ...TEST_OPERATOR_ENV, ...common, ...env, DATABASE_URL: deriveDatabaseUrl(database.url, "payout"), BANK_CATALOG_SERVICE_URL: api!.server.url, MERCHANT_SERVICE_URL: api!.server.url },
  });
  replicas.push(replica);
  return replica;
}

async function stopWorker(replica: RunningServices): Promise<void> {
  await replica.stop();
  replicas.splice(replicas.indexOf(replica), 1);
}

test.serial("the worker moves 30 withdrawals in far fewer transactions than 30: one claim for all, the bank's answers recorded together; each sent to the bank exactly once, SEND_CONCURRENCY at a time", async (t) => {
  const bank = new CountingBank(40);
  const worker = await startWorker(bank, { PAYOUT_WORKER_BATCH: "30" });
  const ctx = payoutContext(worker);
  const writes = transactionsRunning(ctx.db, /^update `withdrawals`/i);

  const merchantId = await fundedMerchant(1_000_000);
  const amounts = Array.from({ length: 30 }, (_, i) => 1_000 + i);
  // One commit, so one claim can take them all.
  const rows = await insertPendingWithdrawals(payoutContext(api!), merchantId, amounts, turkishIban("0001000000000012345678"));
  const ids = rows.map((r) => r.id);
  const failed = new Set(ids.slice(0, 4));
  const accepted = new Set(ids.slice(4, 7));
  for (const id of failed) bank.answers.set(id, { outcome: "failed", reason: "ACCOUNT_CLOSED", bankReference: `BANK-${id}` });
  for (const id of accepted) bank.answers.set(id, { outcome: "accepted", bankReference: `BANK-${id}` });

  await eventually(async () => (await withdrawalRows(ctx, ids)).every((r) => r.status !== "pending" && (r.status !== "processing" || Boolean(r.awaiting_operator))), "every answer recorded", 15_000);
  writes.stop();
  await stopWorker(worker);
  const readCtx = payoutContext(api!);

  t.deepEqual([...bank.sends.keys()].sort(), [...ids].sort(), "every withdrawal sent");
  t.deepEqual([...bank.sends.values()].filter((n) => n !== 1), [], "each exactly once");
  t.is(bank.mostAtOnce, SEND_CONCURRENCY, "sends run concurrently, SEND_CONCURRENCY at a time");
  t.log(`30 withdrawals moved in ${writes.count()} transactions`);
  t.true(writes.count() <= 12, `${writes.count()} transactions changed withdrawals`);

  const byId = new Map((await withdrawalRows(readCtx, ids)).map((r) => [r.id, r]));
  const events = await outboxEventsByWithdrawal(readCtx);
  const processing = ["withdrawal_processing", "PENDING", "PROCESSING", 2];
  for (const id of ids) {
    const row = byId.get(id)!;
    t.like(row, { dispatch_attempts: 1, bank_reference: `BANK-${id}` }, id);
    if (failed.has(id)) {
      t.like(row, { status: "failed", failure_reason: "ACCOUNT_CLOSED", sequence: 3 }, id);
      t.deepEqual(eventTrail(events.get(id)), [processing, ["withdrawal_failed", "PROCESSING", "FAILED", 3]], id);
    } else if (accepted.has(id)) {
      t.like(row, { status: "processing", sequence: 2 }, id);
      t.true(Boolean(row.awaiting_operator), id);
      t.deepEqual(eventTrail(events.get(id)), [processing], id);
    } else {
      t.like(row, { status: "completed", sequence: 3, failure_reason: null }, id);
      t.truthy(row.completed_at);
      t.deepEqual(eventTrail(events.get(id)), [processing, ["withdrawal_completed", "PROCESSING", "COMPLETED", 3]], id);
    }
  }
  // The money: the completed paid out, the failed back to available, the accepted still held.
  const amountOf = (id: string) => amounts[ids.indexOf(id)]!;
  const sum = (list: string[]) => list.reduce((total, id) => total + amountOf(id), 0);
  const completedIds = ids.filter((id) => !failed.has(id) && !accepted.has(id));
  const held = sum([...accepted]);
  t.deepEqual(await ledgerSums(readCtx, merchantId), { available: 1_000_000 - sum(completedIds) - held, held });
  const balance = (await readCtx.db("balances").where({ merchant_id: merchantId, currency: "TRY" }).first()) as { available: number; held: number };
  t.deepEqual({ available: Number(balance.available), held: Number(balance.held) }, await ledgerSums(readCtx, merchantId));
  const kinds = await readCtx.db("ledger_entries").whereIn("transaction_id", ids).select("kind").count({ n: "*" }).groupBy<Array<{ kind: string; n: number }>>("kind");
  t.deepEqual(Object.fromEntries(kinds.map((k) => [k.kind, Number(k.n)])), { withdrawal_hold: 30, withdrawal_settle: completedIds.length, withdrawal_release: failed.size });
});

test.serial("a withdrawal decided elsewhere while a batch's sends are out: its answer changes nothing, the rest of its batch is recorded", async (t) => {
  const bank = new CountingBank(0);
  bank.hold();
  const worker = await startWorker(bank);
  const ctx = payoutContext(worker);
  const merchantId = await fundedMerchant(100_000);
  const rows = await insertPendingWithdrawals(payoutContext(api!), merchantId, [1_000, 2_000, 3_000, 4_000, 5_000]);
  const ids = rows.map((r) => r.id);
  await eventually(() => ids.every((id) => bank.sends.get(id) === 1), "every send out", 15_000);

  // Decided elsewhere meanwhile (a re-send's answer on another replica, an operator once the bank had answered).
  const decided = ids[2]!;
  await payoutContext(api!).db.transaction((trx) => moveWithdrawal(trx, clock, { withdrawalId: decided, move: "fail", failureReason: "OPERATOR_STOPPED" }));
  bank.letGo();
  await eventually(async () => (await withdrawalRows(ctx, ids)).every((r) => r.status !== "processing"), "every answer recorded", 15_000);
  await stopWorker(worker);
  const readCtx = payoutContext(api!);

  const byId = new Map((await withdrawalRows(readCtx, ids)).map((r) => [r.id, r]));
  t.like(byId.get(decided), { status: "failed", failure_reason: "OPERATOR_STOPPED", sequence: 3, bank_reference: null });
  for (const id of ids.filter((id) => id !== decided)) t.like(byId.get(id), { status: "completed", sequence: 3, bank_reference: `BANK-${id}` }, id);
  const events = await outboxEventsByWithdrawal(readCtx);
  t.deepEqual(eventTrail(events.get(decided)), [
    ["withdrawal_processing", "PENDING", "PROCESSING", 2],
    ["withdrawal_failed", "PROCESSING", "FAILED", 3],
  ]);
  t.deepEqual(await ledgerSums(readCtx, merchantId), { available: 100_000 - (15_000 - 3_000), held: 0 });
});

test.serial("a batch of answers that cannot be recorded as one is recorded one answer at a time: one that fails holds back only itself", async (t) => {
  const ctx = payoutContext(api!);
  const merchantId = await fundedMerchant(10_000);
  await insertPendingWithdrawals(ctx, merchantId, [100, 200, 300]);
  const claimed = await claimPendingWithdrawals(ctx, 3);
  t.is(claimed.length, 3);
  const record = createAnswerRecorder(ctx);
  const answers = await Promise.allSettled([
    ...claimed.map((row) => record(row.id, { outcome: "completed", bankReference: `REF-${row.id}` })),
    record("wdr_doesnotexist", { outcome: "completed" }),
  ]);
  t.deepEqual(
    answers.slice(0, 3).map((a) => (a.status === "fulfilled" ? a.value : errorInfo(a.reason).message)),
    ["completed", "completed", "completed"],
  );
  const lost = answers[3]!;
  t.is(lost.status, "rejected");
  if (lost.status === "rejected") t.is(errorInfo(lost.reason).reason, "TRANSACTION_NOT_FOUND");
  for (const row of await withdrawalRows(
    ctx,
    claimed.map((r) => r.id),
  )) {
    t.like(row, { status: "completed", bank_reference: `REF-${row.id}` });
  }
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: 10_000 - 600, held: 0 });
});
