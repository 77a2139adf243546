import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Code } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus } from "@payments/contracts/operator";
import type { RunningServices } from "@payments/kit";
import type { OperatorIdentity } from "@payments/access";
import { createServiceClient, rejectionOf, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// Four-eyes in the merchant service: a switch from sandbox to live (the merchant's payments
// become real money) waits for a second admin; a switch back to sandbox, and setting the kind a
// merchant already has, go through on one. SQLite, with the deposit and payout services the
// switch asks.
const dir = mkdtempSync(join(tmpdir(), "merchant-approvals-"));
let running: RunningServices | undefined;

const ADMIN = testOperator("admin", "admin-ayse@example.com");
const CHECKER = testOperator("admin", "admin-mehmet@example.com");

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: randomBytes(32).toString("hex"), PAYOUT_WORKER: "0" },
  });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running!.server.url;
/** The maker's calls come back APPROVAL_REQUIRED rather than being approved for them. */
const as = (operator: OperatorIdentity) => createServiceClient(MerchantService, url(), { operator, approver: null });
const approvals = (operator: OperatorIdentity) => createServiceClient(ApprovalService, url(), { operator, service: "merchant" });
const sandboxOf = async (merchantId: string) => (await as(ADMIN).getMerchant({ merchantId })).merchant?.sandbox;

async function newMerchant(sandbox: boolean): Promise<string> {
  return (await as(ADMIN).createMerchant({ name: sandbox ? "Sandbox Shop" : "Live Shop", allowedIps: [], callbackUrl: "", sandbox })).merchant!.id;
}

test("a switch to live waits for a second admin, never the maker, and is made once approved", async (t) => {
  const merchantId = await newMerchant(true);
  const info = await rejectionOf(as(ADMIN).setSandbox({ merchantId, sandbox: false }));
  t.like(info, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  const id = info.details?.approvalId ?? "";
  t.truthy(id);
  t.true(await sandboxOf(merchantId), "still sandbox while it waits");
  const { approval: pending } = await approvals(CHECKER).getApproval({ id });
  t.like(pending, { status: ApprovalStatus.PENDING, maker: ADMIN.subject, rpc: "payments.merchant.v1.MerchantService/SetSandbox" });
  t.regex(pending!.summary, new RegExp(`switch merchant ${merchantId} .* from sandbox to live`));

  t.like(await rejectionOf(approvals(ADMIN).approve({ id, note: "my own" })), { code: Code.PermissionDenied, reason: "MAKER_CANNOT_APPROVE" });
  t.like(await rejectionOf(approvals(testOperator("finance", "finance-zeynep@example.com")).approve({ id, note: "not an admin" })), { code: Code.PermissionDenied });
  t.true(await sandboxOf(merchantId));

  const { approval } = await approvals(CHECKER).approve({ id, note: "contract signed" });
  t.like(approval, { status: ApprovalStatus.APPROVED, decidedBy: CHECKER.subject, outcome: "ok" });
  t.false(await sandboxOf(merchantId));
});

test("a rejected switch to live is never made", async (t) => {
  const merchantId = await newMerchant(true);
  const id = (await rejectionOf(as(ADMIN).setSandbox({ merchantId, sandbox: false }))).details?.approvalId ?? "";
  t.is((await approvals(CHECKER).reject({ id, reason: "no contract yet" })).approval?.status, ApprovalStatus.REJECTED);
  t.like(await rejectionOf(approvals(CHECKER).approve({ id, note: "changed my mind" })), { reason: "APPROVAL_NOT_PENDING" });
  t.true(await sandboxOf(merchantId));
});

test("a switch back to sandbox, and live for a merchant that is live already, go through on one admin", async (t) => {
  const merchantId = await newMerchant(false);
  t.false((await as(ADMIN).setSandbox({ merchantId, sandbox: false })).merchant!.sandbox, "the kind it has is no switch");
  t.true((await as(ADMIN).setSandbox({ merchantId, sandbox: true })).merchant!.sandbox);
});
