import test from "ava";
import { Code, type Interceptor } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService, AuditService } from "@payments/contracts/operator";
import { errorInfo } from "@payments/kit";
import { createServiceClient, rejectionOf, TEST_OPERATOR_PRIVATE_KEY_PEM, testMerchantUser, testOperator } from "@payments/testing";
import { AUDIT_TABLE, HEAD_TABLE, loadAssertionPrivateKey, OPERATOR_ASSERTION_HEADER, signAssertion, type OperatorIdentity } from "../src/index.js";
import { operator, startWidgetService, TEST_DEADLINE_MS, verifyChain, widgets, WIDGETS, type WidgetService } from "./audit-fixture.js";

// The chain under real parallel load on MariaDB, and assertions spent once: every audited call
// appends to one contiguous, valid chain whatever runs beside it, and a mutating call's
// assertion is accepted once, the second use refused with nothing changed, at once too.

let started: WidgetService | undefined;
test.before(async () => {
  started = await startWidgetService("mysql");
});
test.after.always(async () => {
  await started?.stop();
});

const service = {
  get url() {
    return started!.url;
  },
  get db() {
    return started!.db;
  },
};

const key = loadAssertionPrivateKey(TEST_OPERATOR_PRIVATE_KEY_PEM);

/** One assertion, signed once, for `audience`. */
function assertion(who: OperatorIdentity = operator, audience = "merchant"): Promise<string> {
  return signAssertion(key, { ...who, audience });
}

/** A client whose every call carries `token` as the person's assertion (the console as its workload). */
function carrying<S extends typeof MerchantService | typeof ApprovalService>(service_: S, token: string) {
  const fixed: Interceptor = (next) => (req) => {
    req.header.set(OPERATOR_ASSERTION_HEADER, token);
    return next(req);
  };
  return createServiceClient(service_, service.url, { operator: null, workload: "console", service: "merchant", interceptors: [fixed], timeoutMs: TEST_DEADLINE_MS });
}

async function widgetCount(prefix: string): Promise<number> {
  return ((await service.db(WIDGETS).where("name", "like", `${prefix}%`)) as unknown[]).length;
}

test.serial("audited calls at once (changes, refusals and failures side by side) keep one contiguous, valid chain whose head is its last row", async (t) => {
  const calls = Array.from({ length: 60 }, (_, i) => {
    if (i % 5 === 0) return widgets(service.url, testOperator("viewer")).setDisplayName({ merchantId: "m_load", displayName: `ok:load-refused-${i}` });
    if (i % 7 === 0) return widgets(service.url).setDisplayName({ merchantId: "m_load", displayName: `inside:load-failed-${i}` });
    return widgets(service.url).setDisplayName({ merchantId: "m_load", displayName: `ok:load-${i}` });
  });
  const settled = await Promise.allSettled(calls);
  const outcomes = settled.map((s) => (s.status === "fulfilled" ? "ok" : (errorInfo(s.reason).reason ?? `? ${JSON.stringify(errorInfo(s.reason))}`)));
  // Every change goes through (none lost to a clash on the chain), every refusal and failure is its own.
  t.deepEqual(
    outcomes,
    calls.map((_, i) => (i % 5 === 0 ? "PERMISSION_DENIED" : i % 7 === 0 ? "BROKEN_INSIDE" : "ok")),
  );
  t.is(await widgetCount("load-"), outcomes.filter((o) => o === "ok").length);
  const rows = (await service.db(AUDIT_TABLE).select("seq").orderBy("seq")) as Array<{ seq: number }>;
  t.deepEqual(
    rows.map((r) => Number(r.seq)),
    rows.map((_, i) => i + 1),
    "seq 1..n, no gap, none twice",
  );
  const verdict = await verifyChain(service.url, [], 25);
  t.is(verdict.problem, undefined);
  t.is(verdict.rows, rows.length);
  const head = (await service.db(HEAD_TABLE).where({ id: 1 }).first()) as { seq: number; hash: string };
  t.deepEqual(verdict.head, { seq: BigInt(head.seq), hash: head.hash });
});

test.serial("a mutating call's assertion is accepted once: the second use is UNAUTHENTICATED (ASSERTION_REPLAYED) and changes nothing; reads keep reusing theirs", async (t) => {
  const token = await assertion();
  const client = carrying(MerchantService, token);
  await client.setDisplayName({ merchantId: "m_replay", displayName: "ok:replay-1" });
  t.like(await rejectionOf(client.setDisplayName({ merchantId: "m_replay", displayName: "ok:replay-2" })), { code: Code.Unauthenticated, reason: "ASSERTION_REPLAYED" });
  t.is(await widgetCount("replay-"), 1);
  const rows = (await service.db(AUDIT_TABLE).where({ rpc: "payments.merchant.v1.MerchantService/SetDisplayName" }).where("targets", "like", '%"m_replay"%').orderBy("seq")) as Array<{ outcome: string; jti: string | null }>;
  t.deepEqual(
    rows.map((r) => [r.outcome, r.jti !== null]),
    [
      ["ok", true],
      ["ASSERTION_REPLAYED", false],
    ],
  );
  // A read is no change: one assertion serves many.
  const read = carrying(MerchantService, await assertion());
  await read.getMerchant({ merchantId: "m_replay" });
  await read.getMerchant({ merchantId: "m_replay" });
  // A refused call spends its assertion too: it cannot be tried again for something else.
  const viewerToken = await assertion(testOperator("viewer"));
  t.like(await rejectionOf(carrying(MerchantService, viewerToken).setDisplayName({ merchantId: "m_replay", displayName: "ok:replay-3" })), { code: Code.PermissionDenied });
  t.like(await rejectionOf(carrying(MerchantService, viewerToken).setDisplayName({ merchantId: "m_replay", displayName: "ok:replay-3" })), { reason: "ASSERTION_REPLAYED" });
  t.like(await verifyChain(service.url), { problem: undefined });
});

test.serial("one assertion sent eight times at once: one change, seven ASSERTION_REPLAYED (past the check, the unique jti rolls the change back)", async (t) => {
  const token = await assertion();
  const client = carrying(MerchantService, token);
  // Each waits 150 ms in its transaction, so all are past the check before the first commits.
  const settled = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => client.setDisplayName({ merchantId: "m_race", displayName: `slow:race-${i}` })));
  const outcomes = settled.map((s) => (s.status === "fulfilled" ? "ok" : (errorInfo(s.reason).reason ?? "?")));
  t.deepEqual(outcomes.filter((o) => o !== "ok"), Array(7).fill("ASSERTION_REPLAYED"), outcomes.join());
  t.is(await widgetCount("race-"), 1, "one change");
  const rows = await service.db(AUDIT_TABLE).where("targets", "like", '%"m_race"%').select<Array<{ outcome: string; jti: string | null }>>("outcome", "jti");
  t.is(rows.filter((r) => r.jti !== null).length, 1);
  t.is(rows.filter((r) => r.outcome === "ASSERTION_REPLAYED").length, 7);
  t.like(await verifyChain(service.url), { problem: undefined });
});

test.serial("four-eyes: the request and its audit row are stored together; the approver's assertion is spent on Approve (its run records none), and cannot approve again", async (t) => {
  const maker = widgets(service.url);
  const asked = await rejectionOf(maker.setDisplayName({ merchantId: "m_four", displayName: "four-eyes:four-1" }));
  t.like(asked, { reason: "APPROVAL_REQUIRED" });
  const second = await rejectionOf(maker.setDisplayName({ merchantId: "m_four", displayName: "four-eyes:four-2" }));
  const approver = testOperator("admin", "ayla@example.com");
  const token = await assertion(approver);
  const approvals = carrying(ApprovalService, token);
  const { approval } = await approvals.approve({ id: asked.details?.approvalId ?? "" });
  t.is(approval?.outcome, "ok");
  t.is(await widgetCount("four-"), 1);
  const replay = await rejectionOf(approvals.approve({ id: second.details?.approvalId ?? "" }));
  t.like(replay, { code: Code.Unauthenticated, reason: "ASSERTION_REPLAYED" });
  t.is(await widgetCount("four-"), 1, "the second approval did not run");
  const pending = await createServiceClient(ApprovalService, service.url, { operator: approver, service: "merchant" }).getApproval({ id: second.details?.approvalId ?? "" });
  t.is(pending.approval?.outcome, "", "still pending");

  const rows = (await service.db(AUDIT_TABLE).where("targets", "like", '%"m_four"%').orWhere("rpc", "like", "%ApprovalService%").orderBy("seq")) as Array<{ rpc: string; outcome: string; jti: string | null; approval_id: string | null }>;
  const of = (rpc: string, outcome: string) => rows.filter((r) => r.rpc.endsWith(rpc) && r.outcome === outcome);
  t.is(of("/SetDisplayName", "APPROVAL_REQUIRED").length, 2);
  t.true(of("/SetDisplayName", "APPROVAL_REQUIRED").every((r) => r.jti !== null && r.approval_id !== null), "the makers' assertions are spent with their requests");
  t.is(of("/Approve", "ok").length, 1);
  t.not(of("/Approve", "ok")[0]?.jti, null, "the approver's jti on the Approve step");
  t.deepEqual(of("/SetDisplayName", "ok").map((r) => r.jti), [null], "the approved run records none");
  t.is(of("/Approve", "ASSERTION_REPLAYED").length, 1);
  t.like(await verifyChain(service.url), { problem: undefined });
});

test.serial("a reject is spent and recorded with its decision in one transaction; the ListAuditChain page is an operator's (a merchant's user is refused)", async (t) => {
  const asked = await rejectionOf(widgets(service.url).setDisplayName({ merchantId: "m_reject", displayName: "four-eyes:reject-1" }));
  const token = await assertion(testOperator("admin", "rana@example.com"));
  const { approval } = await carrying(ApprovalService, token).reject({ id: asked.details?.approvalId ?? "", reason: "not now" });
  t.is(approval?.decidedBy, "rana@example.com");
  t.like(await rejectionOf(carrying(ApprovalService, token).reject({ id: asked.details?.approvalId ?? "", reason: "again" })), { reason: "ASSERTION_REPLAYED" });
  const rejected = (await service.db(AUDIT_TABLE).where({ rpc: "payments.operator.v1.ApprovalService/Reject", outcome: "ok" })) as Array<{ jti: string | null }>;
  t.is(rejected.length, 1);
  t.not(rejected[0]?.jti, null);
  const audit = (who: Parameters<typeof createServiceClient>[2]) => createServiceClient(AuditService, service.url, { ...who, service: "merchant" });
  t.true((await audit({ operator: testOperator("viewer") }).listAuditChain({})).rows.length > 0);
  t.like(await rejectionOf(audit({ operator: testMerchantUser("mer_1", "owner") }).listAuditChain({})), { code: Code.PermissionDenied });
  t.like(await rejectionOf(audit({ operator: testOperator("viewer") }).listAuditChain({ limit: 1001 })), { code: Code.InvalidArgument });
});
