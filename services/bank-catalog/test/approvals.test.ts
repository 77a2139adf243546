import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { Code } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { ApprovalService } from "@payments/contracts/operator";
import type { RunningServices } from "@payments/kit";
import type { OperatorIdentity } from "@payments/access";
import { bankIban, createServiceClient, rejectionOf, testOperator } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// Four-eyes in the bank catalog: a live receiving account (where customers' real money will be
// sent) added active, or made active again, waits for a second admin; a sandbox one, an
// inactive one, and taking one out of use go through on one. SQLite.
const dir = mkdtempSync(join(tmpdir(), "bank-catalog-approvals-"));
let running: RunningServices | undefined;

const ADMIN = testOperator("admin", "admin-ayse@example.com");
const CHECKER = testOperator("admin", "admin-mehmet@example.com");

test.before(async () => {
  running = await startInProcess(["bank-catalog"], { env: { DATA_DIR: dir, LOG_LEVEL: "fatal" } });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running!.server.url;
/** The maker's calls come back APPROVAL_REQUIRED rather than being approved for them. */
const as = (operator: OperatorIdentity) => createServiceClient(BankCatalogService, url(), { operator, approver: null });
const approvals = (operator: OperatorIdentity) => createServiceClient(ApprovalService, url(), { operator, service: "bank-catalog" });

let account = 0;
async function akbank(): Promise<{ bankId: string; iban: string }> {
  const { banks } = await as(ADMIN).listBanks({});
  return { bankId: banks.find((b) => b.code === "0046")!.id, iban: bankIban("0046", 4_100 + ++account, "7") };
}

async function accountByIban(iban: string) {
  const { accounts } = await as(ADMIN).listReceivingAccounts({ bankId: "" });
  return accounts.find((a) => a.iban === iban);
}

async function approvalRequired(t: ExecutionContext, call: Promise<unknown>): Promise<string> {
  const info = await rejectionOf(call);
  t.like(info, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  t.truthy(info.details?.approvalId, "the refusal names the approval");
  return info.details?.approvalId ?? "";
}

test.serial("a live receiving account added active waits for a second admin, never the maker, and is added once approved", async (t) => {
  const { bankId, iban } = await akbank();
  const id = await approvalRequired(t, as(ADMIN).createReceivingAccount({ bankId, accountName: "Ödeme A.Ş.", iban, fastEnabled: false, sandbox: false }));
  t.is(await accountByIban(iban), undefined, "nothing added while it waits");
  t.like(await rejectionOf(approvals(ADMIN).approve({ id, note: "my own" })), { reason: "MAKER_CANNOT_APPROVE" });
  t.like(await rejectionOf(approvals(testOperator("finance", "finance-zeynep@example.com")).approve({ id, note: "not an admin" })), { code: Code.PermissionDenied });
  const { approval } = await approvals(CHECKER).approve({ id, note: "contract seen" });
  t.is(approval?.outcome, "ok");
  t.like(await accountByIban(iban), { active: true, sandbox: false });
});

test.serial("a sandbox account, and a live one added inactive, are added on one admin", async (t) => {
  const sandbox = await akbank();
  t.like((await as(ADMIN).createReceivingAccount({ ...sandbox, accountName: "Sandbox Ödeme", fastEnabled: false, sandbox: true })).account, { active: true, sandbox: true });
  const inactive = await akbank();
  t.like((await as(ADMIN).createReceivingAccount({ ...inactive, accountName: "Later Ödeme", fastEnabled: false, active: false, sandbox: false })).account, { active: false, sandbox: false });
});

test.serial("making a live account active again waits for a second admin; taking it out of use, or re-activating a sandbox one, does not", async (t) => {
  const live = await akbank();
  const created = (await as(ADMIN).createReceivingAccount({ ...live, accountName: "Dormant Ödeme", fastEnabled: false, active: false, sandbox: false })).account!;
  const id = await approvalRequired(t, as(ADMIN).updateReceivingAccount({ accountId: created.id, active: true }));
  t.is((await accountByIban(live.iban))?.active, false, "still inactive while it waits");
  t.is((await approvals(CHECKER).approve({ id, note: "account reopened at the bank" })).approval?.outcome, "ok");
  t.is((await accountByIban(live.iban))?.active, true);
  t.is((await as(ADMIN).updateReceivingAccount({ accountId: created.id, active: false })).account?.active, false, "out of use on one admin");
  t.is((await as(ADMIN).updateReceivingAccount({ accountId: created.id, accountName: "Renamed Ödeme" })).account?.accountName, "Renamed Ödeme", "a rename on one admin");

  const sandbox = await akbank();
  const dormant = (await as(ADMIN).createReceivingAccount({ ...sandbox, accountName: "Sandbox Dormant", fastEnabled: false, active: false, sandbox: true })).account!;
  t.is((await as(ADMIN).updateReceivingAccount({ accountId: dormant.id, active: true })).account?.active, true);
});
