import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { create, type DescMessage } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, ApprovalStatus, AuditService } from "@payments/contracts/operator";
import { PayoutService } from "@payments/contracts/payout";
import { errorInfo, type RunningServices } from "@payments/kit";
import { MERCHANT_ROLES, type MerchantRole } from "@payments/access";
import { createServiceClient, eventually, eventuallyValue, rejectionOf as refusal, testMerchantUser, testOperator } from "@payments/testing";
import { everyRpc, rpcCall, SERVICE_NAMES, sqliteRows, startInProcess, type Rpc, type RpcCall } from "@payments/testing/services";

// Issue 24: a merchant's own users call the same services with a signed assertion naming their
// merchant, and the services scope every read and write to it. Every RPC of every service, from
// the descriptors, is called as each role of merchant A, aimed at merchant B's things: it is
// refused (PERMISSION_DENIED, or NOT_FOUND as if B's thing did not exist), nothing of B's
// changes, and no answer carries anything of B's.
const dir = mkdtempSync(join(tmpdir(), "merchant-scope-"));
let running: RunningServices;
const url = () => running.server.url;

interface Fixture {
  a: string;
  b: string;
  /** B's things, by the request field that names one. */
  ids: Record<string, string>;
}
let fx: Fixture;

test.before(async () => {
  running = await startInProcess([...SERVICE_NAMES], {
    // B's callbacks go to an address that never answers: retried an hour later, so no retry of the sender's own lands inside the walk.
    env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), SANDBOX_PAYOUT_DELAY: "10ms", PAYOUT_WORKER_INTERVAL: "50ms", CALLBACK_RETRY_SCHEDULE: "1h" },
    receivingAccounts: true,
  });
  const merchants = createServiceClient(MerchantService, url());
  const a = (await merchants.createMerchant({ name: "Shop A", sandbox: true })).merchant!.id;
  const b = (await merchants.createMerchant({ name: "Shop B", sandbox: true, callbackUrl: "https://b.example.com/hook" })).merchant!.id;
  // B's own calls, as the gateway makes them for B.
  const deposits = createServiceClient(DepositService, url(), { operator: null, merchant: b });
  const payouts = createServiceClient(PayoutService, url(), { operator: null, merchant: b });
  const callbacks = createServiceClient(CallbackService, url(), { operator: null, merchant: b });
  const paid = (await deposits.createDeposit({ merchantId: b, processId: "b-1", amount: 90_000n, customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" } })).deposit!;
  await deposits.sandboxPayDeposit({ merchantId: b, depositId: paid.id });
  const pending = (await deposits.createDeposit({ merchantId: b, processId: "b-2", amount: 10_000n, customer: { id: "c2", name: "Can", username: "can" } })).deposit!;
  await eventually(async () => ((await payouts.getBalances({ merchantId: b })).balances.find((x) => x.currency === "TRY")?.available ?? 0n) >= 90_000n, "B's deposit credited");
  const withdrawal = (await payouts.createWithdrawal({ merchantId: b, processId: "bw-1", amount: 1_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })).withdrawal!;
  const event = await eventuallyValue(async () => (await callbacks.listEvents({ merchantId: b })).events[0], (e) => e !== undefined, "B's callback event");
  fx = {
    a,
    b,
    ids: {
      depositId: pending.id,
      withdrawalId: withdrawal.id,
      eventId: event!.id,
      transactionId: paid.id,
      transferId: "",
      id: event!.id,
      processId: "b-2",
      secretId: "",
    },
  };
});

test.after.always(async () => {
  await (running as typeof running | undefined)?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every row of a module's database (its audit aside) that names one of `marks`, as text: B's data unchanged is this being equal. */
function rowsNaming(module: string, marks: readonly string[]): Promise<string> {
  return sqliteRows(running, module, (r) => marks.some((m) => m !== "" && r.includes(m)));
}

/** A request of `input` aimed at B: merchantId as given, and every field that names a thing set to B's. */
function aimedAtB(input: DescMessage, merchantId: string): unknown {
  const init: Record<string, unknown> = {};
  for (const field of input.fields) {
    if (field.localName === "merchantId") init.merchantId = merchantId;
    else if (field.localName === "allMerchants") init.allMerchants = true;
    else if (field.fieldKind === "scalar" && typeof fx.ids[field.localName] === "string") init[field.localName] = fx.ids[field.localName];
  }
  for (const oneof of input.oneofs) {
    const key = oneof.fields.find((f) => f.localName === "depositId" || f.localName === "withdrawalId");
    if (key) init[oneof.localName] = { case: key.localName, value: fx.ids[key.localName] };
  }
  return create(input, init as never);
}

function callAs(rpc: Rpc, role: MerchantRole, merchantId: string): RpcCall {
  return rpcCall(rpc, url(), { operator: testMerchantUser(merchantId, role), approver: null, service: rpc.module });
}

test.serial("every RPC × every merchant role of A, aimed at B's things (B's merchant id, or none with B's ids): refused or empty, B's rows unchanged, nothing of B's answered", async (t) => {
  const marks = [fx.b, ...Object.values(fx.ids)];
  let opened = 0;
  for (const role of MERCHANT_ROLES) {
    for (const r of everyRpc()) {
      for (const merchantId of [fx.b, ""]) {
        const name = `${role} of A → ${r.service.typeName}/${r.method.name} (merchantId ${merchantId === "" ? "empty" : "B"})`;
        const before = await rowsNaming(r.module, marks);
        const outcome = await callAs(r, role, fx.a)(aimedAtB(r.method.input, merchantId)).then(
          (answer) => ({ answer }),
          (err: unknown) => ({ error: errorInfo(err) }),
        );
        if ("answer" in outcome) {
          opened++;
          const text = JSON.stringify(outcome.answer, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
          for (const mark of marks) if (mark !== "") t.false(text.includes(mark), `${name} answered ${mark}: ${text.slice(0, 300)}`);
        } else {
          t.not(outcome.error.code, Code.Unauthenticated, name);
          t.not(outcome.error.code, Code.Internal, `${name}: ${outcome.error.message}`);
          if (merchantId === fx.b) t.true([Code.PermissionDenied, Code.NotFound].includes(outcome.error.code), `${name}: ${JSON.stringify(outcome.error)}`);
        }
        t.is(await rowsNaming(r.module, marks), before, `${name} changed nothing of B's`);
      }
    }
  }
  t.true(opened > 0, "some RPCs are open to merchant users (with nothing of B's in them)");
});

test.serial("the same requests from B's own users reach B's things, as their roles allow", async (t) => {
  const deposits = createServiceClient(DepositService, url(), { operator: testMerchantUser(fx.b, "viewer"), approver: null });
  const found = await deposits.getDeposit({ key: { case: "depositId", value: fx.ids.depositId! } });
  t.is(found.deposit?.id, fx.ids.depositId);
  t.is(found.deposit?.merchantId, fx.b, "scoped to B though the request named no merchant");
  const listed = await deposits.listDeposits({ allMerchants: true });
  t.true(listed.deposits.length >= 2 && listed.deposits.every((d) => d.merchantId === fx.b), "allMerchants is cleared for a merchant user");
  const payouts = (role: MerchantRole) => createServiceClient(PayoutService, url(), { operator: testMerchantUser(fx.b, role), approver: null });
  t.like(await refusal(payouts("viewer").getStatement({ currency: "TRY", fromMs: BigInt(Date.now() - 86_400_000), toMs: BigInt(Date.now() + 60_000) })), { code: Code.PermissionDenied, reason: "PERMISSION_DENIED" });
  t.truthy(await payouts("finance").getStatement({ currency: "TRY", fromMs: BigInt(Date.now() - 86_400_000), toMs: BigInt(Date.now() + 60_000) }));
  t.like(await refusal(payouts("developer").createWithdrawal({ processId: "x", amount: 100n, iban: "TR330006100519786457841326", accountName: "X", userId: "u1", userName: "x", name: "X" })), { code: Code.PermissionDenied });
  // An operator's RPC is closed to every merchant role.
  t.like(await refusal(payouts("owner").adjustBalance({ merchantId: fx.b, amount: 1n, currency: "TRY", reason: "x" })), { code: Code.PermissionDenied, reason: "PERMISSION_DENIED" });
});

test.serial("a merchant's four-eyes: above its threshold a withdrawal waits for a second user of the same merchant; the maker, another merchant's user and our operators cannot decide it; it runs once", async (t) => {
  const owner = testMerchantUser(fx.b, "owner", "owner@b.example.com");
  const merchants = createServiceClient(MerchantService, url(), { operator: owner, approver: null });
  await merchants.setWithdrawalApproval({ threshold: 2_000n });
  const maker = testMerchantUser(fx.b, "finance", "fin@b.example.com");
  const payouts = createServiceClient(PayoutService, url(), { operator: maker, approver: null });
  t.truthy((await payouts.createWithdrawal({ processId: "under", amount: 1_500n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })).withdrawal, "at or under the threshold one user suffices");
  const asked = await refusal(payouts.createWithdrawal({ processId: "over", amount: 5_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" }));
  t.like(asked, { code: Code.FailedPrecondition, reason: "APPROVAL_REQUIRED" });
  const approvalId = asked.details?.approvalId ?? "";
  const again = await refusal(payouts.createWithdrawal({ processId: "over", amount: 5_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" }));
  t.is(again.details?.approvalId, approvalId, "the same request sent twice waits as one approval");
  t.like(await refusal(payouts.createWithdrawal({ processId: "bad", amount: 5_000n, iban: "TR00", accountName: "X", userId: "u1", userName: "x", name: "X" })), { code: Code.InvalidArgument }, "an invalid request is refused, not stored");

  const approvals = (who: ReturnType<typeof testMerchantUser> | ReturnType<typeof testOperator>) => createServiceClient(ApprovalService, url(), { operator: who, service: "payout" });
  t.true((await approvals(owner).listApprovals({ status: ApprovalStatus.PENDING })).approvals.some((x) => x.id === approvalId));
  t.false((await approvals(testOperator("admin")).listApprovals({ status: ApprovalStatus.PENDING })).approvals.some((x) => x.id === approvalId), "not in the operators' inbox");
  t.is((await approvals(testMerchantUser(fx.a, "owner")).listApprovals({})).approvals.length, 0, "nor in another merchant's");
  t.like(await refusal(approvals(testMerchantUser(fx.a, "owner")).approve({ id: approvalId })), { code: Code.NotFound });
  t.like(await refusal(approvals(testOperator("admin")).approve({ id: approvalId })), { code: Code.PermissionDenied, reason: "MERCHANT_APPROVAL" });
  t.like(await refusal(approvals(maker).approve({ id: approvalId })), { code: Code.PermissionDenied, reason: "MAKER_CANNOT_APPROVE" });
  t.like(await refusal(approvals(testMerchantUser(fx.b, "developer")).approve({ id: approvalId })), { code: Code.PermissionDenied });

  const [first, second] = await Promise.allSettled([approvals(owner).approve({ id: approvalId }), approvals(testMerchantUser(fx.b, "finance", "fin2@b.example.com")).approve({ id: approvalId })]);
  t.is([first, second].filter((x) => x.status === "fulfilled").length, 1, "run exactly once");
  const made = await createServiceClient(PayoutService, url(), { operator: null, merchant: fx.b }).getWithdrawal({ merchantId: fx.b, key: { case: "processId", value: "over" } });
  t.is(made.withdrawal?.amount, 5_000n);

  // The merchant's trail: its owner reads its users' actions, and only its own.
  const trail = await createServiceClient(AuditService, url(), { operator: owner, service: "payout" }).listAuditRecords({});
  t.true(trail.records.some((r) => r.rpc.endsWith("/CreateWithdrawal") && r.actor === "fin@b.example.com"));
  const strangers = trail.records.filter((r) => r.actor.includes(fx.a) || r.actor.startsWith("test-"));
  t.deepEqual(strangers.map((r) => r.actor), [], "nothing of another merchant's or our operators'");
  t.true(trail.records.some((r) => r.rpc.endsWith("/Approve") && r.actor === "owner@b.example.com"));
  t.like(await refusal(createServiceClient(AuditService, url(), { operator: maker, service: "payout" }).listAuditRecords({})), { code: Code.PermissionDenied });
});
