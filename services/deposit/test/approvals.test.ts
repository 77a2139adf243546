import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Code } from "@connectrpc/connect";
import { DepositService, DepositStatus, TransferStatus } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService } from "@payments/contracts/operator";
import type { RunningServices } from "@payments/kit";
import type { OperatorIdentity } from "@payments/access";
import { createServiceClient, rejectionOf, testCustomer, testOperator, turkishIban } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";

// Four-eyes in the deposit service: a live deposit confirmed by hand, or a live transfer matched
// or completed by hand, above APPROVAL_THRESHOLD waits for a second operator; a live transfer's
// return always does (and needs finance); sandbox money never does. SQLite, the threshold 200 TRY.
const THRESHOLD = 20_000n;
const dir = mkdtempSync(join(tmpdir(), "deposit-approvals-"));
let running: RunningServices | undefined;

const OPERATOR = testOperator("operator", "operator-ayse@example.com");
const CHECKER = testOperator("operator", "operator-mehmet@example.com");
const FINANCE = testOperator("finance", "finance-ayse@example.com");
const FINANCE_CHECKER = testOperator("finance", "finance-mehmet@example.com");

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], {
    env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "d4".repeat(32), APPROVAL_THRESHOLD: String(THRESHOLD) },
    receivingAccounts: true,
  });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running!.server.url;
/** The maker's calls come back APPROVAL_REQUIRED rather than being approved for them. */
const as = (operator: OperatorIdentity) => createServiceClient(DepositService, url(), { operator, approver: null });
const approvals = (operator: OperatorIdentity) => createServiceClient(ApprovalService, url(), { operator, service: "deposit" });
const deposits = () => createServiceClient(DepositService, url());

let sequence = 0;
async function merchant(sandbox: boolean): Promise<string> {
  return (await createServiceClient(MerchantService, url()).createMerchant({ name: sandbox ? "Sandbox Shop" : "Live Shop", sandbox })).merchant!.id;
}

async function deposit(merchantId: string, amount: bigint) {
  return (await deposits().createDeposit({ merchantId, processId: `approvals-${++sequence}`, amount, customer: testCustomer })).deposit!;
}

const statusOf = async (depositId: string) => (await deposits().getDeposit({ allMerchants: true, key: { case: "depositId", value: depositId } })).deposit?.status;
const transfer = async (transferId: string) => (await deposits().getTransfer({ transferId })).transfer!;

/** A transfer on `iban` that matches nothing (no reference, an amount no pending deposit there has). */
async function unmatched(iban: string, amount: bigint) {
  const { transfer } = await deposits().reportTransfer({
    iban,
    amount,
    senderName: "Fatma Sahin",
    senderIban: turkishIban("0006200000000000012345"),
    reference: "",
    bankTransactionId: `BTX-approvals-${++sequence}`,
  });
  if (transfer?.status !== TransferStatus.UNMATCHED) throw new Error(`the transfer is ${transfer?.status}, not unmatched`);
  return transfer;
}

/** The id of the approval the refusal names, after checking it is APPROVAL_REQUIRED. */
async function approvalRequired(t: ExecutionContext, call: Promise<unknown>): Promise<string> {
  const info = await rejectionOf(call);
  t.like(info, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  t.truthy(info.details?.approvalId, "the refusal names the approval");
  return info.details?.approvalId ?? "";
}

test.serial("a live deposit confirmed by hand up to APPROVAL_THRESHOLD goes through on one operator; above it, or with an amount above it, it waits for a second", async (t) => {
  const merchantId = await merchant(false);
  const small = await deposit(merchantId, THRESHOLD);
  t.is((await as(OPERATOR).confirmDeposit({ depositId: small.id })).deposit?.status, DepositStatus.COMPLETED);

  const large = await deposit(merchantId, THRESHOLD + 1n);
  const id = await approvalRequired(t, as(OPERATOR).confirmDeposit({ depositId: large.id }));
  t.is(await statusOf(large.id), DepositStatus.PENDING, "nothing moved while it waits");
  t.like(await rejectionOf(approvals(OPERATOR).approve({ id, note: "my own" })), { reason: "MAKER_CANNOT_APPROVE" });
  const { approval } = await approvals(CHECKER).approve({ id, note: "seen on the statement" });
  t.is(approval?.outcome, "ok");
  t.is(await statusOf(large.id), DepositStatus.COMPLETED);

  // The amount received decides, not the amount asked for.
  const understated = await deposit(merchantId, 10_000n);
  await approvalRequired(t, as(OPERATOR).confirmDeposit({ depositId: understated.id, amount: THRESHOLD + 5_000n }));
  t.is(await statusOf(understated.id), DepositStatus.PENDING);
});

test.serial("a sandbox deposit above APPROVAL_THRESHOLD is confirmed on one operator", async (t) => {
  const large = await deposit(await merchant(true), THRESHOLD * 10n);
  t.is((await as(OPERATOR).confirmDeposit({ depositId: large.id })).deposit?.status, DepositStatus.COMPLETED);
});

test.serial("matching a live transfer to a deposit waits for a second operator above APPROVAL_THRESHOLD, not below; the approved run records maker and approver as the decider", async (t) => {
  const merchantId = await merchant(false);
  const target = await deposit(merchantId, 90_000n);
  const iban = target.assignedAccount!.iban;

  const small = await unmatched(iban, THRESHOLD - 1n);
  const smallTarget = await deposit(merchantId, 80_000n);
  const resolved = await as(OPERATOR).resolveTransfer({ transferId: small.id, actor: "", reason: "customer sent the receipt", decision: { case: "matchDepositId", value: smallTarget.id } });
  t.like(resolved.transfer, { status: TransferStatus.MATCHED, depositId: smallTarget.id, resolvedBy: OPERATOR.subject });

  const large = await unmatched(iban, THRESHOLD + 1n);
  const id = await approvalRequired(t, as(OPERATOR).resolveTransfer({ transferId: large.id, actor: "someone-else", reason: "customer sent the receipt", decision: { case: "matchDepositId", value: target.id } }));
  t.is((await transfer(large.id)).status, TransferStatus.UNMATCHED, "nothing moved while it waits");
  t.is(await statusOf(target.id), DepositStatus.PENDING);
  const { approval } = await approvals(CHECKER).approve({ id, note: "receipt checked" });
  t.is(approval?.outcome, "ok");
  t.like(await transfer(large.id), { status: TransferStatus.MATCHED, depositId: target.id, resolvedBy: `${OPERATOR.subject}, approved by ${CHECKER.subject}` });
  t.is(await statusOf(target.id), DepositStatus.COMPLETED);
});

test.serial("completing a live deposit from a transfer in review waits for a second operator above APPROVAL_THRESHOLD", async (t) => {
  const merchantId = await merchant(false);
  const target = await deposit(merchantId, 50_000n);
  // Short paid with the reference: review, attached to its deposit (the default rules).
  const { transfer: short } = await deposits().reportTransfer({
    iban: target.assignedAccount!.iban,
    amount: 45_000n,
    senderName: "Ayse Yilmaz",
    reference: target.reference,
    bankTransactionId: `BTX-approvals-${++sequence}`,
  });
  t.is(short?.status, TransferStatus.REVIEW);
  const id = await approvalRequired(t, as(OPERATOR).resolveTransfer({ transferId: short!.id, actor: "", reason: "short by the bank fee", decision: { case: "complete", value: true } }));
  t.is(await statusOf(target.id), DepositStatus.PENDING);
  t.is((await approvals(CHECKER).approve({ id, note: "fee confirmed" })).approval?.outcome, "ok");
  t.like(await transfer(short!.id), { status: TransferStatus.MATCHED, resolvedBy: `${OPERATOR.subject}, approved by ${CHECKER.subject}` });
  t.is(await statusOf(target.id), DepositStatus.COMPLETED);
});

test.serial("a live transfer's return always waits for a second finance operator, even below APPROVAL_THRESHOLD; a sandbox transfer's return does not", async (t) => {
  const live = await deposit(await merchant(false), 70_000n);
  const small = await unmatched(live.assignedAccount!.iban, 1_000n);
  t.like(await rejectionOf(as(OPERATOR).resolveTransfer({ transferId: small.id, actor: "", reason: "unknown sender", decision: { case: "return", value: { iban: "", recipientName: "" } } })), {
    code: Code.PermissionDenied,
  }, "a return is finance's");
  const id = await approvalRequired(t, as(FINANCE).resolveTransfer({ transferId: small.id, actor: "", reason: "unknown sender", decision: { case: "return", value: { iban: "", recipientName: "" } } }));
  t.is((await transfer(small.id)).status, TransferStatus.UNMATCHED, "nothing moved while it waits");
  t.like(await rejectionOf(approvals(CHECKER).approve({ id, note: "not finance" })), { code: Code.PermissionDenied }, "approving a return is finance's too");
  t.is((await approvals(FINANCE_CHECKER).approve({ id, note: "sender confirmed" })).approval?.outcome, "ok");
  t.like(await transfer(small.id), { status: TransferStatus.RETURNING, resolvedBy: `${FINANCE.subject}, approved by ${FINANCE_CHECKER.subject}` });

  const sandbox = await deposit(await merchant(true), 70_000n);
  const testMoney = await unmatched(sandbox.assignedAccount!.iban, THRESHOLD * 2n);
  const returned = await as(FINANCE).resolveTransfer({ transferId: testMoney.id, actor: "", reason: "test money", decision: { case: "return", value: { iban: "", recipientName: "" } } });
  t.like(returned.transfer, { status: TransferStatus.RETURNING, resolvedBy: FINANCE.subject });
});
