import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { deriveDatabaseUrl, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { balanceRow } from "../src/ledger.js";
import { createPayoutModule } from "../src/index.js";
import { eventTrail, insertPendingWithdrawals, ledgerSums, outboxEventsByWithdrawal, payoutContext, RecordingBank, withdrawalRows } from "./worker-fixtures.js";

// Two payout replicas on one MySQL database (the all-in-one process and a split-mode
// payout service), each running the worker every 50 ms against the same recording bank.
// The clock is manual and never moves here, so no withdrawal is ever due for a re-send:
// whatever the bank sees twice was claimed twice.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const bank = new RecordingBank();
let first: RunningServices | undefined;
let second: RunningServices | undefined;

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", ...nats };
  const delayMs = () => Math.floor(Math.random() * 4);
  first = await startInProcess(["merchant", "bank-catalog", "deposit", createPayoutModule({ sandboxConnector: bank.connector("first", { delayMs }) })], {
    clock,
    env: { ...common, DATABASE_URL: database.url },
  });
  second = await startServices([createPayoutModule({ sandboxConnector: bank.connector("second", { delayMs }) })], {
    mode: "split",
    clock,
    env: { ...TEST_OPERATOR_ENV, ...common, DATABASE_URL: deriveDatabaseUrl(database.url, "payout"), BANK_CATALOG_SERVICE_URL: first.server.url, MERCHANT_SERVICE_URL: first.server.url },
  });
});

test.after.always(async () => {
  await second?.stop();
  await first?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

test("two replicas' workers pay 500 pending withdrawals: each sent to the bank exactly once, completed with one processing and one completed event, held back to 0 and available down by the total", async (t) => {
  const ctx = payoutContext(first!);
  const payouts = createServiceClient(PayoutService, first!.server.url);
  const { merchant } = await createServiceClient(MerchantService, first!.server.url).createMerchant({ name: "Payout Shop", sandbox: true });
  const merchantId = merchant!.id;
  const amounts = Array.from({ length: 500 }, (_, i) => 1_000 + i);
  const total = amounts.reduce((a, b) => a + b, 0);
  const spare = 12_345;
  await payouts.adjustBalance({ merchantId, amount: BigInt(total + spare), reason: "test funding" });

  // In ten commits, so the workers are already claiming while later ones arrive.
  const iban = turkishIban("0001000000000012345678");
  const rows = [];
  for (let i = 0; i < amounts.length; i += 50) rows.push(...(await insertPendingWithdrawals(ctx, merchantId, amounts.slice(i, i + 50), iban)));
  const ids = rows.map((r) => r.id);

  await eventually(async () => (await ctx.db("withdrawals").where({ merchant_id: merchantId, status: "completed" }).count({ n: "*" }).first())?.n === 500, "500 completed withdrawals", 20_000);

  // The bank: every key exactly once, with the withdrawal's own details; both replicas worked.
  t.is(bank.sends.length, 500);
  t.deepEqual(bank.sends.map((s) => s.instruction.idempotencyKey).sort(), [...ids].sort());
  for (const row of rows) {
    const sent = bank.sends.find((s) => s.instruction.idempotencyKey === row.id)!.instruction;
    if (sent.amount !== row.amount || sent.iban !== iban || sent.description !== row.process_id || sent.accountName !== row.account_name || sent.currency !== "TRY") {
      t.fail(`the instruction for ${row.id} does not match the withdrawal: ${JSON.stringify(sent)}`);
    }
  }
  t.true(bank.sendsBy("first").length > 0 && bank.sendsBy("second").length > 0, `first sent ${bank.sendsBy("first").length}, second ${bank.sendsBy("second").length}`);

  // The rows: completed once, by the first send, with the bank's reference.
  for (const row of await withdrawalRows(ctx, ids)) {
    t.like(row, { status: "completed", dispatch_attempts: 1, sequence: 3, bank_reference: `TEST-${row.id}`, failure_reason: null });
    t.truthy(row.completed_at);
  }

  // The outbox: exactly one processing and one completed event per withdrawal, in order.
  const events = await outboxEventsByWithdrawal(ctx);
  const expected = [
    ["withdrawal_processing", "PENDING", "PROCESSING", 2],
    ["withdrawal_completed", "PROCESSING", "COMPLETED", 3],
  ];
  const wrong = ids.filter((id) => JSON.stringify(eventTrail(events.get(id))) !== JSON.stringify(expected));
  t.deepEqual(wrong, [], `withdrawals with other events than one processing and one completed, e.g. ${JSON.stringify(eventTrail(events.get(wrong[0] ?? "")))}`);

  // The money: held back to 0, available down by the total, and the balance is the ledger's sum.
  const balance = await balanceRow(ctx.db, merchantId, "TRY");
  t.like(balance, { available: spare, held: 0 });
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: spare, held: 0 });
  const kinds = await ctx.db("ledger_entries").where({ merchant_id: merchantId }).select("kind").count({ n: "*" }).groupBy<Array<{ kind: string; n: number }>>("kind");
  t.deepEqual(Object.fromEntries(kinds.map((k) => [k.kind, Number(k.n)])), { adjustment: 1, withdrawal_hold: 500, withdrawal_settle: 500 });
  const { balances } = await payouts.getBalances({ merchantId });
  t.like(balances[0], { currency: "TRY", available: BigInt(spare), held: 0n });
});
