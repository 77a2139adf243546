import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Code } from "@connectrpc/connect";
import { fromBinary } from "@bufbuild/protobuf";
import { CreateMerchantResponseSchema, MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus } from "@payments/contracts/operator";
import type { RunningServices } from "@payments/kit";
import type { OperatorIdentity } from "@payments/access";
import { createServiceClient, rejectionOf, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// Four-eyes in the merchant service: creating a live merchant and a switch from sandbox to live
// (the merchant's payments become real money) wait for a second admin; a sandbox merchant, a
// switch back to sandbox, and setting the kind a merchant already has, go through on one. SQLite, with the deposit and payout services the
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

/** A merchant of the kind asked: a live one is approved by the harness's second admin (its creation is four-eyes too). */
async function newMerchant(sandbox: boolean): Promise<string> {
  const maker = createServiceClient(MerchantService, url(), { operator: ADMIN });
  return (await maker.createMerchant({ name: `${sandbox ? "Sandbox" : "Live"} Shop ${randomBytes(3).toString("hex")}`, allowedIps: [], callbackUrl: "", sandbox })).merchant!.id;
}

test("creating a live merchant waits for a second admin, never the maker; the approver gets its secrets once, the stored answer never", async (t) => {
  // Other tests make merchants meanwhile: count the ones of this name.
  const count = async () => (await as(ADMIN).listMerchants({ pageSize: 100 })).merchants.filter((m) => m.name === "Live Shop Two").length;
  const before = 0;
  t.is(await count(), before);
  const info = await rejectionOf(as(ADMIN).createMerchant({ name: "Live Shop Two", allowedIps: [], callbackUrl: "", sandbox: false }));
  t.like(info, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  const id = info.details?.approvalId ?? "";
  t.is(await count(), before, "nothing is made while it waits");
  t.regex((await approvals(CHECKER).getApproval({ id })).approval!.summary, /create live merchant Live Shop Two/);
  // The same admin, as the case of their email would make them someone else: still the maker.
  t.like(await rejectionOf(approvals({ ...ADMIN, subject: ADMIN.subject.toUpperCase() }).approve({ id, note: "me again" })), { code: Code.PermissionDenied, reason: "MAKER_CANNOT_APPROVE" });
  t.is(await count(), before);

  const { approval, answer } = await approvals(CHECKER).approve({ id, note: "contract signed" });
  t.like(approval, { status: ApprovalStatus.APPROVED, outcome: "ok" });
  const made = fromBinary(CreateMerchantResponseSchema, answer);
  t.regex(made.apiSecret, /^sk_/, "the approver is given the API secret, once");
  t.false(made.merchant!.sandbox);
  t.false(approval!.responseJson.includes(made.apiSecret), "the stored answer leaves it out");
  t.is(await count(), before + 1);
  // A sandbox merchant is one admin's to make.
  t.true((await as(ADMIN).createMerchant({ name: "Sandbox Shop Two", allowedIps: [], callbackUrl: "", sandbox: true })).merchant!.sandbox);
});

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
