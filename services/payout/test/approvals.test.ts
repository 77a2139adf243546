import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus } from "@payments/contracts/operator";
import { PayoutService, WithheldCreditStatus } from "@payments/contracts/payout";
import { newId, type RunningServices } from "@payments/kit";
import { type OperatorIdentity } from "@payments/access";
import { createServiceClient, rejectionOf, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { creditDeposit } from "../src/deposit-credits.js";
import { ORDINARY } from "./transfer-returns-suite.js";
import { payoutContext } from "./worker-fixtures.js";

// Four-eyes in the payout service: live money moved by hand (a balance adjustment, a transfer
// return, crediting withheld money) waits for a second finance operator; a sandbox merchant's
// adjustment and a sandbox return go through on one. SQLite, worker off.
const dir = mkdtempSync(join(tmpdir(), "payout-approvals-"));
let running: RunningServices | undefined;

const MAKER = testOperator("finance", "finance-ayse@example.com");
const CHECKER = testOperator("finance", "finance-mehmet@example.com");

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "payout"], { env: { LOG_LEVEL: "fatal", MASTER_KEY: "a7".repeat(32), PAYOUT_WORKER: "0", DATA_DIR: dir } });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running!.server.url;
/** The maker's calls come back APPROVAL_REQUIRED rather than being approved for them. */
const maker = () => createServiceClient(PayoutService, url(), { operator: MAKER, approver: null });
const approvals = (operator: OperatorIdentity) => createServiceClient(ApprovalService, url(), { operator, service: "payout" });

async function newMerchant(sandbox: boolean): Promise<string> {
  return (await createServiceClient(MerchantService, url()).createMerchant({ name: sandbox ? "Sandbox Shop" : "Live Shop", sandbox })).merchant!.id;
}

async function available(merchantId: string): Promise<bigint> {
  const { balances } = await createServiceClient(PayoutService, url()).getBalances({ merchantId });
  return balances.find((b) => b.currency === "TRY")?.available ?? 0n;
}

/** The id of the approval the refusal names, after checking it is APPROVAL_REQUIRED. */
async function approvalRequired(t: ExecutionContext, call: Promise<unknown>): Promise<string> {
  const info = await rejectionOf(call);
  t.like(info, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  const id = info.details?.approvalId;
  t.truthy(id, "the refusal names the approval");
  return id ?? "";
}

test("a sandbox merchant's balance adjustment goes through on one finance operator", async (t) => {
  const merchantId = await newMerchant(true);
  const { entry } = await maker().adjustBalance({ merchantId, amount: 5_000n, reason: "test funds" });
  t.is(entry?.availableDelta, 5_000n);
  t.is(await available(merchantId), 5_000n);
});

test("a live merchant's balance adjustment waits for a second finance operator: nothing moves until they approve, the maker cannot, and it runs once", async (t) => {
  const merchantId = await newMerchant(false);
  const id = await approvalRequired(t, maker().adjustBalance({ merchantId, amount: 7_500n, reason: "bank fee refund" }));
  t.is(await available(merchantId), 0n, "nothing moved while it waits");
  const { approval: pending } = await approvals(CHECKER).getApproval({ id });
  t.like(pending, { status: ApprovalStatus.PENDING, maker: MAKER.subject, rpc: "payments.payout.v1.PayoutService/AdjustBalance", reason: "bank fee refund" });

  t.like(await rejectionOf(approvals(MAKER).approve({ id, note: "my own" })), { code: Code.PermissionDenied, reason: "MAKER_CANNOT_APPROVE" });
  t.like(await rejectionOf(approvals(testOperator("operator", "operator-zeynep@example.com")).approve({ id, note: "not finance" })), { code: Code.PermissionDenied });
  t.is(await available(merchantId), 0n);

  const { approval } = await approvals(CHECKER).approve({ id, note: "checked the bank statement" });
  t.like(approval, { status: ApprovalStatus.APPROVED, decidedBy: CHECKER.subject, outcome: "ok" });
  t.is(await available(merchantId), 7_500n);
  t.like(await rejectionOf(approvals(testOperator("finance", "finance-third@example.com")).approve({ id, note: "again" })), { reason: "APPROVAL_NOT_PENDING" });
  t.is(await available(merchantId), 7_500n, "run once");
});

test("a rejected adjustment never runs", async (t) => {
  const merchantId = await newMerchant(false);
  const id = await approvalRequired(t, maker().adjustBalance({ merchantId, amount: 1_000n, reason: "typo?" }));
  const { approval } = await approvals(CHECKER).reject({ id, reason: "no such refund" });
  t.is(approval?.status, ApprovalStatus.REJECTED);
  t.like(await rejectionOf(approvals(CHECKER).approve({ id, note: "changed my mind" })), { reason: "APPROVAL_NOT_PENDING" });
  t.is(await available(merchantId), 0n);
});

test("a sandbox transfer return goes through on one finance operator; a live one waits, and its approved run records maker and approver", async (t) => {
  const request = { iban: ORDINARY, recipientName: "Zeynep Kaya", amount: 12_345n, currency: "", reason: "no deposit matches it", actor: "" };
  const sandbox = (await maker().createTransferReturn({ ...request, transferId: `trf_${newId("t").slice(-10)}`, sandbox: true })).transferReturn!;
  t.is(sandbox.actor, MAKER.subject);

  const transferId = `trf_${newId("t").slice(-10)}`;
  const id = await approvalRequired(t, maker().createTransferReturn({ ...request, transferId, sandbox: false }));
  const db = payoutContext(running!).db;
  t.deepEqual(await db("transfer_returns").where({ transfer_id: transferId }).select("id"), [], "nothing stored while it waits");
  const { approval } = await approvals(CHECKER).approve({ id, note: "sender confirmed" });
  t.is(approval?.outcome, "ok");
  const rows = await db("transfer_returns").where({ transfer_id: transferId }).select<Array<{ actor: string }>>("actor");
  t.deepEqual(rows.map((r) => r.actor), [`${MAKER.subject}, approved by ${CHECKER.subject}`]);
});

test("crediting withheld sandbox money to a live merchant waits for a second finance operator; dismissing it does not", async (t) => {
  const merchantId = await newMerchant(true);
  const withheld = async () => {
    const depositId = newId("dep");
    const event = create(DepositStatusChangedSchema, {
      eventId: newId("evt"),
      deposit: { id: depositId, merchantId, amount: 3_000n, requestedAmount: 3_000n, currency: "TRY", status: DepositStatus.COMPLETED, sequence: 2n, sandbox: true },
      previousStatus: DepositStatus.PENDING,
      occurredAt: timestampNow(),
    });
    t.is(await creditDeposit(payoutContext(running!), toBinary(DepositStatusChangedSchema, event)), "refused");
    const { credits } = await maker().listWithheldCredits({ merchantId, limit: 100 });
    return credits.find((c) => c.depositId === depositId)!.id;
  };
  // The merchant went live before its sandbox deposit's event arrived (withheld-credits-suite.ts).
  await running!.contexts.get("merchant")!.db("merchants").where({ id: merchantId }).update({ sandbox: false });
  payoutContext(running!).merchantCache.invalidate(merchantId);

  const toDismiss = await withheld();
  const dismissed = await maker().resolveWithheldCredit({ id: toDismiss, actor: "", reason: "test payment", decision: { case: "dismiss", value: true } });
  t.like(dismissed.credit, { status: WithheldCreditStatus.DISMISSED, resolvedBy: MAKER.subject });

  const toCredit = await withheld();
  const id = await approvalRequired(t, maker().resolveWithheldCredit({ id: toCredit, actor: "", reason: "the bank shows it arrived", decision: { case: "credit", value: true } }));
  t.is(await available(merchantId), 0n, "nothing credited while it waits");
  const { approval } = await approvals(CHECKER).approve({ id, note: "seen on the statement" });
  t.is(approval?.outcome, "ok");
  t.is(await available(merchantId), 3_000n);
  const { credits } = await maker().listWithheldCredits({ merchantId, limit: 100 });
  t.like(credits.find((c) => c.id === toCredit), { status: WithheldCreditStatus.CREDITED, resolvedBy: `${MAKER.subject}, approved by ${CHECKER.subject}` });
});
