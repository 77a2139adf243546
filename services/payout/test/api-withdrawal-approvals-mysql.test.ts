import test, { type ExecutionContext } from "ava";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { CreateWithdrawalRequestSchema, PayoutService, WithdrawalApprovalState, WithdrawalApprovedSchema, WithdrawalStatus, WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { errorInfo, type RunningServices } from "@payments/kit";
import { createServiceClient, createTestDatabase, deleteTestStream, eventually, jetStreamTestEnv, manualClock, rejectionOf, testMerchantUser, testMerchantVoice, testOperator, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { createPayoutModule, expireWithdrawalApprovals } from "../src/index.js";
import { payoutContext, RecordingBank, sleep } from "./worker-fixtures.js";

// The merchant's approval threshold on its API keys' withdrawals (issue 32), on MariaDB and
// JetStream with the worker running every 50 ms against a recording bank: a key that is not
// trusted gets its 201 pending withdrawal, held, and the bank sees nothing of it until an owner
// or finance user of the merchant approves (then exactly once); rejected or lapsed, it is
// cancelled with its reason, its cancelled event and the hold back. The services' clock is
// manual (never moving by itself), so an approval lapses exactly when a test moves it.
const clock = manualClock(new Date("2026-12-23T10:00:00.000Z"));
const TTL_MS = 3_600_000;
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const bank = new RecordingBank();
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", createPayoutModule({ sandboxConnector: bank.connector("bank") })], {
    clock,
    env: { ...TEST_OPERATOR_ENV, ...nats, DATABASE_URL: database.url, LOG_LEVEL: "warn", MASTER_KEY: "d4".repeat(32), PAYOUT_WORKER_INTERVAL: "50ms", WITHDRAWAL_APPROVAL_TTL: "1h", WITHDRAWAL_APPROVAL_EXPIRY_INTERVAL: "100ms" },
  });
});

test.after.always(async () => {
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

const url = () => running!.server.url;
const ctx = () => payoutContext(running!);
const options = { timeoutMs: 60_000 };
/** The gateway speaking for the merchant's API key (trusted for automatic payouts or not). */
const gateway = (merchantId: string, trusted = false, keyId = `pk_test_${trusted ? "trusted" : "plain"}_${merchantId}`) =>
  createServiceClient(PayoutService, url(), { operator: null, merchant: testMerchantVoice(merchantId, { trusted, keyId }), ...options });
const asUser = (merchantId: string, role: "owner" | "finance" | "developer" | "viewer", email = `${role}@${merchantId}.example.com`) =>
  createServiceClient(PayoutService, url(), { operator: testMerchantUser(merchantId, role, email), approver: null, ...options });

/** A sandbox merchant with 100,000 kuruş available and an approval threshold of 1,000 set by its owner. */
async function shop(name: string): Promise<string> {
  const merchantId = (await createServiceClient(MerchantService, url()).createMerchant({ name, sandbox: true })).merchant!.id;
  await createServiceClient(PayoutService, url(), { operator: testOperator("finance") }).adjustBalance({ merchantId, amount: 100_000n, currency: "TRY", reason: "test funding" });
  await createServiceClient(MerchantService, url(), { operator: testMerchantUser(merchantId, "owner"), approver: null }).setWithdrawalApproval({ threshold: 1_000n });
  return merchantId;
}

let serial = 0;
function request(merchantId: string, amount: bigint): MessageInitShape<typeof CreateWithdrawalRequestSchema> {
  return { merchantId, processId: `api-${++serial}`, amount, iban: "TR330006100519786457841326", accountName: "Elif Şahin", userId: "u1", userName: "elif", name: "Elif Şahin" };
}

async function balance(merchantId: string): Promise<{ available: number; held: number }> {
  const row = (await ctx().db("balances").where({ merchant_id: merchantId, currency: "TRY" }).first()) as { available: number; held: number } | undefined;
  return { available: Number(row?.available ?? 0), held: Number(row?.held ?? 0) };
}

/** The balance is its ledger, held is the open withdrawals' money, nothing negative. */
async function assertLedger(t: ExecutionContext, merchantId: string): Promise<void> {
  const db = ctx().db;
  const sums = (await db("ledger_entries").where({ merchant_id: merchantId, currency: "TRY" }).sum({ available: "available_delta", held: "held_delta" }).first()) as Record<string, number | string | null>;
  const open = (await db("withdrawals").where({ merchant_id: merchantId }).whereIn("status", ["pending", "processing"]).sum({ amount: "amount" }).first()) as { amount: number | string | null };
  const { available, held } = await balance(merchantId);
  t.is(available, Number(sums.available ?? 0), "available is the ledger's sum");
  t.is(held, Number(sums.held ?? 0), "held is the ledger's sum");
  t.is(held, Number(open.amount ?? 0), "held is the open withdrawals' money");
  t.true(available >= 0 && held >= 0, `never negative (${available}, ${held})`);
}

/** The withdrawal's outbox events, by topic, in order. */
async function eventsOf(withdrawalId: string): Promise<Array<{ topic: string; failureReason: string; approvedBy?: string }>> {
  const rows = (await ctx().db("outbox").select("topic", "payload").orderBy("seq")) as Array<{ topic: string; payload: Buffer }>;
  return rows.flatMap((row) => {
    const bytes = new Uint8Array(row.payload);
    if (row.topic === "payout.v1.withdrawal_approved") {
      const e = fromBinary(WithdrawalApprovedSchema, bytes);
      return e.withdrawal?.id === withdrawalId ? [{ topic: row.topic, failureReason: e.withdrawal.failureReason, approvedBy: e.approvedBy }] : [];
    }
    if (!row.topic.startsWith("payout.v1.withdrawal_")) return [];
    const e = fromBinary(WithdrawalStatusChangedSchema, bytes);
    return e.withdrawal?.id === withdrawalId ? [{ topic: row.topic, failureReason: e.withdrawal.failureReason }] : [];
  });
}

async function statusOf(withdrawalId: string): Promise<string> {
  return (await ctx().db("withdrawals").where({ id: withdrawalId }).first<{ status: string }>("status")).status;
}

test.serial("an untrusted key above the threshold: pending and held, never sent until an owner approves, then sent once; at the threshold it goes at once", async (t) => {
  const merchantId = await shop("Waiting Shop");
  const key = gateway(merchantId, false, "pk_test_waiting");
  const { withdrawal } = await key.createWithdrawal(request(merchantId, 5_000n));
  t.is(withdrawal!.status, WithdrawalStatus.PENDING, "the public contract: created pending");
  t.like(withdrawal!.approval, { state: WithdrawalApprovalState.AWAITING, decidedBy: "" });
  t.is(withdrawal!.apiKeyId, "pk_test_waiting");
  t.is(withdrawal!.createdBy, `API key pk_test_waiting of ${merchantId} via spiffe://payments.local/gateway`);
  t.is(Number(withdrawal!.approval!.expiresAt!.seconds) * 1000, clock.now().getTime() + TTL_MS);
  t.deepEqual(await balance(merchantId), { available: 95_000, held: 5_000 }, "held as every withdrawal is");
  const hold = await ctx().db("ledger_entries").where({ transaction_id: withdrawal!.id, kind: "withdrawal_hold" }).first<{ actor: string }>("actor");
  t.is(hold.actor, withdrawal!.createdBy, "the hold carries who asked");

  const atThreshold = (await key.createWithdrawal(request(merchantId, 1_000n))).withdrawal!;
  t.is(atThreshold.approval, undefined, "at the threshold no approval is needed");
  await eventually(async () => (await statusOf(atThreshold.id)) === "completed", "the one at the threshold is paid");
  await sleep(300);
  t.is(bank.sendCount(withdrawal!.id), 0, "the worker never sent the one that waits");
  t.is(await statusOf(withdrawal!.id), "pending");

  // Listed for the merchant's owner and finance users, and for operators to see.
  const listed = await asUser(merchantId, "finance").listWithdrawalApprovals({ merchantId: "" });
  t.deepEqual(listed.withdrawals.map((w) => w.id), [withdrawal!.id]);
  t.like(listed.withdrawals[0], { accountName: "Elif Şahin", apiKeyId: "pk_test_waiting", amount: 5_000n });
  t.deepEqual((await createServiceClient(PayoutService, url(), { operator: testOperator("viewer") }).listWithdrawalApprovals({ merchantId })).withdrawals.map((w) => w.id), [withdrawal!.id]);

  const approved = await asUser(merchantId, "owner", "ayse@shop.example").approveWithdrawal({ withdrawalId: withdrawal!.id });
  t.is(approved.withdrawal!.status, WithdrawalStatus.PENDING, "still pending: the worker takes it now");
  t.like(approved.withdrawal!.approval, { state: WithdrawalApprovalState.APPROVED, decidedBy: `ayse@shop.example of ${merchantId} via spiffe://payments.local/console` });
  await eventually(async () => (await statusOf(withdrawal!.id)) === "completed", "the approved one is paid");
  await sleep(200);
  t.is(bank.sendCount(withdrawal!.id), 1, "sent exactly once");
  t.deepEqual(
    (await eventsOf(withdrawal!.id)).map((e) => e.topic),
    ["payout.v1.withdrawal_approved", "payout.v1.withdrawal_processing", "payout.v1.withdrawal_completed"],
    "the approval's own event (no callback), then the status changes",
  );
  t.is((await eventsOf(withdrawal!.id))[0]!.approvedBy, `ayse@shop.example of ${merchantId} via spiffe://payments.local/console`);
  t.is((await asUser(merchantId, "owner").listWithdrawalApprovals({})).withdrawals.length, 0, "nothing waits any more");
  t.like(await rejectionOf(asUser(merchantId, "finance").approveWithdrawal({ withdrawalId: withdrawal!.id })), { code: Code.FailedPrecondition, reason: "APPROVAL_NOT_PENDING" });
  await assertLedger(t, merchantId);
});

test.serial("a threshold the owner set a moment ago applies to the very next API withdrawal, though this replica's cache still holds the merchant without it", async (t) => {
  const merchantId = await shop("Fresh Shop");
  // The cache as it would stand before the threshold's MerchantChanged arrives: the merchant without it.
  const { merchant } = await createServiceClient(MerchantService, url()).getMerchant({ merchantId });
  ctx().merchantCache.invalidate(merchantId);
  await ctx().merchantCache.get(merchantId, () => Promise.resolve({ ...merchant!, withdrawalApprovalThreshold: undefined }));
  const { withdrawal } = await gateway(merchantId).createWithdrawal(request(merchantId, 5_000n));
  t.like(withdrawal!.approval, { state: WithdrawalApprovalState.AWAITING }, "asked afresh for an untrusted key");
  // A trusted key's is marked as going above the threshold unasked, from the same fresh answer.
  const trusted = (await gateway(merchantId, true).createWithdrawal(request(merchantId, 5_000n))).withdrawal!;
  t.like(trusted.approval, { state: WithdrawalApprovalState.TRUSTED_KEY });
  await asUser(merchantId, "owner").rejectWithdrawal({ withdrawalId: withdrawal!.id });
});

test.serial("who may decide: owner and finance of the merchant; not a developer, a viewer, an API key, any operator, or another merchant's owner", async (t) => {
  const merchantId = await shop("Guarded Shop");
  const other = await shop("Other Shop");
  const { withdrawal } = await gateway(merchantId).createWithdrawal(request(merchantId, 2_000n));
  const id = withdrawal!.id;
  const before = JSON.stringify(await ctx().db("withdrawals").where({ id }).first());
  for (const role of ["developer", "viewer"] as const) {
    t.like(await rejectionOf(asUser(merchantId, role).approveWithdrawal({ withdrawalId: id })), { code: Code.PermissionDenied }, `${role} approves`);
    t.like(await rejectionOf(asUser(merchantId, role).rejectWithdrawal({ withdrawalId: id })), { code: Code.PermissionDenied }, `${role} rejects`);
    t.like(await rejectionOf(asUser(merchantId, role).listWithdrawalApprovals({})), { code: Code.PermissionDenied }, `${role} lists`);
  }
  for (const role of ["operator", "finance", "admin"] as const) {
    const operator = createServiceClient(PayoutService, url(), { operator: testOperator(role), approver: null });
    t.like(await rejectionOf(operator.approveWithdrawal({ merchantId, withdrawalId: id })), { code: Code.PermissionDenied }, `operator ${role}`);
    t.like(await rejectionOf(operator.rejectWithdrawal({ merchantId, withdrawalId: id })), { code: Code.PermissionDenied }, `operator ${role}`);
  }
  // Even a key that may withdraw cannot approve its own withdrawal.
  t.like(await rejectionOf(gateway(merchantId, true).approveWithdrawal({ merchantId, withdrawalId: id })), { code: Code.PermissionDenied });
  t.like(await rejectionOf(asUser(other, "owner").approveWithdrawal({ withdrawalId: id })), { code: Code.NotFound }, "another merchant's owner: not found");
  t.like(await rejectionOf(asUser(other, "owner").approveWithdrawal({ merchantId, withdrawalId: id })), { code: Code.NotFound });
  t.like(await rejectionOf(asUser(merchantId, "owner").approveWithdrawal({ withdrawalId: "wdr_unknown" })), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
  t.like(await rejectionOf(asUser(merchantId, "owner").rejectWithdrawal({ withdrawalId: id, reason: "x".repeat(501) })), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "reason" });
  t.like(await rejectionOf(asUser(merchantId, "owner").approveWithdrawal({ withdrawalId: "" })), { code: Code.InvalidArgument, field: "withdrawal_id" });
  t.is(JSON.stringify(await ctx().db("withdrawals").where({ id }).first()), before, "nothing changed");
  await sleep(200);
  t.is(bank.sendCount(id), 0);
  // The decisions a person tried and was refused are in the merchant's audit trail.
  const audited = await ctx().db("operator_audit").where({ rpc: "payments.payout.v1.PayoutService/ApproveWithdrawal" }).select<Array<{ actor: string; outcome: string }>>("actor", "outcome");
  t.true(audited.some((a) => a.actor === `developer@${merchantId}.example.com`.toLowerCase() && a.outcome === "PERMISSION_DENIED"), JSON.stringify(audited));
  // Left waiting for no one: rejected, so no later test's expiry finds it.
  await asUser(merchantId, "owner").rejectWithdrawal({ withdrawalId: id });
});

test.serial("rejected: cancelled with APPROVAL_REJECTED, its cancelled event, the hold back; never sent", async (t) => {
  const merchantId = await shop("Rejecting Shop");
  const { withdrawal } = await gateway(merchantId).createWithdrawal(request(merchantId, 7_500n));
  const rejected = await asUser(merchantId, "finance", "mehmet@shop.example").rejectWithdrawal({ withdrawalId: withdrawal!.id, reason: "  not our customer  " });
  t.like(rejected.withdrawal, { status: WithdrawalStatus.CANCELLED, failureReason: "APPROVAL_REJECTED" });
  t.like(rejected.withdrawal!.approval, { state: WithdrawalApprovalState.REJECTED, note: "not our customer", decidedBy: `mehmet@shop.example of ${merchantId} via spiffe://payments.local/console` });
  t.deepEqual(await balance(merchantId), { available: 100_000, held: 0 }, "the hold is back");
  const events = await eventsOf(withdrawal!.id);
  t.deepEqual(events, [{ topic: "payout.v1.withdrawal_cancelled", failureReason: "APPROVAL_REJECTED" }], "one cancelled event: the merchant's callback");
  const release = await ctx().db("ledger_entries").where({ transaction_id: withdrawal!.id, kind: "withdrawal_release" }).first<{ actor: string }>("actor");
  t.is(release.actor, `mehmet@shop.example of ${merchantId} via spiffe://payments.local/console`);
  t.like(await rejectionOf(asUser(merchantId, "owner").approveWithdrawal({ withdrawalId: withdrawal!.id })), { reason: "APPROVAL_NOT_PENDING" });
  await sleep(200);
  t.is(bank.sendCount(withdrawal!.id), 0);
  await assertLedger(t, merchantId);
});

test.serial("a trusted key's withdrawal above the threshold goes at once, marked as such", async (t) => {
  const merchantId = await shop("Trusting Shop");
  const { withdrawal } = await gateway(merchantId, true).createWithdrawal(request(merchantId, 9_000n));
  t.like(withdrawal!.approval, { state: WithdrawalApprovalState.TRUSTED_KEY });
  await eventually(async () => (await statusOf(withdrawal!.id)) === "completed", "paid without approval");
  t.is(bank.sendCount(withdrawal!.id), 1);
  t.like(await rejectionOf(asUser(merchantId, "owner").approveWithdrawal({ withdrawalId: withdrawal!.id })), { reason: "APPROVAL_NOT_PENDING" });
});

test.serial("cancelled by the merchant while it waits: the approval ends undecided, is no longer listed and cannot be approved", async (t) => {
  const merchantId = await shop("Cancelling Shop");
  const key = gateway(merchantId);
  const { withdrawal } = await key.createWithdrawal(request(merchantId, 3_000n));
  const cancelled = await key.cancelWithdrawal({ merchantId, withdrawalId: withdrawal!.id });
  t.like(cancelled.withdrawal, { status: WithdrawalStatus.CANCELLED, failureReason: "" });
  t.like(cancelled.withdrawal!.approval, { state: WithdrawalApprovalState.CANCELLED });
  t.is((await asUser(merchantId, "owner").listWithdrawalApprovals({})).withdrawals.length, 0);
  t.like(await rejectionOf(asUser(merchantId, "owner").approveWithdrawal({ withdrawalId: withdrawal!.id })), { reason: "APPROVAL_NOT_PENDING" });
  await assertLedger(t, merchantId);
});

test.serial("many deciders at once on MariaDB: six approvers and two rejecters per withdrawal, the worker running: one decision each, sent at most once, nothing doubled", async (t) => {
  const merchantId = await shop("Busy Shop");
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push((await gateway(merchantId).createWithdrawal(request(merchantId, 2_000n + BigInt(i)))).withdrawal!.id);
  const approvers = Array.from({ length: 6 }, (_, i) => asUser(merchantId, i % 2 ? "owner" : "finance", `approver${i}@busy.example`));
  const rejecters = Array.from({ length: 2 }, (_, i) => asUser(merchantId, "finance", `rejecter${i}@busy.example`));
  const calls = ids.flatMap((withdrawalId) => [
    ...approvers.map((c) => () => c.approveWithdrawal({ withdrawalId })),
    ...rejecters.map((c) => () => c.rejectWithdrawal({ withdrawalId, reason: "race" })),
  ]);
  const outcomes = await Promise.allSettled(calls.sort(() => Math.random() - 0.5).map((call) => call()));
  const refusals = outcomes.flatMap((o) => (o.status === "rejected" ? [errorInfo(o.reason)] : []));
  for (const r of refusals) t.is(r.reason, "APPROVAL_NOT_PENDING", `${r.code} ${r.message}`);
  t.is(outcomes.length - refusals.length, ids.length, "exactly one decision per withdrawal");
  await eventually(async () => (await ctx().db("withdrawals").whereIn("id", ids).whereIn("status", ["pending", "processing"]).first("id")) === undefined, "every one decided and, if approved, paid");
  await sleep(200);
  for (const row of await ctx().db("withdrawals").whereIn("id", ids).select<Array<{ id: string; status: string; approval: string }>>("id", "status", "approval")) {
    if (row.approval === "approved") {
      t.is(row.status, "completed");
      t.is(bank.sendCount(row.id), 1, `${row.id} sent once`);
    } else {
      t.deepEqual([row.status, row.approval], ["cancelled", "rejected"]);
      t.is(bank.sendCount(row.id), 0);
    }
    const entries = await ctx().db("ledger_entries").where({ transaction_id: row.id }).select<Array<{ kind: string }>>("kind");
    t.deepEqual(entries.map((e) => e.kind).sort(), row.approval === "approved" ? ["withdrawal_hold", "withdrawal_settle"] : ["withdrawal_hold", "withdrawal_release"]);
  }
  await assertLedger(t, merchantId);
});

test.serial("an approval racing the expiry job (two replicas a millisecond apart) and the worker: exactly one wins, nothing doubled", async (t) => {
  const merchantId = await shop("Racing Shop");
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await gateway(merchantId).createWithdrawal(request(merchantId, 1_500n + BigInt(i)))).withdrawal!.id);
  // This replica's clock sits a millisecond before the approvals lapse; the other's, at the moment they do.
  clock.advance(TTL_MS - 1);
  const later = { now: () => new Date(clock.now().getTime() + 1) };
  // Interleaved: approvals two milliseconds apart, and the other replica's passes among them, one
  // withdrawal per transaction, so each side takes some of them first.
  const approvals = ids.map((withdrawalId, i) => sleep(2 * i).then(() => asUser(merchantId, "owner").approveWithdrawal({ withdrawalId })));
  const expiries = [8, 12].map((ms) => sleep(ms).then(() => expireWithdrawalApprovals({ ...ctx(), clock: later }, 1)));
  const settled = await Promise.allSettled(approvals);
  const passes = await Promise.all(expiries);
  const approved = settled.filter((s) => s.status === "fulfilled").length;
  for (const s of settled) if (s.status === "rejected") t.is(errorInfo(s.reason).reason, "APPROVAL_NOT_PENDING");
  const expired = passes.reduce((a, b) => a + b, 0);
  t.is(approved + expired, ids.length, `each decided once: ${approved} approved, ${expired} expired`);
  t.log(`${approved} approved, ${expired} expired`);
  await eventually(async () => (await ctx().db("withdrawals").whereIn("id", ids).whereIn("status", ["pending", "processing"]).first("id")) === undefined, "every one decided");
  await sleep(200);
  for (const row of await ctx().db("withdrawals").whereIn("id", ids).select<Array<Record<string, string>>>("id", "status", "approval", "failure_reason")) {
    if (row.approval === "approved") t.true(row.status === "completed" && bank.sendCount(row.id!) === 1, JSON.stringify(row));
    else t.deepEqual([row.status, row.approval, row.failure_reason, bank.sendCount(row.id!)], ["cancelled", "expired", "APPROVAL_EXPIRED", 0]);
  }
  await assertLedger(t, merchantId);
  clock.advance(1);
});

test.serial("not decided within WITHDRAWAL_APPROVAL_TTL: the job cancels it (APPROVAL_EXPIRED), its event, the hold back; a late approval is refused", async (t) => {
  const merchantId = await shop("Slow Shop");
  const { withdrawal } = await gateway(merchantId).createWithdrawal(request(merchantId, 4_000n));
  clock.advance(TTL_MS - 1);
  t.like(await asUser(merchantId, "owner").listWithdrawalApprovals({}), { withdrawals: [{ id: withdrawal!.id }] }, "still listed a millisecond before");
  clock.advance(1);
  t.is((await asUser(merchantId, "owner").listWithdrawalApprovals({})).withdrawals.length, 0, "lapsed: no longer offered");
  // Refused either way: lapsed (APPROVAL_EXPIRED), or already cancelled by the job running every 100 ms (APPROVAL_NOT_PENDING).
  const late = await rejectionOf(asUser(merchantId, "owner").approveWithdrawal({ withdrawalId: withdrawal!.id }));
  t.is(late.code, Code.FailedPrecondition);
  t.true(["APPROVAL_EXPIRED", "APPROVAL_NOT_PENDING"].includes(late.reason ?? ""), late.reason);
  await eventually(async () => (await statusOf(withdrawal!.id)) === "cancelled", "the expiry job cancels it");
  const row = (await ctx().db("withdrawals").where({ id: withdrawal!.id }).first()) as Record<string, unknown>;
  t.like(row, { failure_reason: "APPROVAL_EXPIRED", approval: "expired", approval_decided_by: "payout approval expiry: undecided after 1h" });
  t.deepEqual(await eventsOf(withdrawal!.id), [{ topic: "payout.v1.withdrawal_cancelled", failureReason: "APPROVAL_EXPIRED" }]);
  t.deepEqual(await balance(merchantId), { available: 100_000, held: 0 });
  t.is(bank.sendCount(withdrawal!.id), 0);
  await assertLedger(t, merchantId);
});
