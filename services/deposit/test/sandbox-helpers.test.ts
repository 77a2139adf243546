import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { DepositService, DepositStatus, DepositStatusChangedSchema, TransferStatus } from "@payments/contracts/deposit";
import { MerchantService, UnderpaymentRule } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, manualClock, rejectionOf } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import type { DepositContext } from "../src/context.js";
import { depositModule } from "../src/index.js";

// SandboxPayDeposit and SandboxExpireDeposit on the embedded SQLite mode: the merchant's CI
// helpers must take the paths of a real transfer and of the expiry job, and never touch a
// live deposit.
const clock = manualClock(new Date("2026-11-22T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "deposit-sandbox-"));
let running: RunningServices | undefined;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    clock,
    env: { DATA_DIR: dir, LOG_LEVEL: "warn", MASTER_KEY: "ef".repeat(32) },
    receivingAccounts: true,
  });
  deposits = createServiceClient(DepositService, running.server.url);
  merchants = createServiceClient(MerchantService, running.server.url);
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => (running!.contexts.get("deposit") as DepositContext).db;

async function newMerchant(sandbox: boolean): Promise<string> {
  const { merchant } = await merchants.createMerchant({ name: sandbox ? "Sandbox CI Shop" : "Live Shop", sandbox });
  return merchant!.id;
}

let n = 0;
async function newDeposit(merchantId: string, amount = 25_000n) {
  const { deposit } = await deposits.createDeposit({ merchantId, processId: `ci-${++n}`, amount, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  return deposit!;
}

/** The deposit's status-change events in the outbox, by topic. */
async function outboxTopics(depositId: string): Promise<string[]> {
  const rows = (await db()("outbox").select("topic", "payload").orderBy("seq")) as Array<{ topic: string; payload: Uint8Array }>;
  return rows.filter((r) => fromBinary(DepositStatusChangedSchema, new Uint8Array(r.payload)).deposit?.id === depositId).map((r) => r.topic);
}

test.serial("pay reports a sandbox- transfer through ReportTransfer's path and completes the deposit with one event; a repeat is refused", async (t) => {
  const merchantId = await newMerchant(true);
  const deposit = await newDeposit(merchantId);
  const paid = await deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id });
  t.like(paid.deposit, { id: deposit.id, status: DepositStatus.COMPLETED, amount: 25_000n, requestedAmount: 25_000n, sequence: 2n });
  t.like(paid.transfer, { bankTransactionId: `sandbox-${deposit.id}`, depositId: deposit.id, amount: 25_000n, senderName: "Ayşe Yılmaz", iban: deposit.assignedAccount!.iban });
  const transfers = await db()("incoming_transfers").where({ deposit_id: deposit.id }).select<Array<{ id: string }>>("id");
  t.is(transfers.length, 1, "the transfer is on record like a bank's");
  t.is((await db()("deposits").where({ id: deposit.id }).first<{ transfer_id: string | null } | undefined>("transfer_id"))?.transfer_id, transfers[0]!.id);
  t.deepEqual(await outboxTopics(deposit.id), ["deposit.v1.deposit_completed"]);

  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id })), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE" });
  t.like(await rejectionOf(deposits.sandboxExpireDeposit({ merchantId, depositId: deposit.id })), { code: Code.FailedPrecondition, reason: "INVALID_TRANSACTION_STATE" });
  t.is((await db()("incoming_transfers").where({ deposit_id: deposit.id })).length, 1);
  t.deepEqual(await outboxTopics(deposit.id), ["deposit.v1.deposit_completed"], "refused moves wrote no event");
});

test.serial("pay with another amount is handled as such a transfer: under the default rules it waits in review and the deposit stays pending", async (t) => {
  const merchantId = await newMerchant(true);
  const deposit = await newDeposit(merchantId, 30_000n);
  const paid = await deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id, amount: 12_345n, senderName: "  Mehmet Kaya " });
  t.like(paid.deposit, { status: DepositStatus.PENDING, amount: 30_000n, requestedAmount: 30_000n });
  t.like(paid.transfer, { amount: 12_345n, senderName: "Mehmet Kaya", status: TransferStatus.REVIEW, reviewDepositId: deposit.id, source: "sandbox" });
});

test.serial("pay with another amount completes with the amount received when the merchant's rule completes short payments", async (t) => {
  const merchantId = await newMerchant(true);
  await merchants.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.COMPLETE });
  const deposit = await newDeposit(merchantId, 30_000n);
  const paid = await deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id, amount: 12_345n, senderName: "  Mehmet Kaya " });
  t.like(paid.deposit, { status: DepositStatus.COMPLETED, amount: 12_345n, requestedAmount: 30_000n });
  t.like(paid.transfer, { amount: 12_345n, senderName: "Mehmet Kaya", status: TransferStatus.MATCHED });
});

test.serial("expire moves a pending sandbox deposit to expired with the expiry job's event", async (t) => {
  const merchantId = await newMerchant(true);
  const deposit = await newDeposit(merchantId);
  const expired = await deposits.sandboxExpireDeposit({ merchantId, depositId: deposit.id });
  t.like(expired.deposit, { id: deposit.id, status: DepositStatus.EXPIRED, amount: 25_000n, sequence: 2n });
  t.truthy(expired.deposit?.completedAt);
  t.deepEqual(await outboxTopics(deposit.id), ["deposit.v1.deposit_expired"]);
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id })), { reason: "INVALID_TRANSACTION_STATE" });
  t.is((await db()("incoming_transfers").where({ bank_transaction_id: `sandbox-${deposit.id}` })).length, 0, "a refused pay reports no transfer");
});

test.serial("a live merchant's deposit is SANDBOX_ONLY, another merchant's is not found, and nothing changes", async (t) => {
  const live = await newMerchant(false);
  const sandbox = await newMerchant(true);
  const liveDeposit = await newDeposit(live);
  for (const call of [
    () => deposits.sandboxPayDeposit({ merchantId: live, depositId: liveDeposit.id }),
    () => deposits.sandboxExpireDeposit({ merchantId: live, depositId: liveDeposit.id }),
    // An operator's view across merchants does not lift the rule.
    () => deposits.sandboxPayDeposit({ allMerchants: true, depositId: liveDeposit.id }),
  ]) {
    t.like(await rejectionOf(call()), { code: Code.PermissionDenied, reason: "SANDBOX_ONLY" });
  }
  for (const call of [
    () => deposits.sandboxPayDeposit({ merchantId: sandbox, depositId: liveDeposit.id }),
    () => deposits.sandboxExpireDeposit({ merchantId: sandbox, depositId: liveDeposit.id }),
    () => deposits.sandboxPayDeposit({ merchantId: sandbox, depositId: "dep_unknown" }),
  ]) {
    t.like(await rejectionOf(call()), { code: Code.NotFound, reason: "TRANSACTION_NOT_FOUND" });
  }
  // A sandbox deposit whose merchant has since gone live (only a race could do this; written straight in).
  const before = await newDeposit(sandbox);
  await running!.contexts.get("merchant")!.db("merchants").where({ id: sandbox }).update({ sandbox: false });
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId: sandbox, depositId: before.id })), { reason: "SANDBOX_ONLY" });
  t.like(await rejectionOf(deposits.sandboxExpireDeposit({ merchantId: sandbox, depositId: before.id })), { reason: "SANDBOX_ONLY" });

  for (const id of [liveDeposit.id, before.id]) {
    const row = await db()("deposits").where({ id }).first<Record<string, unknown> | undefined>();
    t.like(row, { status: "pending", sequence: 1 });
    t.deepEqual(await outboxTopics(id), []);
  }
  t.is((await db()("incoming_transfers").whereIn("bank_transaction_id", [`sandbox-${liveDeposit.id}`, `sandbox-${before.id}`])).length, 0);
});

test.serial("requests are validated and merchant-scoped", async (t) => {
  const merchantId = await newMerchant(true);
  const deposit = await newDeposit(merchantId);
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ depositId: deposit.id })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.like(await rejectionOf(deposits.sandboxExpireDeposit({ depositId: deposit.id })), { reason: "VALIDATION_ERROR", field: "merchant_id" });
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id, amount: 0n })), { reason: "VALIDATION_ERROR", field: "amount" });
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id, amount: -5n })), { reason: "VALIDATION_ERROR", field: "amount" });
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id, senderName: "x".repeat(201) })), { reason: "VALIDATION_ERROR", field: "sender_name" });
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: deposit.id, senderName: "a\u202Eb" })), { reason: "VALIDATION_ERROR", field: "sender_name" });
  t.like(await rejectionOf(deposits.sandboxPayDeposit({ merchantId, depositId: "" })), { reason: "VALIDATION_ERROR", field: "deposit_id" });
  t.is((await db()("deposits").where({ id: deposit.id }).first<{ status: string } | undefined>("status"))?.status, "pending");
});
