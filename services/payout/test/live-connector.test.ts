import test from "ava";
import { Code } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalStatus } from "@payments/contracts/payout";
import { errorInfo, type RunningServices } from "@payments/kit";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, turkishIban } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { BankConnector, PayoutInstruction } from "../src/bank-connector.js";
import { createManualConnector, createPayoutModule, createSandboxConnector } from "../src/index.js";
import { eventTrail, insertPendingWithdrawals, ledgerSums, outboxEventsByWithdrawal, payoutContext, sleep, withdrawalRows } from "./worker-fixtures.js";

// Sandbox and live never mix. One all-in-one process on MySQL and JetStream with its worker
// on, the real sandbox connector (10 ms) and the real manual connector, each behind a
// recorder of what it was sent. Every test uses merchants of its own; the merchant service
// says which are sandbox and which live.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let running: RunningServices | undefined;
let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

/** What each connector was handed, by withdrawal id. */
const sent = { sandbox: [] as string[], live: [] as string[] };

function recorded(connector: BankConnector, into: string[]): BankConnector {
  return {
    name: connector.name,
    send: (instruction: PayoutInstruction) => {
      into.push(instruction.idempotencyKey);
      return connector.send(instruction);
    },
  };
}

const SANDBOX = {
  notFound: "TR400006200000000000000001",
  undecided: "TR830006200000000000000003",
  closed: "TR560006200000000000000004",
};
const ORDINARY = turkishIban("0001000000000098765432");

test.before(async () => {
  running = await startInProcess(
    [
      "merchant",
      "bank-catalog",
      "deposit",
      createPayoutModule({ sandboxConnector: recorded(createSandboxConnector({ delayMs: 10 }), sent.sandbox), liveConnector: recorded(createManualConnector(), sent.live) }),
    ],
    {
      clock,
      env: { DATABASE_URL: database.url, LOG_LEVEL: "warn", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", PAYOUT_RESEND_AFTER: "1m", ...nats },
    },
  );
  payouts = createServiceClient(PayoutService, running.server.url);
  merchants = createServiceClient(MerchantService, running.server.url);
});

test.after.always(async () => {
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

async function fundedMerchant(sandbox: boolean, amount: bigint): Promise<string> {
  const { merchant } = await merchants.createMerchant({ name: sandbox ? "Sandbox Shop" : "Live Shop", sandbox });
  await payouts.adjustBalance({ merchantId: merchant!.id, amount, reason: "test funding" });
  return merchant!.id;
}

let sequence = 0;
async function withdraw(merchantId: string, iban: string, amount: bigint): Promise<string> {
  const n = ++sequence;
  const { withdrawal } = await payouts.createWithdrawal({ merchantId, processId: `live-${n}`, amount, iban, accountName: "Mehmet Demir", userId: `u-${n}`, userName: "mehmet", name: "Mehmet Demir" });
  return withdrawal!.id;
}

async function get(id: string) {
  return (await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal!;
}

async function balance(merchantId: string) {
  const tr = (await payouts.getBalances({ merchantId })).balances.find((b) => b.currency === "TRY")!;
  return { available: tr.available, held: tr.held };
}

async function kinds(id: string): Promise<string[]> {
  const rows = await payoutContext(running!).db("ledger_entries").where({ transaction_id: id }).orderBy("seq").select<Array<{ kind: string }>>("kind");
  return rows.map((r) => r.kind);
}

/** Decided by its connector: final, or processing and left to an operator. */
async function settled(ids: readonly string[]): Promise<void> {
  const ctx = payoutContext(running!);
  await eventually(async () => (await withdrawalRows(ctx, ids)).every((r) => r.status !== "pending" && (r.status !== "processing" || Boolean(r.awaiting_operator))), "the connectors' answers", 15_000);
}

const PROCESSING: [string, string, string, number] = ["withdrawal_processing", "PENDING", "PROCESSING", 2];

test.serial("a sandbox merchant's withdrawals go only to the sandbox connector and get its outcome table; a live merchant's, even to the sandbox's test IBANs, go only to the live (manual) connector and wait, processing, for an operator", async (t) => {
  const sandboxMerchant = await fundedMerchant(true, 1_000_000n);
  const liveMerchant = await fundedMerchant(false, 1_000_000n);
  const sandboxIds = {
    notFound: await withdraw(sandboxMerchant, SANDBOX.notFound, 10_000n),
    undecided: await withdraw(sandboxMerchant, SANDBOX.undecided, 20_000n),
    ordinary: await withdraw(sandboxMerchant, ORDINARY, 30_000n),
  };
  const liveIds = {
    notFound: await withdraw(liveMerchant, SANDBOX.notFound, 10_000n),
    closed: await withdraw(liveMerchant, SANDBOX.closed, 20_000n),
    ordinary: await withdraw(liveMerchant, ORDINARY, 30_000n),
  };
  await settled([...Object.values(sandboxIds), ...Object.values(liveIds)]);

  // Each withdrawal was handed to exactly one connector, the one of its merchant's kind, once.
  t.deepEqual([...sent.sandbox].sort(), Object.values(sandboxIds).sort());
  t.deepEqual([...sent.live].sort(), Object.values(liveIds).sort());

  t.like(await get(sandboxIds.notFound), { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_NOT_FOUND", sandbox: true, awaitingOperator: false });
  t.like(await get(sandboxIds.undecided), { status: WithdrawalStatus.PROCESSING, sandbox: true, awaitingOperator: true, bankReference: `SANDBOX-${sandboxIds.undecided}` });
  t.like(await get(sandboxIds.ordinary), { status: WithdrawalStatus.COMPLETED, sandbox: true, awaitingOperator: false, bankReference: `SANDBOX-${sandboxIds.ordinary}` });
  for (const id of Object.values(liveIds)) {
    t.like(await get(id), { status: WithdrawalStatus.PROCESSING, sandbox: false, awaitingOperator: true, bankReference: "", failureReason: "", sequence: 2n, completedAt: undefined }, id);
  }
  const events = await outboxEventsByWithdrawal(payoutContext(running!));
  for (const id of Object.values(liveIds)) t.deepEqual(eventTrail(events.get(id)), [PROCESSING], `${id}: the merchant hears "processing", nothing more`);
  t.deepEqual(await balance(liveMerchant), { available: 1_000_000n - 60_000n, held: 60_000n });
  t.deepEqual(await ledgerSums(payoutContext(running!), liveMerchant), { available: 1_000_000 - 60_000, held: 60_000 });

  // Waiting for an operator is not waiting for a bank answer: far past PAYOUT_RESEND_AFTER, nothing is sent again.
  clock.advance(10 * 60_000);
  await sleep(300);
  t.is(sent.live.length, 3);
  for (const row of await withdrawalRows(payoutContext(running!), Object.values(liveIds))) t.like(row, { status: "processing", dispatch_attempts: 1 });
});

test.serial("an operator completes a live withdrawal with the bank's reference (required): held paid out once, the reference kept, the completed event sent; it leaves the awaiting-operator list", async (t) => {
  const merchantId = await fundedMerchant(false, 100_000n);
  const id = await withdraw(merchantId, ORDINARY, 40_000n);
  const sandboxMerchant = await fundedMerchant(true, 100_000n);
  const sandboxWaiting = await withdraw(sandboxMerchant, SANDBOX.undecided, 5_000n);
  await settled([id, sandboxWaiting]);

  // The operator's worklist: live withdrawals awaiting an operator, across merchants.
  const worklist = async () => (await payouts.listWithdrawals({ allMerchants: true, awaitingOperator: true, sandbox: false, limit: 100 })).withdrawals.map((w) => w.id);
  t.true((await worklist()).includes(id));
  t.false((await worklist()).includes(sandboxWaiting), "a sandbox withdrawal is never on the live worklist");
  t.true((await payouts.listWithdrawals({ allMerchants: true, awaitingOperator: true, sandbox: true, limit: 100 })).withdrawals.some((w) => w.id === sandboxWaiting));
  t.deepEqual((await payouts.listWithdrawals({ merchantId, awaitingOperator: true })).withdrawals.map((w) => w.id), [id]);

  for (const bankReference of ["", "   ", "R".repeat(101)]) {
    const info = errorInfo(await t.throwsAsync(payouts.completeWithdrawal({ withdrawalId: id, bankReference })));
    t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "bank_reference" }, JSON.stringify(bankReference));
  }
  t.like(await get(id), { status: WithdrawalStatus.PROCESSING, awaitingOperator: true });
  t.deepEqual(await balance(merchantId), { available: 60_000n, held: 40_000n });

  const { withdrawal } = await payouts.completeWithdrawal({ withdrawalId: id, bankReference: " EFT-20261122-0042 " });
  t.like(withdrawal, { status: WithdrawalStatus.COMPLETED, bankReference: "EFT-20261122-0042", awaitingOperator: false, sandbox: false, sequence: 3n });
  t.truthy(withdrawal?.completedAt);
  t.like((await withdrawalRows(payoutContext(running!), [id]))[0], { bank_reference: "EFT-20261122-0042", status: "completed" });

  // Held paid out: available unchanged, held back to 0, and the ledger says so.
  t.deepEqual(await balance(merchantId), { available: 60_000n, held: 0n });
  t.deepEqual(await ledgerSums(payoutContext(running!), merchantId), { available: 60_000, held: 0 });
  t.deepEqual(await kinds(id), ["withdrawal_hold", "withdrawal_settle"]);
  const trail = (await outboxEventsByWithdrawal(payoutContext(running!))).get(id);
  t.deepEqual(eventTrail(trail), [PROCESSING, ["withdrawal_completed", "PROCESSING", "COMPLETED", 3]]);
  t.is(trail?.at(-1)?.withdrawal?.bankReference, "EFT-20261122-0042");

  t.false((await worklist()).includes(id));
  // Once: a second completion is refused and moves nothing.
  t.like(errorInfo(await t.throwsAsync(payouts.completeWithdrawal({ withdrawalId: id, bankReference: "EFT-AGAIN" }))), { reason: "INVALID_TRANSACTION_STATE" });
  t.deepEqual(await kinds(id), ["withdrawal_hold", "withdrawal_settle"]);
});

test.serial("an operator fails a live withdrawal with a reason: the held amount returns to available", async (t) => {
  const merchantId = await fundedMerchant(false, 50_000n);
  const id = await withdraw(merchantId, ORDINARY, 12_345n);
  await settled([id]);
  t.deepEqual(await balance(merchantId), { available: 37_655n, held: 12_345n });

  const { withdrawal } = await payouts.failWithdrawal({ withdrawalId: id, reason: "account_closed" });
  t.like(withdrawal, { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED", awaitingOperator: false, sequence: 3n });
  t.deepEqual(await balance(merchantId), { available: 50_000n, held: 0n });
  t.deepEqual(await ledgerSums(payoutContext(running!), merchantId), { available: 50_000, held: 0 });
  t.deepEqual(await kinds(id), ["withdrawal_hold", "withdrawal_release"]);
  t.deepEqual(eventTrail((await outboxEventsByWithdrawal(payoutContext(running!))).get(id)), [PROCESSING, ["withdrawal_failed", "PROCESSING", "FAILED", 3]]);
});

test.serial("CreateWithdrawal records the merchant's kind from the merchant service; an unknown merchant is VALIDATION_ERROR on merchant_id and nothing is held", async (t) => {
  const sandboxMerchant = await fundedMerchant(true, 1_000n);
  const liveMerchant = await fundedMerchant(false, 1_000n);
  const created = async (merchantId: string) =>
    (await payouts.createWithdrawal({ merchantId, processId: `kind-${++sequence}`, amount: 100n, iban: ORDINARY, accountName: "A B", userId: "u", userName: "ab", name: "A B" })).withdrawal!;
  t.like(await created(sandboxMerchant), { sandbox: true, merchantId: sandboxMerchant });
  t.like(await created(liveMerchant), { sandbox: false, merchantId: liveMerchant });

  const info = errorInfo(await t.throwsAsync(created("mer_nobody")));
  t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.is((await payoutContext(running!).db("withdrawals").where({ merchant_id: "mer_nobody" })).length, 0);
  t.is((await payoutContext(running!).db("ledger_entries").where({ merchant_id: "mer_nobody" })).length, 0);
});

test.serial("the worker routes by the flag recorded on the withdrawal, not the merchant's kind now: a live merchant's row recorded as sandbox (as the migration backfills old rows) stays on the sandbox connector, and the reverse on the live one", async (t) => {
  const ctx = payoutContext(running!);
  const liveMerchant = await fundedMerchant(false, 100_000n);
  const sandboxMerchant = await fundedMerchant(true, 100_000n);
  const [legacy] = await insertPendingWithdrawals(ctx, liveMerchant, [1_000], ORDINARY, true);
  const [recordedLive] = await insertPendingWithdrawals(ctx, sandboxMerchant, [2_000], ORDINARY, false);
  await settled([legacy!.id, recordedLive!.id]);
  t.true(sent.sandbox.includes(legacy!.id) && !sent.live.includes(legacy!.id));
  t.true(sent.live.includes(recordedLive!.id) && !sent.sandbox.includes(recordedLive!.id));
  t.like(await get(legacy!.id), { status: WithdrawalStatus.COMPLETED, sandbox: true });
  t.like(await get(recordedLive!.id), { status: WithdrawalStatus.PROCESSING, sandbox: false, awaitingOperator: true });
});
