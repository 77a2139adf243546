import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus, AuditService } from "@payments/contracts/operator";
import { PayoutService } from "@payments/contracts/payout";
import { createServiceTransport, errorInfo, type RunningServices } from "@payments/kit";
import { AUDIT_TABLE, isMutating, OPERATOR_ROLES, roleAtLeast, type OperatorRole } from "@payments/access";
import { createServiceClient, rejectionOf as refusal, testOperator } from "@payments/testing";
import { everyRpc, rpcCall, SERVICE_NAMES, sqliteRows, startInProcess, type Rpc, type RpcCall } from "@payments/testing/services";
import type { Knex } from "knex";

// The services check who acts, whoever calls: every mutating RPC of every service, walked from
// the proto descriptors, with an assertion of every role, without one, and with a forged one.
const dir = mkdtempSync(join(tmpdir(), "operator-access-"));
let running: RunningServices;

test.before(async () => {
  running = await startInProcess([...SERVICE_NAMES], { env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "ef".repeat(32), PAYOUT_WORKER: "0" } });
});

test.after.always(async () => {
  await (running as typeof running | undefined)?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const url = () => running.server.url;

function caller(rpc: Rpc, operator: ReturnType<typeof testOperator> | null): RpcCall {
  return rpcCall(rpc, url(), { operator, approver: null });
}

function db(module: string): Knex {
  return running.contexts.get(module)!.db;
}

/** Every table of a module's database but its audit, as text: "nothing changed" is this being equal. */
function snapshot(module: string): Promise<string> {
  return sqliteRows(running, module);
}

async function auditCount(module: string, rpc: string): Promise<number> {
  const row = (await db(module)(AUDIT_TABLE).where({ rpc }).count({ n: "*" }).first()) as { n: number | string };
  return Number(row.n);
}

const mutating = () => everyRpc().filter((r) => isMutating(r.method));

test.serial("the descriptors mark every read: a service's reads are its List, Get, Check and Summarize RPCs, everything else is a mutation", (t) => {
  for (const r of everyRpc()) t.is(isMutating(r.method), !/^(List|Get|Check|Summarize)/.test(r.method.name), `${r.service.typeName}/${r.method.name}`);
  t.true(mutating().length > 30);
});

test.serial("every mutating RPC of every service × every role: allowed, or PERMISSION_DENIED with nothing changed, and audited either way", async (t) => {
  for (const role of OPERATOR_ROLES) {
    for (const r of mutating()) {
      const name = `${r.service.typeName}/${r.method.name}`;
      const before = await snapshot(r.module);
      const audited = await auditCount(r.module, name);
      const outcome = await caller(r, testOperator(role))(create(r.method.input)).then(
        () => undefined,
        (err: unknown) => errorInfo(err),
      );
      const denied = outcome?.code === Code.PermissionDenied && outcome.reason === "PERMISSION_DENIED";
      const may = allowedRoles.get(name);
      t.not(may, undefined, `${name} has no expectation in this test`);
      if (may === null || (may !== undefined && !roleAtLeast(role, may))) {
        t.true(denied, `${role} → ${name}: ${JSON.stringify(outcome)}`);
        t.is(await snapshot(r.module), before, `${role} → ${name} changed nothing`);
      } else {
        t.false(denied, `${role} → ${name} is allowed`);
        t.not(outcome?.code, Code.Unauthenticated, `${role} → ${name}`);
      }
      t.true((await auditCount(r.module, name)) > audited, `${role} → ${name} is in the audit`);
    }
  }
});

test.serial("an operator's RPC without an assertion, or with one signed by another key, is UNAUTHENTICATED and changes nothing", async (t) => {
  const forged = createClient(MerchantService, createServiceTransport(url(), {
    interceptors: [
      (next) => async (req) => {
        req.header.set("x-operator-assertion", "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJtYWxsb3J5In0.AAAA");
        return next(req);
      },
    ],
  }));
  const before = await snapshot("merchant");
  t.like(await refusal(forged.createMerchant({ name: "Forged" })), { code: Code.Unauthenticated, reason: "UNAUTHENTICATED" });
  const bare = createServiceClient(MerchantService, url(), { operator: null, workload: null });
  t.like(await refusal(bare.createMerchant({ name: "Nobody" })), { code: Code.Unauthenticated, reason: "UNAUTHENTICATED" });
  t.is(await snapshot("merchant"), before);
  // A workload its table names (the deposit service reading a merchant) reads without a person.
  const { merchant } = await createServiceClient(MerchantService, url()).createMerchant({ name: "Shop", sandbox: true });
  t.is((await createServiceClient(MerchantService, url(), { operator: null, workload: "deposit" }).getMerchant({ merchantId: merchant!.id })).merchant?.name, "Shop");
});

test.serial("a live adjustment waits for a second finance operator: the maker cannot approve it, another one runs it exactly once, and the audit names both", async (t) => {
  const { merchant } = await createServiceClient(MerchantService, url()).createMerchant({ name: "Live Shop", sandbox: false });
  const merchantId = merchant!.id;
  const maker = testOperator("finance", "ayse@example.com");
  const checker = testOperator("finance", "mehmet@example.com");
  const payouts = (who: typeof maker) => createServiceClient(PayoutService, url(), { operator: who, approver: null });
  const approvals = (who: typeof maker) => createServiceClient(ApprovalService, url(), { operator: who, service: "payout" });

  const asked = await refusal(payouts(maker).adjustBalance({ merchantId, amount: 50_000n, currency: "TRY", reason: "bank fee refund" }));
  t.like(asked, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  const approvalId = asked.details?.approvalId ?? "";
  t.regex(approvalId, /^apr_/);
  const availableNow = async () => (await payouts(maker).getBalances({ merchantId })).balances.find((b) => b.currency === "TRY")?.available ?? 0n;
  t.is(await availableNow(), 0n, "nothing changed yet");

  const pending = await approvals(checker).listApprovals({ status: ApprovalStatus.PENDING });
  t.true(pending.approvals.some((a) => a.id === approvalId && a.maker === "ayse@example.com" && a.summary.includes("500.00 TRY")));

  t.like(await refusal(approvals(maker).approve({ id: approvalId })), { code: Code.PermissionDenied, reason: "MAKER_CANNOT_APPROVE" });
  t.like(await refusal(approvals(testOperator("operator", "ops@example.com")).approve({ id: approvalId })), { code: Code.PermissionDenied, reason: "PERMISSION_DENIED" });

  const [first, second] = await Promise.allSettled([approvals(checker).approve({ id: approvalId, note: "checked the bank fee" }), approvals(testOperator("admin")).approve({ id: approvalId })]);
  const ran = [first, second].filter((r) => r.status === "fulfilled");
  t.is(ran.length, 1, "one approval runs it");
  const done = (ran[0] as PromiseFulfilledResult<{ approval?: { status: ApprovalStatus; outcome: string; decidedBy: string } }>).value.approval;
  t.is(done?.status, ApprovalStatus.APPROVED);
  t.is(done?.outcome, "ok");
  t.is(await availableNow(), 50_000n, "credited once");
  const refusedAgain = [first, second].find((r) => r.status === "rejected");
  t.like(refusedAgain && errorInfo(refusedAgain.reason), { code: Code.FailedPrecondition, reason: "APPROVAL_NOT_PENDING" });

  const { records } = await createServiceClient(AuditService, url(), { operator: checker, service: "payout" }).listAuditRecords({ targetId: merchantId });
  const run = records.find((r) => r.rpc.endsWith("/AdjustBalance") && r.outcome === "ok");
  // Whichever of the two racing approvers won: the run is theirs, in their role.
  t.like(run, { maker: "ayse@example.com", approvalId, actor: done?.decidedBy, role: done?.decidedBy === checker.subject ? checker.role : "admin" });
  t.true(records.some((r) => r.rpc.endsWith("/AdjustBalance") && r.outcome === "APPROVAL_REQUIRED" && r.actor === "ayse@example.com"));
});

test.serial("a sandbox merchant's adjustment needs one operator", async (t) => {
  const { merchant } = await createServiceClient(MerchantService, url()).createMerchant({ name: "Sandbox Shop", sandbox: true });
  const res = await createServiceClient(PayoutService, url(), { operator: testOperator("finance") }).adjustBalance({ merchantId: merchant!.id, amount: 1_000n, currency: "TRY", reason: "demo" });
  t.is(res.balance?.available, 1_000n);
});

/** What the walk expects: the least role of each mutating RPC (README, "Operators: roles and approvals"). */
/** The least role each mutating RPC admits; null: no operator at all (a workload's own call, the mode fence the merchant service raises). */
const allowedRoles = new Map<string, OperatorRole | null>(
  Object.entries({
    "payments.merchant.v1.MerchantService": { CreateMerchant: "admin", RotateSecret: "admin", RotateWebhookSecret: "admin", SetAllowedIps: "admin", SetCallbackUrl: "admin", SetDisplayName: "admin", SetStatus: "admin", SetSandbox: "admin", SetRateLimit: "admin", SetPaymentRules: "admin", RevokeSecret: "admin", SetWithdrawalApproval: "admin", CreateApiKey: "admin", RevokeApiKey: "admin", SetApiKeyTrusted: "admin" },
    "payments.bankcatalog.v1.BankCatalogService": { CreateBank: "admin", UpdateBank: "admin", UpdateFastSettings: "admin", SetMerchantLimit: "admin", ClearMerchantLimit: "admin", CreateReceivingAccount: "admin", UpdateReceivingAccount: "admin", SeedSandboxAccounts: "admin" },
    "payments.deposit.v1.DepositService": { CreateDeposit: "admin", CancelDeposit: "operator", ConfirmDeposit: "operator", RejectDeposit: "operator", ReportTransfer: "operator", SimulatePayment: "operator", SandboxPayDeposit: "operator", SandboxExpireDeposit: "operator", ResolveTransfer: "operator", ImportStatement: "finance", RaiseModeFence: null, LowerModeFence: null },
    "payments.payout.v1.PayoutService": { CreateWithdrawal: "admin", CancelWithdrawal: "operator", CompleteWithdrawal: "operator", FailWithdrawal: "operator", AdjustBalance: "finance", CreateTransferReturn: "finance", CompleteTransferReturn: "finance", FailTransferReturn: "finance", ResolveWithheldCredit: "finance", RaiseModeFence: null, LowerModeFence: null, ApproveWithdrawal: null, RejectWithdrawal: null },
    "payments.callback.v1.CallbackService": { RedeliverEvent: "support", RedeliverFailedEvents: "support", SendTestEvent: "support" },
  }).flatMap(([service, methods]) => Object.entries(methods).map(([m, role]) => [`${service}/${m}`, role as OperatorRole | null])),
);

test.serial("a request that would be refused as invalid is refused at once, not stored for a second operator to approve", async (t) => {
  const { merchant } = await createServiceClient(MerchantService, url()).createMerchant({ name: "Live Shop 2", sandbox: false });
  const maker = testOperator("finance", "ayse@example.com");
  const before = await createServiceClient(ApprovalService, url(), { operator: maker, service: "payout" }).listApprovals({ status: ApprovalStatus.PENDING });
  const refused = await refusal(createServiceClient(PayoutService, url(), { operator: maker, approver: null }).adjustBalance({ merchantId: merchant!.id, amount: 50_000n, currency: "TRY", reason: "" }));
  t.like(refused, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "reason" });
  const after = await createServiceClient(ApprovalService, url(), { operator: maker, service: "payout" }).listApprovals({ status: ApprovalStatus.PENDING });
  t.is(after.approvals.length, before.approvals.length, "no approval stored");
});
