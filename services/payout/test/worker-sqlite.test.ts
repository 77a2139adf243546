import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalStatus } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, eventually, manualClock, turkishIban } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { createPayoutModule } from "../src/index.js";
import { eventTrail, outboxEventsByWithdrawal, payoutContext, RecordingBank, withdrawalRows } from "./worker-fixtures.js";

// The embedded mode of `pnpm start`: SQLite files and the in-process bus, where a claim is
// exclusive because SQLite has one writer at a time.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "payout-worker-sqlite-"));
const bank = new RecordingBank();
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(
    ["merchant", "bank-catalog", "deposit", createPayoutModule({ sandboxConnector: bank.connector("sqlite", { throws: (i, n) => i.description === "flaky" && n === 1 }) })],
    { clock, env: { DATA_DIR: dir, LOG_LEVEL: "error", MASTER_KEY: "cd".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", PAYOUT_RESEND_AFTER: "1m" } },
  );
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("on SQLite the worker pays, fails and leaves for an operator by the bank's answer, and re-sends a send that threw after PAYOUT_RESEND_AFTER", async (t) => {
  const payouts = createServiceClient(PayoutService, running!.server.url);
  const { merchant } = await createServiceClient(MerchantService, running!.server.url).createMerchant({ name: "Lite Shop", sandbox: true });
  const merchantId = merchant!.id;
  await payouts.adjustBalance({ merchantId, amount: 100_000n, reason: "test funding" });
  const create = async (processId: string, iban: string) =>
    (await payouts.createWithdrawal({ merchantId, processId, amount: 10_000n, iban, accountName: "Ali Can", userId: "u", userName: "ali", name: "Ali Can" })).withdrawal!.id;
  const paid = await create("paid", turkishIban("0001000000000012345678"));
  const refused = await create("refused", "TR560006200000000000000004");
  const undecided = await create("undecided", "TR830006200000000000000003");
  const flaky = await create("flaky", turkishIban("0001000000000012345679"));
  const ctx = payoutContext(running!);

  await eventually(async () => {
    const rows = await withdrawalRows(ctx, [paid, refused, undecided]);
    return rows.every((r) => r.status !== "pending" && (r.status !== "processing" || Boolean(r.awaiting_operator)));
  }, "the bank's answers", 15_000);
  await eventually(() => bank.sendCount(flaky) === 1, "the send that throws", 15_000);
  t.like((await withdrawalRows(ctx, [flaky]))[0], { status: "processing", dispatch_attempts: 1 });

  clock.advance(60_001);
  await eventually(async () => (await withdrawalRows(ctx, [flaky]))[0]?.status === "completed", "the re-send", 15_000);
  const status = async (id: string) => (await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal;
  t.like(await status(paid), { status: WithdrawalStatus.COMPLETED });
  t.like(await status(refused), { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED" });
  t.like(await status(undecided), { status: WithdrawalStatus.PROCESSING });
  t.like(await status(flaky), { status: WithdrawalStatus.COMPLETED });
  t.deepEqual([paid, refused, undecided, flaky].map((id) => bank.sendCount(id)), [1, 1, 1, 2]);
  t.true(Boolean((await withdrawalRows(ctx, [undecided]))[0]?.awaiting_operator));
  const events = await outboxEventsByWithdrawal(ctx);
  t.is(eventTrail(events.get(flaky)).length, 2);
  t.is(eventTrail(events.get(undecided)).length, 1);
  const { balances } = await payouts.getBalances({ merchantId });
  t.like(balances[0], { available: 100_000n - 40_000n + 10_000n, held: 10_000n });
});
