import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createLogger, deriveDatabaseUrl, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { BankConnector } from "../src/bank-connector.js";
import { createPayoutModule } from "../src/index.js";
import { eventTrail, ledgerSums, outboxEventsByWithdrawal, payoutContext, RecordingBank, sleep, withdrawalRows } from "./worker-fixtures.js";

// Crashes and bank errors. The all-in-one process serves the RPCs with its worker off; each
// test starts the payout replicas whose workers it needs. The clock is manual: nothing is
// due for a re-send until a test moves it past PAYOUT_RESEND_AFTER (1 minute).
const RESEND_AFTER_MS = 60_000;
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const common = { GRPC_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", PAYOUT_RESEND_AFTER: "1m", ...nats };
let api: RunningServices | undefined;
let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
const replicas: RunningServices[] = [];
const banks: RecordingBank[] = [];

function newBank(): RecordingBank {
  const bank = new RecordingBank();
  banks.push(bank);
  return bank;
}

test.before(async () => {
  api = await startInProcess(["merchant", "bank-catalog", "deposit", createPayoutModule({ sandboxConnector: new RecordingBank().connector("unused") })], {
    clock,
    env: { ...common, DATABASE_URL: database.url, PAYOUT_WORKER: "false" },
  });
  payouts = createServiceClient(PayoutService, api.server.url);
});

test.after.always(async () => {
  for (const bank of banks) bank.releaseHung(); // else a failed test's stuck worker would hold stop() for a minute
  await Promise.all(replicas.map((r) => r.stop()));
  await api?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

/** A split-mode payout replica with its worker on, in front of `connector`; `logs` collects its log lines. */
async function startWorkerReplica(connector: BankConnector, logs?: LogLine[]): Promise<RunningServices> {
  const logger = logs ? createLogger({ service: "payout", level: "info", destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) } }) : undefined;
  const replica = await startServices([createPayoutModule({ sandboxConnector: connector })], {
    mode: "split",
    clock,
    logger,
    env: { ...TEST_OPERATOR_ENV, ...common, DATABASE_URL: deriveDatabaseUrl(database.url, "payout"), BANK_CATALOG_SERVICE_URL: api!.server.url, MERCHANT_SERVICE_URL: api!.server.url },
  });
  replicas.push(replica);
  return replica;
}

async function stopReplica(replica: RunningServices): Promise<void> {
  await replica.stop();
  replicas.splice(replicas.indexOf(replica), 1);
}

interface LogLine {
  level: string;
  msg: string;
  withdrawalId?: string;
  attempt?: number;
  outcome?: string;
  status?: string;
  err?: { message: string };
}

/** A funded merchant and `count` pending withdrawals of 10 000 kuruş each, through CreateWithdrawal. */
async function pendingWithdrawals(count: number, funds = 1_000_000n): Promise<{ merchantId: string; ids: string[] }> {
  const { merchant } = await createServiceClient(MerchantService, api!.server.url).createMerchant({ name: "Recovery Shop", sandbox: true });
  const merchantId = merchant!.id;
  await payouts.adjustBalance({ merchantId, amount: funds, reason: "test funding" });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { withdrawal } = await payouts.createWithdrawal({
      merchantId,
      processId: `rec-${i}`,
      amount: 10_000n,
      iban: turkishIban("0001000000000012345678"),
      accountName: "Zeynep Kaya",
      userId: "u1",
      userName: "zeynep",
      name: "Zeynep Kaya",
    });
    ids.push(withdrawal!.id);
  }
  return { merchantId, ids };
}

const COMPLETED_ONCE = [
  ["withdrawal_processing", "PENDING", "PROCESSING", 2],
  ["withdrawal_completed", "PROCESSING", "COMPLETED", 3],
];

test.serial("a worker that dies after marking withdrawals processing, before the bank answers: after PAYOUT_RESEND_AFTER another replica sends them again with the same key, each completes once, and the dead worker's late answer changes nothing", async (t) => {
  const bank = newBank();
  const { merchantId, ids } = await pendingWithdrawals(5);
  const ctx = payoutContext(api!);

  // The doomed worker claims them, hands them to the bank, and never hears back.
  const doomedLogs: LogLine[] = [];
  const doomed = await startWorkerReplica(bank.connector("doomed", { hangs: () => true }), doomedLogs);
  await eventually(() => ids.every((id) => bank.sendCount(id) === 1), "the doomed worker's sends", 15_000);
  for (const row of await withdrawalRows(ctx, ids)) t.like(row, { status: "processing", dispatch_attempts: 1, dispatched_at: clock.now().getTime() });
  // Stopped without waiting: it is stuck on the bank, as a crashed process would be.
  const dying = doomed.stop();

  // A survivor leaves them alone while the first send may still be answered…
  const survivor = await startWorkerReplica(bank.connector("survivor"));
  await sleep(300);
  t.true(ids.every((id) => bank.sendCount(id) === 1), "not re-sent before PAYOUT_RESEND_AFTER");
  t.true((await withdrawalRows(ctx, ids)).every((r) => r.status === "processing"));

  // …and sends them again, same key, once they are overdue.
  clock.advance(RESEND_AFTER_MS + 1);
  await eventually(async () => (await withdrawalRows(ctx, ids)).every((r) => r.status === "completed"), "the survivor to complete them", 15_000);
  for (const id of ids) {
    t.deepEqual(
      bank.sends.filter((s) => s.instruction.idempotencyKey === id).map((s) => s.connector),
      ["doomed", "survivor"],
      `${id}: one send from each worker, both with its id as the key`,
    );
  }
  for (const row of await withdrawalRows(ctx, ids)) t.like(row, { status: "completed", dispatch_attempts: 2, sequence: 3, bank_reference: `TEST-${row.id}` });

  // The dead worker's sends finally answer: it records nothing, the withdrawals are already decided.
  t.is(bank.releaseHung(), 5);
  await dying;
  replicas.splice(replicas.indexOf(doomed), 1);
  const events = await outboxEventsByWithdrawal(ctx);
  for (const id of ids) t.deepEqual(eventTrail(events.get(id)), COMPLETED_ONCE, id);
  for (const row of await withdrawalRows(ctx, ids)) t.like(row, { status: "completed", sequence: 3 });
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: 1_000_000 - 50_000, held: 0 });
  const late = doomedLogs.filter((l) => l.msg === "the bank's answer arrived after the withdrawal was decided; nothing changed");
  t.deepEqual(late.map((l) => [l.level, l.withdrawalId, l.outcome, l.status]).sort(), ids.map((id) => ["info", id, "completed", "completed"]).sort());
  const settlements = await ctx.db("ledger_entries").whereIn("transaction_id", ids).where({ kind: "withdrawal_settle" });
  t.is(settlements.length, 5);
  await stopReplica(survivor);
});

test.serial("a send that throws (network error) leaves the withdrawal processing, not waiting for an operator; it is sent again with the same key after PAYOUT_RESEND_AFTER and completes once", async (t) => {
  const bank = newBank();
  const logs: LogLine[] = [];
  const flaky = await startWorkerReplica(bank.connector("flaky", { throws: (_, sendNumber) => sendNumber === 1 }), logs);
  const { merchantId, ids } = await pendingWithdrawals(3);
  const ctx = payoutContext(api!);

  await eventually(() => ids.every((id) => bank.sendCount(id) === 1), "the first, failing sends", 15_000);
  await sleep(300);
  t.true(ids.every((id) => bank.sendCount(id) === 1), "a failed send is not retried at once");
  for (const row of await withdrawalRows(ctx, ids)) {
    t.like(row, { status: "processing", dispatch_attempts: 1, bank_reference: null });
    t.false(Boolean(row.awaiting_operator));
  }
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: 1_000_000 - 30_000, held: 30_000 });

  clock.advance(RESEND_AFTER_MS + 1);
  await eventually(async () => (await withdrawalRows(ctx, ids)).every((r) => r.status === "completed"), "the re-sends to complete them", 15_000);
  for (const id of ids) t.deepEqual(bank.sends.filter((s) => s.instruction.idempotencyKey === id).length, 2, id);
  for (const row of await withdrawalRows(ctx, ids)) t.like(row, { dispatch_attempts: 2, bank_reference: `TEST-${row.id}` });
  const events = await outboxEventsByWithdrawal(ctx);
  for (const id of ids) t.deepEqual(eventTrail(events.get(id)), COMPLETED_ONCE, id);
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: 1_000_000 - 30_000, held: 0 });
  // What an operator sees: each send, the failure as a warning, then the outcome of the re-send.
  for (const id of ids) {
    const trail = logs.filter((l) => l.withdrawalId === id).map((l) => [l.level, l.attempt, l.msg.split(";")[0]]);
    t.deepEqual(trail, [
      ["info", 1, "sending withdrawal to the bank"],
      ["warn", 1, "bank send failed"],
      ["info", 2, "sending withdrawal to the bank"],
      ["info", 2, "withdrawal completed"],
    ]);
  }
  t.regex(logs.find((l) => l.level === "warn")!.err!.message, /ECONNRESET/);
  await stopReplica(flaky);
});

test.serial("stop() claims nothing more and returns once every claimed withdrawal's answer is recorded", async (t) => {
  const bank = newBank();
  const slow = await startWorkerReplica(bank.connector("slow", { delayMs: () => 300 }));
  const { ids } = await pendingWithdrawals(4);
  const ctx = payoutContext(api!);
  await eventually(() => ids.every((id) => bank.sendCount(id) === 1), "the sends to start", 15_000);

  await stopReplica(slow);
  for (const row of await withdrawalRows(ctx, ids)) t.like(row, { status: "completed", dispatch_attempts: 1 });
  const { ids: later } = await pendingWithdrawals(1);
  await sleep(300);
  t.like((await withdrawalRows(ctx, later))[0], { status: "pending", dispatch_attempts: 0 });
  t.is(bank.sendCount(later[0]!), 0);
});
