import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalStatus } from "@payments/contracts/payout";
import { deriveDatabaseUrl, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, turkishIban, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { createPayoutModule, createSandboxConnector } from "../src/index.js";
import { eventTrail, ledgerSums, outboxEventsByWithdrawal, payoutContext, sleep, withdrawalRows } from "./worker-fixtures.js";

// The real sandbox connector (10 ms delay) behind two payout replicas on MySQL, and
// withdrawals made through the PayoutService RPCs, as the gateway and operators make them.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let first: RunningServices | undefined;
let second: RunningServices | undefined;
let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

const SANDBOX = {
  notFound: "TR400006200000000000000001",
  nameMismatch: "TR130006200000000000000002",
  undecided: "TR830006200000000000000003",
  closed: "TR560006200000000000000004",
};

test.before(async () => {
  const common = { GRPC_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", PAYOUT_RESEND_AFTER: "1m", ...nats };
  first = await startInProcess(["merchant", "bank-catalog", "deposit", createPayoutModule({ sandboxConnector: createSandboxConnector({ delayMs: 10 }) })], {
    clock,
    env: { ...common, DATABASE_URL: database.url },
  });
  second = await startServices([createPayoutModule({ sandboxConnector: createSandboxConnector({ delayMs: 10 }) })], {
    mode: "split",
    clock,
    env: { ...TEST_OPERATOR_ENV, ...common, DATABASE_URL: deriveDatabaseUrl(database.url, "payout"), BANK_CATALOG_SERVICE_URL: first.server.url, MERCHANT_SERVICE_URL: first.server.url },
  });
  payouts = createServiceClient(PayoutService, first.server.url);
  merchants = createServiceClient(MerchantService, first.server.url);
});

test.after.always(async () => {
  await second?.stop();
  await first?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

let sequence = 0;
async function fundedMerchant(amount: bigint): Promise<string> {
  const { merchant } = await merchants.createMerchant({ name: "Sandbox Shop", sandbox: true });
  await payouts.adjustBalance({ merchantId: merchant!.id, amount, reason: "test funding" });
  return merchant!.id;
}

async function withdraw(merchantId: string, iban: string, amount: bigint): Promise<string> {
  const { withdrawal } = await payouts.createWithdrawal({
    merchantId,
    processId: `wd-${++sequence}`,
    amount,
    iban,
    accountName: "Mehmet Demir",
    userId: "user-7",
    userName: "mehmet",
    name: "Mehmet Demir",
  });
  return withdrawal!.id;
}

async function withdrawal(id: string) {
  return (await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal!;
}

async function balance(merchantId: string) {
  const { balances } = await payouts.getBalances({ merchantId });
  const tr = balances.find((b) => b.currency === "TRY")!;
  return { available: tr.available, held: tr.held };
}

const PROCESSING: [string, string, string, number] = ["withdrawal_processing", "PENDING", "PROCESSING", 2];

test.serial("each sandbox test IBAN gets its documented outcome: 0001 ACCOUNT_NOT_FOUND, 0002 NAME_MISMATCH, 0004 ACCOUNT_CLOSED (held returned), 0003 processing for an operator, any other valid TR IBAN completed", async (t) => {
  const merchantId = await fundedMerchant(1_000_000n);
  const ids = {
    // As a merchant might type it: grouped and lower case; the worker sends the electronic format.
    notFound: await withdraw(merchantId, SANDBOX.notFound.toLowerCase().replace(/(.{4})/g, "$1 "), 10_000n),
    nameMismatch: await withdraw(merchantId, SANDBOX.nameMismatch, 20_000n),
    undecided: await withdraw(merchantId, SANDBOX.undecided, 30_000n),
    closed: await withdraw(merchantId, SANDBOX.closed, 40_000n),
    other: await withdraw(merchantId, turkishIban("0001000000000098765432"), 50_000n),
    another: await withdraw(merchantId, turkishIban("0006400000011234567890"), 60_000n),
  };
  const ctx = payoutContext(first!);
  await eventually(async () => {
    const rows = await withdrawalRows(ctx, Object.values(ids));
    return rows.every((r) => r.status !== "pending" && (r.status !== "processing" || Boolean(r.awaiting_operator)));
  }, "every withdrawal decided by the sandbox bank", 15_000);

  t.like(await withdrawal(ids.notFound), { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_NOT_FOUND", iban: SANDBOX.notFound, sequence: 3n });
  t.like(await withdrawal(ids.nameMismatch), { status: WithdrawalStatus.FAILED, failureReason: "NAME_MISMATCH", sequence: 3n });
  t.like(await withdrawal(ids.closed), { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED", sequence: 3n });
  t.like(await withdrawal(ids.other), { status: WithdrawalStatus.COMPLETED, failureReason: "", sequence: 3n });
  t.like(await withdrawal(ids.another), { status: WithdrawalStatus.COMPLETED, failureReason: "", sequence: 3n });
  t.like(await withdrawal(ids.undecided), { status: WithdrawalStatus.PROCESSING, sequence: 2n, completedAt: undefined, awaitingOperator: true, sandbox: true });
  for (const id of Object.values(ids)) if (id !== ids.undecided) t.truthy((await withdrawal(id)).completedAt, `${id} is final and has completedAt`);

  const rows = new Map((await withdrawalRows(ctx, Object.values(ids))).map((r) => [r.id, r]));
  for (const [name, id] of Object.entries(ids)) {
    t.like(rows.get(id), { bank_reference: `SANDBOX-${id}`, dispatch_attempts: 1 }, name);
    t.is(Boolean(rows.get(id)!.awaiting_operator), id === ids.undecided, name);
  }

  const events = await outboxEventsByWithdrawal(ctx);
  for (const id of [ids.notFound, ids.nameMismatch, ids.closed]) t.deepEqual(eventTrail(events.get(id)), [PROCESSING, ["withdrawal_failed", "PROCESSING", "FAILED", 3]]);
  for (const id of [ids.other, ids.another]) t.deepEqual(eventTrail(events.get(id)), [PROCESSING, ["withdrawal_completed", "PROCESSING", "COMPLETED", 3]]);
  t.deepEqual(eventTrail(events.get(ids.undecided)), [PROCESSING]);

  // Failed ones gave their amount back; completed ones paid it out; the undecided one is still held.
  t.deepEqual(await balance(merchantId), { available: 1_000_000n - 50_000n - 60_000n - 30_000n, held: 30_000n });
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: 1_000_000 - 50_000 - 60_000 - 30_000, held: 30_000 });
});

test.serial("a transfer the sandbox bank accepts without deciding (…0003) stays processing, awaiting an operator and never re-sent, until CompleteWithdrawal pays it out or FailWithdrawal returns the amount", async (t) => {
  const merchantId = await fundedMerchant(100_000n);
  const toComplete = await withdraw(merchantId, SANDBOX.undecided, 30_000n);
  const toFail = await withdraw(merchantId, SANDBOX.undecided, 25_000n);
  const ctx = payoutContext(first!);
  await eventually(async () => (await withdrawalRows(ctx, [toComplete, toFail])).every((r) => Boolean(r.awaiting_operator)), "both accepted by the bank", 15_000);

  // Far past PAYOUT_RESEND_AFTER: an answered transfer is not sent again.
  clock.advance(10 * 60_000);
  await sleep(400);
  for (const row of await withdrawalRows(ctx, [toComplete, toFail])) t.like(row, { status: "processing", dispatch_attempts: 1, bank_reference: `SANDBOX-${row.id}` });
  t.deepEqual(await balance(merchantId), { available: 45_000n, held: 55_000n });

  const completed = await payouts.completeWithdrawal({ withdrawalId: toComplete, bankReference: "EFT-SANDBOX-1" });
  t.like(completed.withdrawal, { status: WithdrawalStatus.COMPLETED, sequence: 3n, bankReference: "EFT-SANDBOX-1", awaitingOperator: false });
  const failed = await payouts.failWithdrawal({ withdrawalId: toFail, reason: "ACCOUNT_CLOSED" });
  t.like(failed.withdrawal, { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED", sequence: 3n });
  t.deepEqual(await balance(merchantId), { available: 70_000n, held: 0n });
  t.deepEqual(await ledgerSums(ctx, merchantId), { available: 70_000, held: 0 });

  const events = await outboxEventsByWithdrawal(ctx);
  t.deepEqual(eventTrail(events.get(toComplete)), [PROCESSING, ["withdrawal_completed", "PROCESSING", "COMPLETED", 3]]);
  t.deepEqual(eventTrail(events.get(toFail)), [PROCESSING, ["withdrawal_failed", "PROCESSING", "FAILED", 3]]);
  await sleep(200);
  t.is((await withdrawalRows(ctx, [toComplete]))[0]?.dispatch_attempts, 1);
});
