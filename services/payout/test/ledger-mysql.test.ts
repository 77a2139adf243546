import test, { type ExecutionContext } from "ava";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import {
  CreateWithdrawalRequestSchema,
  PayoutService,
  WithdrawalStatus,
  WithdrawalStatusChangedSchema,
  type CreateWithdrawalRequest,
  type WithdrawalStatusChanged,
} from "@payments/contracts/payout";
import { errorInfo, newId, type BaseContext, type RunningServices } from "@payments/kit";
import { bankIban, createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, rejectionOf, testCustomer } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { PayoutContext } from "../src/context.js";
import { creditDeposit } from "../src/deposit-credits.js";
import { moveWithdrawal } from "../src/withdrawal-moves.js";

// The payout service on MySQL and JetStream, next to the merchant, bank-catalog and
// deposit services, with its worker off (PAYOUT_WORKER=0): withdrawals stay where the
// test puts them. Every test uses merchants of its own.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let running: RunningServices | undefined;
let payouts: ReturnType<typeof createServiceClient<typeof PayoutService>>;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;
let catalog: ReturnType<typeof createServiceClient<typeof BankCatalogService>>;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    clock,
    env: {
      DATABASE_URL: database.url,
      LOG_LEVEL: "warn",
      MASTER_KEY: "ab".repeat(32),
      PAYOUT_WORKER: "0",
      SUPPORTED_CURRENCIES: "TRY,EUR",
      ...nats,
    },
  });
  // Generous deadlines: the concurrency tests queue hundreds of calls on ten connections.
  const options = { timeoutMs: 60_000 };
  payouts = createServiceClient(PayoutService, running.server.url, options);
  deposits = createServiceClient(DepositService, running.server.url, options);
  merchants = createServiceClient(MerchantService, running.server.url, options);
  catalog = createServiceClient(BankCatalogService, running.server.url, options);
  // The sandbox merchants' deposits need sandbox receiving accounts, which only `pnpm start` seeds by itself.
  await catalog.seedSandboxAccounts({});
});

test.after.always(async () => {
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

function payout(): PayoutContext {
  return running!.contexts.get("payout") as PayoutContext;
}

function depositContext(): BaseContext {
  return running!.contexts.get("deposit")!;
}

async function newMerchant(): Promise<string> {
  const { merchant } = await merchants.createMerchant({ name: "Payout Shop", sandbox: true });
  return merchant!.id;
}

type CreateRequest = Exclude<MessageInitShape<typeof CreateWithdrawalRequestSchema>, CreateWithdrawalRequest>;

let sequence = 0;
function withdrawalRequest(merchantId: string, extra: Partial<CreateRequest> = {}): CreateRequest {
  sequence += 1;
  return {
    merchantId,
    processId: `payout-${sequence}`,
    amount: 100n,
    accountName: "Ayşe Yılmaz",
    iban: bankIban("00062", 1000 + sequence),
    userId: "usr_1",
    userName: "ayse",
    name: "Ayşe Yılmaz",
    ...extra,
  };
}

async function fund(merchantId: string, amount: number, currency = "TRY"): Promise<void> {
  await payouts.adjustBalance({ merchantId, amount: BigInt(amount), currency, reason: "test funding" });
}

async function balance(merchantId: string, currency = "TRY"): Promise<{ available: number; held: number }> {
  const { balances } = await payouts.getBalances({ merchantId });
  const found = balances.find((b) => b.currency === currency);
  return { available: Number(found?.available ?? 0n), held: Number(found?.held ?? 0n) };
}

/** The ledger entries of one transaction, oldest first. */
async function entriesOf(transactionId: string): Promise<Array<{ kind: string; available_delta: number; held_delta: number }>> {
  return payout().db("ledger_entries").where({ transaction_id: transactionId }).orderBy("seq").select("kind", "available_delta", "held_delta");
}

/** The status events a withdrawal recorded in the payout outbox, in order. */
async function outboxEvents(withdrawalId: string): Promise<Array<{ topic: string; event: WithdrawalStatusChanged }>> {
  const rows = (await payout().db("outbox").select("topic", "payload").orderBy("seq")) as Array<{ topic: string; payload: Buffer }>;
  return rows
    .filter((r) => r.topic.startsWith("payout.v1."))
    .map((r) => ({ topic: r.topic, event: fromBinary(WithdrawalStatusChangedSchema, new Uint8Array(r.payload)) }))
    .filter((e) => e.event.withdrawal?.id === withdrawalId);
}

/**
 * The ledger's invariant for one merchant and currency, read straight from the payout
 * database: the balance row is the sum of its entries, neither part is negative, and held
 * is exactly the money of the withdrawals still pending or processing.
 */
async function assertLedgerInvariant(t: ExecutionContext, merchantId: string, currency = "TRY"): Promise<void> {
  const db = payout().db;
  const row = (await db("balances").where({ merchant_id: merchantId, currency }).first()) as { available: number; held: number } | undefined;
  const sums = (await db("ledger_entries")
    .where({ merchant_id: merchantId, currency })
    .sum({ available: "available_delta", held: "held_delta" })
    .first()) as { available: number | string | null; held: number | string | null };
  const open = (await db("withdrawals")
    .where({ merchant_id: merchantId, currency })
    .whereIn("status", ["pending", "processing"])
    .sum({ amount: "amount" })
    .first()) as { amount: number | string | null };
  const available = Number(row?.available ?? 0);
  const held = Number(row?.held ?? 0);
  t.is(available, Number(sums.available ?? 0), `${merchantId} ${currency}: available is the sum of the entries' available deltas`);
  t.is(held, Number(sums.held ?? 0), `${merchantId} ${currency}: held is the sum of the entries' held deltas`);
  t.is(held, Number(open.amount ?? 0), `${merchantId} ${currency}: held is the open withdrawals' money`);
  t.true(available >= 0 && held >= 0, `${merchantId} ${currency}: never negative (${available}, ${held})`);
}

/** Moves a withdrawal to processing as the worker would (the worker is off in these tests). */
async function startProcessing(withdrawalId: string): Promise<void> {
  await payout().db.transaction((trx) => moveWithdrawal(trx, clock, { withdrawalId, move: "start" }));
}

function completedDepositEvent(merchantId: string, amount: bigint, depositId = newId("dep")): Uint8Array {
  return toBinary(
    DepositStatusChangedSchema,
    create(DepositStatusChangedSchema, {
      eventId: newId("evt"),
      deposit: { id: depositId, merchantId, amount, requestedAmount: amount, currency: "TRY", status: DepositStatus.COMPLETED, sequence: 2n },
      previousStatus: DepositStatus.PENDING,
      occurredAt: timestampFromMs(clock.now().getTime()),
    }),
  );
}

test.serial("200 concurrent withdrawals of 100 against 5,000 available: exactly 50 succeed, 150 are INSUFFICIENT_BALANCE, and the balance never goes below zero", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 5_000);

  // Watch the balance row while the requests race.
  let racing = true as boolean;
  let lowestAvailable = Number.POSITIVE_INFINITY;
  let lowestHeld = Number.POSITIVE_INFINITY;
  const watcher = (async () => {
    while (racing) {
      const row = (await payout().db("balances").where({ merchant_id: merchantId, currency: "TRY" }).first()) as { available: number; held: number };
      lowestAvailable = Math.min(lowestAvailable, Number(row.available));
      lowestHeld = Math.min(lowestHeld, Number(row.held));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  const results = await Promise.allSettled(Array.from({ length: 200 }, () => payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 100n }))));
  racing = false;
  await watcher;

  const created = results.filter((r) => r.status === "fulfilled");
  const refused = results.filter((r) => r.status === "rejected");
  t.is(created.length, 50);
  t.is(refused.length, 150);
  for (const r of refused) t.like(errorInfo(r.reason), { code: Code.FailedPrecondition, reason: "INSUFFICIENT_BALANCE" });
  for (const r of created) t.like(r.value.withdrawal, { status: WithdrawalStatus.PENDING, amount: 100n, sequence: 1n });
  t.deepEqual(await balance(merchantId), { available: 0, held: 5_000 });
  t.true(lowestAvailable >= 0 && lowestHeld >= 0, `lowest seen: available ${lowestAvailable}, held ${lowestHeld}`);
  // A refused request left nothing behind: no withdrawal, no entry.
  t.is((await payout().db("withdrawals").where({ merchant_id: merchantId })).length, 50);
  t.is((await payout().db("ledger_entries").where({ merchant_id: merchantId, kind: "withdrawal_hold" })).length, 50);
  await assertLedgerInvariant(t, merchantId);
});

test.serial("concurrent first withdrawals of a merchant without a balance row lose no lock race to a 500: each is INSUFFICIENT_BALANCE", async (t) => {
  for (let round = 0; round < 3; round++) {
    const merchantId = await newMerchant();
    const answers = await Promise.all(Array.from({ length: 8 }, () => rejectionOf(payouts.createWithdrawal(withdrawalRequest(merchantId)))));
    t.deepEqual(
      answers.map((a) => a.reason),
      Array(8).fill("INSUFFICIENT_BALANCE"),
      JSON.stringify(answers.map((a) => a.message)),
    );
    await assertLedgerInvariant(t, merchantId);
  }
});

test.serial("creates, cancels and adjustments racing on one balance keep it equal to the sum of its ledger entries", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 6_000);
  const first = await Promise.all(Array.from({ length: 20 }, () => payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 150n }))));
  await Promise.allSettled([
    ...Array.from({ length: 40 }, () => payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 150n }))),
    ...first.map((c) => payouts.cancelWithdrawal({ merchantId, withdrawalId: c.withdrawal!.id })),
    ...first.slice(0, 10).map((c) => payouts.cancelWithdrawal({ withdrawalId: c.withdrawal!.id })),
    ...Array.from({ length: 15 }, () => payouts.adjustBalance({ merchantId, amount: -70n, reason: "fee" })),
    ...Array.from({ length: 15 }, () => payouts.adjustBalance({ merchantId, amount: 30n, reason: "refund" })),
  ]);
  await assertLedgerInvariant(t, merchantId);
  // Each cancelled withdrawal was released exactly once, however often it was cancelled.
  for (const c of first) t.deepEqual((await entriesOf(c.withdrawal!.id)).map((e) => e.kind), ["withdrawal_hold", "withdrawal_release"]);
});

test.serial("a deposit completed in the deposit service credits available once, through its event on JetStream", async (t) => {
  const merchantId = await newMerchant();
  const { deposit } = await deposits.createDeposit({ merchantId, processId: "dep-1", amount: 50_000n, customer: testCustomer });
  await deposits.confirmDeposit({ depositId: deposit!.id });
  await eventually(async () => (await balance(merchantId)).available === 50_000, "the credit of the completed deposit", 15_000);
  t.deepEqual(await entriesOf(deposit!.id), [{ kind: "deposit_credit", available_delta: 50_000, held_delta: 0 }]);

  // The same event again (a redelivery) changes nothing.
  const outbox = await depositContext().db("outbox").where({ topic: "deposit.v1.deposit_completed" }).select<Array<{ payload: Buffer }>>("payload");
  const bytes = outbox.map((r) => new Uint8Array(r.payload)).find((b) => fromBinary(DepositStatusChangedSchema, b).deposit?.id === deposit!.id);
  t.truthy(bytes);
  t.is(await creditDeposit(payout(), bytes!), "already");
  t.deepEqual(await balance(merchantId), { available: 50_000, held: 0 });

  // And the credit is money a withdrawal can take.
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 20_000n }));
  t.is(withdrawal?.status, WithdrawalStatus.PENDING);
  t.deepEqual(await balance(merchantId), { available: 30_000, held: 20_000 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("the same completed-deposit event delivered twice, and then five times at once, credits once", async (t) => {
  const merchantId = await newMerchant();
  const bytes = completedDepositEvent(merchantId, 7_500n);
  t.is(await creditDeposit(payout(), bytes), "credited");
  t.is(await creditDeposit(payout(), bytes), "already");
  t.deepEqual(await balance(merchantId), { available: 7_500, held: 0 });

  // At once, for a merchant without a balance row yet: the racers meet on its creation.
  const racer = await newMerchant();
  const raced = completedDepositEvent(racer, 2_500n);
  const outcomes = await Promise.all(Array.from({ length: 5 }, () => creditDeposit(payout(), raced)));
  t.deepEqual(
    outcomes.filter((o) => o === "credited"),
    ["credited"],
  );
  t.deepEqual(await balance(racer), { available: 2_500, held: 0 });
  t.is((await payout().db("ledger_entries").where({ merchant_id: racer })).length, 1);
  await assertLedgerInvariant(t, merchantId);
  await assertLedgerInvariant(t, racer);

  // An event that is not a completed deposit is refused (and so redelivered), crediting nothing.
  const pending = toBinary(DepositStatusChangedSchema, create(DepositStatusChangedSchema, { eventId: "evt_x", deposit: { id: newId("dep"), merchantId, amount: 1n, currency: "TRY", status: DepositStatus.PENDING } }));
  await t.throwsAsync(creditDeposit(payout(), pending), { message: /not a completed deposit/ });
  t.deepEqual(await balance(merchantId), { available: 7_500, held: 0 });
});

test.serial("cancel returns the held amount once: pending → cancelled, repeated unchanged, refused once processing", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 1_000);
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 300n }));
  const id = withdrawal!.id;
  t.deepEqual(await balance(merchantId), { available: 700, held: 300 });
  t.deepEqual(await outboxEvents(id), [], "creation publishes nothing");

  // Another merchant's caller does not find it.
  t.like(await rejectionOf(payouts.cancelWithdrawal({ merchantId: await newMerchant(), withdrawalId: id })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });

  const cancelled = await payouts.cancelWithdrawal({ merchantId, withdrawalId: id });
  t.like(cancelled.withdrawal, { status: WithdrawalStatus.CANCELLED, sequence: 2n, failureReason: "" });
  t.truthy(cancelled.withdrawal?.completedAt);
  t.deepEqual(await balance(merchantId), { available: 1_000, held: 0 });
  t.deepEqual(await entriesOf(id), [
    { kind: "withdrawal_hold", available_delta: -300, held_delta: 300 },
    { kind: "withdrawal_release", available_delta: 300, held_delta: -300 },
  ]);

  const again = await payouts.cancelWithdrawal({ merchantId, withdrawalId: id });
  t.like(again.withdrawal, { status: WithdrawalStatus.CANCELLED, sequence: 2n });
  t.deepEqual(await balance(merchantId), { available: 1_000, held: 0 });
  t.is((await entriesOf(id)).length, 2);
  const events = await outboxEvents(id);
  t.deepEqual(
    events.map((e) => e.topic),
    ["payout.v1.withdrawal_cancelled"],
  );
  t.like(events[0]!.event, { previousStatus: WithdrawalStatus.PENDING });
  t.like(events[0]!.event.withdrawal, { status: WithdrawalStatus.CANCELLED, sequence: 2n });

  // Once the worker took it, the money may be on its way: cancel is refused, nothing moves.
  const { withdrawal: taken } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 400n }));
  await startProcessing(taken!.id);
  t.like(await rejectionOf(payouts.cancelWithdrawal({ merchantId, withdrawalId: taken!.id })), {
    code: Code.FailedPrecondition,
    reason: "INVALID_TRANSACTION_STATE",
    details: { status: "processing" },
  });
  t.deepEqual(await balance(merchantId), { available: 600, held: 400 });
  t.is((await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: taken!.id } })).withdrawal?.status, WithdrawalStatus.PROCESSING);
  await assertLedgerInvariant(t, merchantId);
});

test.serial("ten cancels of one withdrawal at once: all answer cancelled, one release, one event", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 500);
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 500n }));
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => payouts.cancelWithdrawal(i % 2 ? { merchantId, withdrawalId: withdrawal!.id } : { allMerchants: true, withdrawalId: withdrawal!.id })));
  t.true(results.every((r) => r.withdrawal?.status === WithdrawalStatus.CANCELLED && r.withdrawal.sequence === 2n));
  t.deepEqual(
    (await entriesOf(withdrawal!.id)).map((e) => e.kind),
    ["withdrawal_hold", "withdrawal_release"],
  );
  t.is((await outboxEvents(withdrawal!.id)).length, 1);
  t.deepEqual(await balance(merchantId), { available: 500, held: 0 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("an operator cannot decide a withdrawal whose bank answer is still awaited (BANK_ANSWER_PENDING), only one the bank left undecided", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 1_000);
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 400n }));
  const id = withdrawal!.id;
  // As the worker leaves it while the bank call is in flight.
  await payout().db.transaction((trx) => moveWithdrawal(trx, clock, { withdrawalId: id, move: "start", patch: { dispatched_at: clock.now().getTime(), dispatch_attempts: 1 } }));
  t.like(await rejectionOf(payouts.failWithdrawal({ withdrawalId: id, reason: "ACCOUNT_CLOSED" })), { code: Code.FailedPrecondition, reason: "BANK_ANSWER_PENDING" });
  t.like(await rejectionOf(payouts.completeWithdrawal({ withdrawalId: id, bankReference: "REF-1" })), { reason: "BANK_ANSWER_PENDING" });
  t.deepEqual(await balance(merchantId), { available: 600, held: 400 }, "nothing released");
  // The bank accepted it without deciding: now it is the operator's.
  await payout().db("withdrawals").where({ id }).update({ awaiting_operator: true });
  t.like((await payouts.failWithdrawal({ withdrawalId: id, reason: "ACCOUNT_CLOSED" })).withdrawal, { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED" });
  t.deepEqual(await balance(merchantId), { available: 1_000, held: 0 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("an operator completes a processing withdrawal (held paid out) or fails it with a reason code (held returned)", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 10_000);
  const [a, b, c] = await Promise.all([1_000n, 2_000n, 3_000n].map((amount) => payouts.createWithdrawal(withdrawalRequest(merchantId, { amount }))));
  const [toComplete, toFail, stillPending] = [a!.withdrawal!.id, b!.withdrawal!.id, c!.withdrawal!.id];
  t.deepEqual(await balance(merchantId), { available: 4_000, held: 6_000 });

  // Only a processing withdrawal: a pending one is refused either way.
  t.like(await rejectionOf(payouts.completeWithdrawal({ withdrawalId: stillPending, bankReference: "REF-1" })), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE", details: { status: "pending" } });
  t.like(await rejectionOf(payouts.failWithdrawal({ withdrawalId: stillPending, reason: "ACCOUNT_CLOSED" })), { reason: "INVALID_TRANSACTION_STATE" });

  await startProcessing(toComplete);
  await startProcessing(toFail);
  const completed = await payouts.completeWithdrawal({ withdrawalId: toComplete, bankReference: "  EFT-2026-000123 " });
  t.like(completed.withdrawal, { status: WithdrawalStatus.COMPLETED, sequence: 3n, failureReason: "", bankReference: "EFT-2026-000123", awaitingOperator: false });
  t.truthy(completed.withdrawal?.completedAt);
  t.deepEqual(await balance(merchantId), { available: 4_000, held: 5_000 });
  t.deepEqual((await entriesOf(toComplete)).at(-1), { kind: "withdrawal_settle", available_delta: 0, held_delta: -1_000 });

  // The code is trimmed and upper-cased; anything but letters, digits and _ is refused.
  for (const reason of ["", "   ", "closed!", "ACCOUNT CLOSED", "X".repeat(101)]) {
    t.like(await rejectionOf(payouts.failWithdrawal({ withdrawalId: toFail, reason })), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "reason" }, JSON.stringify(reason));
  }
  const failed = await payouts.failWithdrawal({ withdrawalId: toFail, reason: "  account_closed " });
  t.like(failed.withdrawal, { status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED", sequence: 3n });
  t.deepEqual(await balance(merchantId), { available: 6_000, held: 3_000 });
  t.deepEqual((await entriesOf(toFail)).at(-1), { kind: "withdrawal_release", available_delta: 2_000, held_delta: -2_000 });

  // Final is final: nothing moves again.
  t.like(await rejectionOf(payouts.completeWithdrawal({ withdrawalId: toComplete, bankReference: "REF-2" })), { reason: "INVALID_TRANSACTION_STATE", details: { status: "completed" } });
  t.like(await rejectionOf(payouts.failWithdrawal({ withdrawalId: toComplete, reason: "NAME_MISMATCH" })), { reason: "INVALID_TRANSACTION_STATE" });
  t.like(await rejectionOf(payouts.completeWithdrawal({ withdrawalId: toFail, bankReference: "REF-3" })), { reason: "INVALID_TRANSACTION_STATE", details: { status: "failed" } });
  t.like(await rejectionOf(payouts.completeWithdrawal({ withdrawalId: "wdr_missing", bankReference: "REF-4" })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });

  t.deepEqual(
    (await outboxEvents(toComplete)).map((e) => e.topic),
    ["payout.v1.withdrawal_processing", "payout.v1.withdrawal_completed"],
  );
  const failEvents = await outboxEvents(toFail);
  t.deepEqual(
    failEvents.map((e) => e.topic),
    ["payout.v1.withdrawal_processing", "payout.v1.withdrawal_failed"],
  );
  t.like(failEvents[1]!.event, { previousStatus: WithdrawalStatus.PROCESSING });
  t.is(failEvents[1]!.event.withdrawal?.failureReason, "ACCOUNT_CLOSED");
  await assertLedgerInvariant(t, merchantId);
});

test.serial("complete and fail racing on one processing withdrawal: exactly one wins, the money moves once", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 20 * 250);
  const created = await Promise.all(Array.from({ length: 20 }, () => payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 250n }))));
  const ids = created.map((c) => c.withdrawal!.id);
  for (const id of ids) await startProcessing(id);
  const outcomes = await Promise.allSettled(ids.flatMap((id) => [payouts.completeWithdrawal({ withdrawalId: id, bankReference: "REF-1" }), payouts.failWithdrawal({ withdrawalId: id, reason: "NAME_MISMATCH" })]));
  for (const [i, id] of ids.entries()) {
    const [complete, fail] = [outcomes[2 * i]!, outcomes[2 * i + 1]!];
    t.is([complete, fail].filter((o) => o.status === "fulfilled").length, 1, id);
    const loser = complete.status === "rejected" ? complete : fail;
    if (loser.status === "rejected") t.like(errorInfo(loser.reason), { reason: "INVALID_TRANSACTION_STATE" });
    t.is((await entriesOf(id)).length, 2, id);
    t.is((await outboxEvents(id)).length, 2, id);
  }
  const completedCount = outcomes.filter((o, i) => i % 2 === 0 && o.status === "fulfilled").length;
  t.deepEqual(await balance(merchantId), { available: (20 - completedCount) * 250, held: 0 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("bad input is VALIDATION_ERROR naming the proto field, and nothing is stored or held", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 10_000);
  const cases: Array<[string, CreateRequest]> = [
    ["merchant_id", withdrawalRequest("")],
    ["process_id", withdrawalRequest(merchantId, { processId: "" })],
    ["process_id", withdrawalRequest(merchantId, { processId: "x".repeat(51) })],
    ["process_id", withdrawalRequest(merchantId, { processId: "payout-1 " })],
    ["process_id", withdrawalRequest(merchantId, { processId: " payout-1" })],
    ["amount", withdrawalRequest(merchantId, { amount: 0n })],
    ["amount", withdrawalRequest(merchantId, { amount: -100n })],
    ["amount", withdrawalRequest(merchantId, { amount: BigInt(Number.MAX_SAFE_INTEGER) + 1n })],
    ["currency", withdrawalRequest(merchantId, { currency: "USD" })],
    ["account_name", withdrawalRequest(merchantId, { accountName: "" })],
    ["account_name", withdrawalRequest(merchantId, { accountName: "   " })],
    ["account_name", withdrawalRequest(merchantId, { accountName: "A".repeat(201) })],
    ["iban", withdrawalRequest(merchantId, { iban: "" })],
    ["iban", withdrawalRequest(merchantId, { iban: "  " })],
    ["user_id", withdrawalRequest(merchantId, { userId: "" })],
    ["user_name", withdrawalRequest(merchantId, { userName: " " })],
    ["name", withdrawalRequest(merchantId, { name: "" })],
    ["bank_id", withdrawalRequest(merchantId, { bankId: "b".repeat(41) })],
    ["bank_id", withdrawalRequest(merchantId, { bankId: "bnk_does_not_exist" })],
  ];
  for (const [field, request] of cases) {
    const info = await rejectionOf(payouts.createWithdrawal(request));
    const label = JSON.stringify(request, (_, v: unknown) => (typeof v === "bigint" ? String(v) : v));
    t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, label);
    t.true(info.message.startsWith(`${field}: `), info.message);
  }
  t.is((await payout().db("withdrawals").where({ merchant_id: merchantId })).length, 0);
  t.deepEqual(await balance(merchantId), { available: 10_000, held: 0 });
});

test.serial("an IBAN that is not a valid Turkish one is INVALID_IBAN; spaces and lower case are accepted and stored normalised", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 10_000);
  const good = bankIban("00062", 424242);
  const wrongChecksum = `TR${good.slice(2, 4) === "99" ? "98" : String(Number(good.slice(2, 4)) + 1).padStart(2, "0")}${good.slice(4)}`;
  const cases: Record<string, string> = {
    "wrong checksum": wrongChecksum,
    "25 characters": good.slice(0, 25),
    "27 characters": `${good}0`,
    "a German IBAN": "DE89370400440532013000",
    garbage: "hello-world!",
    "TR and garbage": "TR!!",
  };
  for (const [what, iban] of Object.entries(cases)) {
    const info = await rejectionOf(payouts.createWithdrawal(withdrawalRequest(merchantId, { iban })));
    t.like(info, { code: Code.InvalidArgument, reason: "INVALID_IBAN", field: "iban" }, what);
    t.true(info.message.startsWith("iban: "), info.message);
  }
  t.is((await payout().db("withdrawals").where({ merchant_id: merchantId })).length, 0);

  const spaced = `${good.toLowerCase().replace(/(.{4})/g, "$1 ")}  `;
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { iban: spaced }));
  t.is(withdrawal?.iban, good);
  const row = (await payout().db("withdrawals").where({ id: withdrawal!.id }).first()) as { iban: string };
  t.is(row.iban, good);
});

test.serial("a bank_id must be a bank of the catalog (or FAST); the other fields are stored as given, trimmed", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 10_000);
  const { banks } = await catalog.listBanks({});
  const bank = banks[0]!;
  const { withdrawal } = await payouts.createWithdrawal(
    withdrawalRequest(merchantId, { bankId: bank.id, accountName: "  Mehmet Öz ", userId: " u-42 ", userName: "mehmet ", name: " Mehmet Öz", currency: "try", amount: 1_234n }),
  );
  t.like(withdrawal, {
    merchantId,
    bankId: bank.id,
    accountName: "Mehmet Öz",
    userId: "u-42",
    userName: "mehmet",
    name: "Mehmet Öz",
    currency: "TRY",
    amount: 1_234n,
    status: WithdrawalStatus.PENDING,
    sequence: 1n,
    failureReason: "",
  });
  t.regex(withdrawal!.id, /^wdr_[A-Za-z0-9_-]{22}$/);
  t.is(withdrawal?.completedAt, undefined);
  const fast = await payouts.createWithdrawal(withdrawalRequest(merchantId, { bankId: "FAST" }));
  t.is(fast.withdrawal?.bankId, "FAST");
  const none = await payouts.createWithdrawal(withdrawalRequest(merchantId));
  t.is(none.withdrawal?.bankId, "");
});

test.serial("a repeated processId is DUPLICATE_TRANSACTION naming the first, even when the balance is now short; ten at once give one withdrawal", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 1_000);
  const request = withdrawalRequest(merchantId, { amount: 1_000n });
  const { withdrawal } = await payouts.createWithdrawal(request);
  t.like(await rejectionOf(payouts.createWithdrawal(request)), {
    code: Code.AlreadyExists,
    reason: "DUPLICATE_TRANSACTION",
    field: "process_id",
    details: { transactionId: withdrawal!.id },
  });
  // Another amount or IBAN does not make it a new withdrawal.
  t.like(await rejectionOf(payouts.createWithdrawal({ ...request, amount: 1n, iban: bankIban("00062", 7) })), { reason: "DUPLICATE_TRANSACTION", details: { transactionId: withdrawal!.id } });
  // The same processId at another merchant is that merchant's own.
  const other = await newMerchant();
  await fund(other, 1_000);
  t.is((await payouts.createWithdrawal({ ...request, merchantId: other })).withdrawal?.processId, request.processId);

  await fund(merchantId, 5_000);
  const racing = withdrawalRequest(merchantId, { amount: 500n });
  const results = await Promise.allSettled(Array.from({ length: 10 }, () => payouts.createWithdrawal(racing)));
  const created = results.filter((r) => r.status === "fulfilled");
  t.is(created.length, 1);
  const winner = created[0]!.value.withdrawal!.id;
  for (const r of results.filter((r) => r.status === "rejected")) {
    t.like(errorInfo(r.reason), { code: Code.AlreadyExists, reason: "DUPLICATE_TRANSACTION", details: { transactionId: winner } });
  }
  t.is((await payout().db("withdrawals").where({ merchant_id: merchantId, process_id: racing.processId })).length, 1);
  t.deepEqual(await balance(merchantId), { available: 4_500, held: 1_500 });
  await assertLedgerInvariant(t, merchantId);
  await assertLedgerInvariant(t, other);
});

test.serial("ten identical creates racing for the last of the balance: one withdrawal, the rest DUPLICATE_TRANSACTION, not INSUFFICIENT_BALANCE", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 800);
  const racing = withdrawalRequest(merchantId, { amount: 800n });
  const results = await Promise.allSettled(Array.from({ length: 10 }, () => payouts.createWithdrawal(racing)));
  const created = results.filter((r) => r.status === "fulfilled");
  t.is(created.length, 1);
  for (const r of results.filter((r) => r.status === "rejected")) {
    t.like(errorInfo(r.reason), { reason: "DUPLICATE_TRANSACTION", details: { transactionId: created[0]!.value.withdrawal!.id } });
  }
  t.deepEqual(await balance(merchantId), { available: 0, held: 800 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("AdjustBalance credits and debits available with a reason; a debit beyond available is INSUFFICIENT_BALANCE and changes nothing", async (t) => {
  const merchantId = await newMerchant();
  t.deepEqual((await payouts.getBalances({ merchantId })).balances.map((b) => [b.currency, b.available, b.held]), [["TRY", 0n, 0n]], "no entries yet: TRY at zero");

  const credit = await payouts.adjustBalance({ merchantId, amount: 1_000n, reason: "  opening balance  " });
  t.like(credit.balance, { currency: "TRY", available: 1_000n, held: 0n });
  t.like(credit.entry, { merchantId, currency: "TRY", kind: "adjustment", availableDelta: 1_000n, heldDelta: 0n, reason: "opening balance" });
  t.regex(credit.entry!.transactionId, /^adj_/);
  t.regex(credit.entry!.id, /^led_/);

  const debit = await payouts.adjustBalance({ merchantId, amount: -400n, reason: "chargeback" });
  t.like(debit.balance, { available: 600n, held: 0n });
  t.like(debit.entry, { availableDelta: -400n, reason: "chargeback" });
  t.not(debit.entry!.transactionId, credit.entry!.transactionId);

  t.like(await rejectionOf(payouts.adjustBalance({ merchantId, amount: -601n, reason: "too much" })), { code: Code.FailedPrecondition, reason: "INSUFFICIENT_BALANCE" });
  t.deepEqual(await balance(merchantId), { available: 600, held: 0 });
  t.is((await payout().db("ledger_entries").where({ merchant_id: merchantId })).length, 2);
  // Available only: money held for withdrawals cannot be adjusted away.
  await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 500n }));
  t.like(await rejectionOf(payouts.adjustBalance({ merchantId, amount: -101n, reason: "more than available" })), { reason: "INSUFFICIENT_BALANCE" });
  t.like((await payouts.adjustBalance({ merchantId, amount: -100n, reason: "exactly available" })).balance, { available: 0n, held: 500n });

  const invalid: Array<[string, Parameters<typeof payouts.adjustBalance>[0]]> = [
    ["merchant_id", { merchantId: "", amount: 1n, reason: "r" }],
    // An operator's typo does not open a balance for a merchant that does not exist.
    ["merchant_id", { merchantId: "mer_does_not_exist", amount: 1_000n, reason: "typo" }],
    ["amount", { merchantId, amount: 0n, reason: "r" }],
    ["amount", { merchantId, amount: BigInt(Number.MAX_SAFE_INTEGER) + 1n, reason: "r" }],
    ["amount", { merchantId, amount: -BigInt(Number.MAX_SAFE_INTEGER) - 1n, reason: "r" }],
    ["currency", { merchantId, amount: 1n, currency: "GBP", reason: "r" }],
    ["reason", { merchantId, amount: 1n, reason: "  " }],
    ["reason", { merchantId, amount: 1n, reason: "r".repeat(501) }],
  ];
  for (const [field, request] of invalid) {
    t.like(await rejectionOf(payouts.adjustBalance(request)), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, field);
  }
  t.deepEqual(await balance(merchantId), { available: 0, held: 500 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("twenty concurrent debits of 100 against 1,000 available: ten pass, ten INSUFFICIENT_BALANCE", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 1_000);
  const results = await Promise.allSettled(Array.from({ length: 20 }, () => payouts.adjustBalance({ merchantId, amount: -100n, reason: "fee" })));
  t.is(results.filter((r) => r.status === "fulfilled").length, 10);
  for (const r of results.filter((r) => r.status === "rejected")) t.like(errorInfo(r.reason), { reason: "INSUFFICIENT_BALANCE" });
  t.deepEqual(await balance(merchantId), { available: 0, held: 0 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("balances are per currency, ordered by currency, and a withdrawal holds only in its own currency", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 900, "TRY");
  await fund(merchantId, 300, "EUR");
  t.like(await rejectionOf(payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 301n, currency: "EUR" }))), { reason: "INSUFFICIENT_BALANCE" });
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 200n, currency: "eur" }));
  t.is(withdrawal?.currency, "EUR");
  const { balances } = await payouts.getBalances({ merchantId });
  t.deepEqual(
    balances.map((b) => [b.currency, b.available, b.held]),
    [
      ["EUR", 100n, 200n],
      ["TRY", 900n, 0n],
    ],
  );
  t.like(await rejectionOf(payouts.getBalances({ merchantId: "" })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  await assertLedgerInvariant(t, merchantId, "TRY");
  await assertLedgerInvariant(t, merchantId, "EUR");
});

test.serial("GetWithdrawal by id or by the merchant's processId, scoped to the merchant", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 100);
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId));
  const id = withdrawal!.id;
  t.is((await payouts.getWithdrawal({ merchantId, key: { case: "withdrawalId", value: id } })).withdrawal?.id, id);
  t.is((await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal?.id, id, "an operator, with all_merchants");
  t.is((await payouts.getWithdrawal({ merchantId, key: { case: "processId", value: withdrawal!.processId } })).withdrawal?.id, id);
  const stranger = await newMerchant();
  t.like(await rejectionOf(payouts.getWithdrawal({ merchantId: stranger, key: { case: "withdrawalId", value: id } })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
  t.like(await rejectionOf(payouts.getWithdrawal({ merchantId: stranger, key: { case: "processId", value: withdrawal!.processId } })), { code: Code.NotFound });
  t.like(await rejectionOf(payouts.getWithdrawal({ key: { case: "processId", value: withdrawal!.processId } })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.like(await rejectionOf(payouts.getWithdrawal({ merchantId })), { reason: "VALIDATION_ERROR", field: "withdrawal_id" });
  t.like(await rejectionOf(payouts.getWithdrawal({ merchantId, key: { case: "withdrawalId", value: "" } })), { reason: "VALIDATION_ERROR", field: "withdrawal_id" });
});

test.serial("ListWithdrawals is newest first, pages with an opaque cursor without gaps or repeats, and filters by merchant, status and time", async (t) => {
  const merchantId = await newMerchant();
  const other = await newMerchant();
  await fund(merchantId, 10_000);
  await fund(other, 1_000);
  const start = clock.now().getTime();
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    clock.advance(1_000);
    ids.push((await payouts.createWithdrawal(withdrawalRequest(merchantId))).withdrawal!.id);
  }
  // Two in the same millisecond: the id breaks the tie, and paging still sees both.
  ids.push((await payouts.createWithdrawal(withdrawalRequest(merchantId))).withdrawal!.id);
  await payouts.createWithdrawal(withdrawalRequest(other));
  await payouts.cancelWithdrawal({ merchantId, withdrawalId: ids[1]! });
  await payouts.cancelWithdrawal({ merchantId, withdrawalId: ids[4]! });

  const seen: string[] = [];
  let cursor = "";
  let pages = 0;
  do {
    const page = await payouts.listWithdrawals({ merchantId, limit: 3, cursor });
    t.true(page.withdrawals.length <= 3);
    t.true(page.withdrawals.every((w) => w.merchantId === merchantId));
    seen.push(...page.withdrawals.map((w) => w.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== "" && pages < 10);
  t.is(pages, 3);
  const [lastA, lastB] = [ids[6]!, ids[7]!].sort().reverse();
  t.deepEqual(seen, [lastA, lastB, ...ids.slice(0, 6).reverse()]);

  const all = await payouts.listWithdrawals({ merchantId });
  t.is(all.withdrawals.length, 8);
  t.is(all.nextCursor, "");
  const cancelled = await payouts.listWithdrawals({ merchantId, status: WithdrawalStatus.CANCELLED });
  t.deepEqual(
    cancelled.withdrawals.map((w) => w.id),
    [ids[4], ids[1]],
  );
  // created_from inclusive, created_to exclusive: the 2nd to 4th.
  const window = await payouts.listWithdrawals({ merchantId, createdFrom: timestampFromMs(start + 2_000), createdTo: timestampFromMs(start + 5_000) });
  t.deepEqual(
    window.withdrawals.map((w) => w.id),
    [ids[3], ids[2], ids[1]],
  );
  const everyone = await payouts.listWithdrawals({ allMerchants: true, limit: 100 });
  t.true(everyone.withdrawals.some((w) => w.merchantId === other), "an operator lists every merchant");

  t.like(await rejectionOf(payouts.listWithdrawals({ merchantId, cursor: "not-a-cursor" })), { reason: "VALIDATION_ERROR", field: "cursor" });
  t.like(await rejectionOf(payouts.listWithdrawals({ merchantId, limit: 1001 })), { reason: "VALIDATION_ERROR", field: "limit" });
  t.like(await rejectionOf(payouts.listWithdrawals({ merchantId, limit: -1 })), { reason: "VALIDATION_ERROR", field: "limit" });
  t.like(await rejectionOf(payouts.listWithdrawals({ merchantId, status: 42 as WithdrawalStatus })), { reason: "VALIDATION_ERROR", field: "status" });
});

test.serial("ListLedgerEntries is the merchant's ledger newest first, paged by an opaque cursor, filtered by currency", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 1_000, "TRY");
  await fund(merchantId, 50, "EUR");
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 300n }));
  await payouts.cancelWithdrawal({ merchantId, withdrawalId: withdrawal!.id });
  await payouts.adjustBalance({ merchantId, amount: -25n, currency: "EUR", reason: "fee" });
  // Another merchant's entries never show.
  await fund(await newMerchant(), 77);

  const expected = [
    ["adjustment", "EUR", -25n, 0n],
    ["withdrawal_release", "TRY", 300n, -300n],
    ["withdrawal_hold", "TRY", -300n, 300n],
    ["adjustment", "EUR", 50n, 0n],
    ["adjustment", "TRY", 1_000n, 0n],
  ];
  const all = await payouts.listLedgerEntries({ merchantId });
  t.deepEqual(
    all.entries.map((e) => [e.kind, e.currency, e.availableDelta, e.heldDelta]),
    expected,
  );
  t.is(all.nextCursor, "");
  t.is(all.entries[1]!.transactionId, withdrawal!.id);

  const seen: string[] = [];
  let cursor = "";
  let pages = 0;
  do {
    const page = await payouts.listLedgerEntries({ merchantId, limit: 2, cursor });
    seen.push(...page.entries.map((e) => e.id));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== "" && pages < 10);
  t.is(pages, 3);
  t.deepEqual(
    seen,
    all.entries.map((e) => e.id),
  );

  const eur = await payouts.listLedgerEntries({ merchantId, currency: "eur" });
  t.deepEqual(
    eur.entries.map((e) => e.availableDelta),
    [-25n, 50n],
  );
  t.like(await rejectionOf(payouts.listLedgerEntries({ merchantId: "" })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.like(await rejectionOf(payouts.listLedgerEntries({ merchantId, limit: 501 })), { reason: "VALIDATION_ERROR", field: "limit" });
  t.like(await rejectionOf(payouts.listLedgerEntries({ merchantId, cursor: "bm9wZQ" })), { reason: "VALIDATION_ERROR", field: "cursor" });
  t.like(await rejectionOf(payouts.listLedgerEntries({ merchantId, currency: "EURO" })), { reason: "VALIDATION_ERROR", field: "currency" });
  t.is((await payouts.listLedgerEntries({ merchantId, limit: 500 })).entries.length, 5);
});

test.serial("every merchant-scoped RPC refuses an empty merchant_id with VALIDATION_ERROR on merchant_id, never answering for any merchant; nothing is created, held or cancelled", async (t) => {
  const merchantId = await newMerchant();
  await fund(merchantId, 1_000);
  const { withdrawal } = await payouts.createWithdrawal(withdrawalRequest(merchantId, { amount: 300n }));
  const id = withdrawal!.id;
  const refusals: Array<[string, () => Promise<unknown>]> = [
    ["CreateWithdrawal", () => payouts.createWithdrawal(withdrawalRequest(""))],
    ["GetWithdrawal by id", () => payouts.getWithdrawal({ merchantId: "", key: { case: "withdrawalId", value: id } })],
    ["GetWithdrawal by process id", () => payouts.getWithdrawal({ merchantId: "", key: { case: "processId", value: withdrawal!.processId } })],
    ["ListWithdrawals", () => payouts.listWithdrawals({ merchantId: "" })],
    ["ListWithdrawals awaiting an operator", () => payouts.listWithdrawals({ awaitingOperator: true })],
    ["CancelWithdrawal", () => payouts.cancelWithdrawal({ merchantId: "", withdrawalId: id })],
    ["GetBalances", () => payouts.getBalances({ merchantId: "" })],
    ["ListLedgerEntries", () => payouts.listLedgerEntries({ merchantId: "" })],
    ["AdjustBalance", () => payouts.adjustBalance({ merchantId: "", amount: 1n, reason: "r" })],
  ];
  for (const [rpc, call] of refusals) {
    const info = await rejectionOf(call());
    t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "merchant_id" }, rpc);
    t.true(info.message.startsWith("merchant_id: "), `${rpc}: ${info.message}`);
  }
  // The withdrawal is still pending and held: the empty-merchant cancel did nothing.
  t.is((await payouts.getWithdrawal({ merchantId, key: { case: "withdrawalId", value: id } })).withdrawal?.status, WithdrawalStatus.PENDING);
  t.deepEqual(await balance(merchantId), { available: 700, held: 300 });
  t.is((await payout().db("withdrawals").where({ merchant_id: "" })).length, 0);
  t.is((await payout().db("balances").where({ merchant_id: "" })).length, 0);

  // all_merchants is an operator's explicit view: with a merchant_id too it is a contradiction.
  const contradictions: Array<[string, () => Promise<unknown>]> = [
    ["GetWithdrawal", () => payouts.getWithdrawal({ merchantId, allMerchants: true, key: { case: "withdrawalId", value: id } })],
    ["ListWithdrawals", () => payouts.listWithdrawals({ merchantId, allMerchants: true })],
    ["CancelWithdrawal", () => payouts.cancelWithdrawal({ merchantId, allMerchants: true, withdrawalId: id })],
    ["ListLedgerEntries", () => payouts.listLedgerEntries({ merchantId, allMerchants: true })],
    // A process id is unique per merchant only: never looked up across merchants.
    ["GetWithdrawal by process id", () => payouts.getWithdrawal({ allMerchants: true, key: { case: "processId", value: withdrawal!.processId } })],
  ];
  for (const [rpc, call] of contradictions) t.like(await rejectionOf(call()), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "all_merchants" }, rpc);
  t.deepEqual(await balance(merchantId), { available: 700, held: 300 });
  await assertLedgerInvariant(t, merchantId);
});

test.serial("an operator's view across merchants needs all_merchants: ListWithdrawals and ListLedgerEntries then show every merchant, GetWithdrawal and CancelWithdrawal act on any merchant's withdrawal", async (t) => {
  const [a, b] = [await newMerchant(), await newMerchant()];
  await fund(a, 1_000);
  await fund(b, 2_000);
  const wa = (await payouts.createWithdrawal(withdrawalRequest(a, { amount: 100n }))).withdrawal!;
  const wb = (await payouts.createWithdrawal(withdrawalRequest(b, { amount: 200n }))).withdrawal!;

  const everyone = await payouts.listWithdrawals({ allMerchants: true, limit: 100 });
  t.true([wa.id, wb.id].every((id) => everyone.withdrawals.some((w) => w.id === id)), "both merchants' withdrawals");
  const onlyA = await payouts.listWithdrawals({ merchantId: a, limit: 100 });
  t.deepEqual(onlyA.withdrawals.map((w) => w.id), [wa.id]);

  const ledger = await payouts.listLedgerEntries({ allMerchants: true, limit: 500 });
  t.true([a, b].every((m) => ledger.entries.some((e) => e.merchantId === m && e.kind === "withdrawal_hold")), "both merchants' entries");
  const seqOrdered = ledger.entries.map((e) => e.id);
  // Paging the whole ledger neither skips nor repeats.
  const paged: string[] = [];
  let cursor = "";
  for (let pages = 0; pages < 200; pages++) {
    const page = await payouts.listLedgerEntries({ allMerchants: true, limit: 7, cursor });
    paged.push(...page.entries.map((e) => e.id));
    cursor = page.nextCursor;
    if (cursor === "") break;
  }
  t.deepEqual(paged.slice(0, seqOrdered.length), seqOrdered);

  // Another merchant's id finds nothing; all_merchants finds it.
  t.like(await rejectionOf(payouts.getWithdrawal({ merchantId: a, key: { case: "withdrawalId", value: wb.id } })), { reason: "TRANSACTION_NOT_FOUND" });
  t.is((await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: wb.id } })).withdrawal?.merchantId, b);
  t.like(await rejectionOf(payouts.cancelWithdrawal({ merchantId: a, withdrawalId: wb.id })), { reason: "TRANSACTION_NOT_FOUND" });
  t.like((await payouts.cancelWithdrawal({ allMerchants: true, withdrawalId: wb.id })).withdrawal, { status: WithdrawalStatus.CANCELLED, merchantId: b });
  t.deepEqual(await balance(b), { available: 2_000, held: 0 });
  await assertLedgerInvariant(t, a);
  await assertLedgerInvariant(t, b);
});
