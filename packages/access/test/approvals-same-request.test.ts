import test from "ava";
import { create } from "@bufbuild/protobuf";
import { DepositService, ResolveTransferRequestSchema } from "@payments/contracts/deposit";
import { ApprovalService, ApprovalStatus } from "@payments/contracts/operator";
import { errorInfo, systemClock } from "@payments/kit";
import { createServiceClient, testMerchantUser, testOperator } from "@payments/testing";
import { APPROVALS_TABLE, listApprovals, requestApproval, sameRequestKey, type ApprovalRequest } from "../src/index.js";
import { startWidgetService, TEST_DEADLINE_MS, widgets, type WidgetService } from "./audit-fixture.js";

// Four-eyes tells the truth (issue 33): the same request asked again while one waits, by anyone,
// is the waiting approval (`created: false`, its maker named), not a second one a colleague might
// approve too; what "same" is: the request without its free-text fields (reason, note, actor).

let service: WidgetService;
test.before(async () => {
  service = await startWidgetService("mysql");
});
test.after.always(async () => {
  await (service as WidgetService | undefined)?.stop();
});

const alice = testOperator("operator", "alice@example.com");
const bob = testOperator("operator", "bob@example.com");
const method = DepositService.method.resolveTransfer;

function match(transferId: string, depositId: string, reason: string, actor = "whoever"): ApprovalRequest {
  return {
    service: "deposit",
    rpc: `${DepositService.typeName}/ResolveTransfer`,
    method,
    message: create(ResolveTransferRequestSchema, { transferId, actor, reason, decision: { case: "matchDepositId", value: depositId } }),
    summary: `match ${transferId} to ${depositId}`,
    reason,
    targets: [transferId, depositId],
    maker: alice,
  };
}

const pendingOf = async (transferId: string) => (await listApprovals(service.db, systemClock, { state: "pending", limit: 50, merchantId: null, targetId: transferId })).rows;

test.serial("the same match asked by a second operator with another reason is the waiting approval, its maker named; another deposit is another request", async (t) => {
  const first = await requestApproval(service.db, systemClock, match("trf_same1", "dep_a", "customer called"));
  t.true(first.created);
  t.is(first.maker, "alice@example.com");
  const again = await requestApproval(service.db, systemClock, { ...match("trf_same1", "dep_a", "the bank's letter says so", "bob"), maker: bob });
  t.deepEqual({ id: again.id, created: again.created, maker: again.maker }, { id: first.id, created: false, maker: "alice@example.com" });
  t.is(again.createdAt, first.createdAt);
  // The same maker sending the form twice: the same one too.
  t.like(await requestApproval(service.db, systemClock, match("trf_same1", "dep_a", "customer called")), { id: first.id, created: false });
  const other = await requestApproval(service.db, systemClock, { ...match("trf_same1", "dep_b", "customer called"), maker: bob });
  t.true(other.created);
  t.deepEqual((await pendingOf("trf_same1")).map((r) => r.id).sort(), [first.id, other.id].sort());
  t.deepEqual((await pendingOf("dep_a")).map((r) => r.id), [first.id]);
});

test.serial("once the waiting one is decided or expired, the same request makes a new approval", async (t) => {
  const first = await requestApproval(service.db, systemClock, match("trf_same2", "dep_a", "r"));
  await service.db(APPROVALS_TABLE).where({ id: first.id }).update({ status: "rejected" });
  const second = await requestApproval(service.db, systemClock, { ...match("trf_same2", "dep_a", "r"), maker: bob });
  t.true(second.created);
  await service.db(APPROVALS_TABLE).where({ id: second.id }).update({ expires_at: Date.now() - 1 });
  const third = await requestApproval(service.db, systemClock, match("trf_same2", "dep_a", "r"));
  t.true(third.created);
  t.not(third.id, second.id);
});

test.serial("a merchant's users meet their own merchant's approvals only, never the operators' or another merchant's", async (t) => {
  const operators = await requestApproval(service.db, systemClock, match("trf_same3", "dep_a", "r"));
  const ofM1 = await requestApproval(service.db, systemClock, { ...match("trf_same3", "dep_a", "r"), maker: testMerchantUser("mer_m1", "owner") });
  t.true(ofM1.created);
  t.not(ofM1.id, operators.id);
  t.like(await requestApproval(service.db, systemClock, { ...match("trf_same3", "dep_a", "x"), maker: testMerchantUser("mer_m1", "finance") }), { id: ofM1.id, created: false });
  t.true((await requestApproval(service.db, systemClock, { ...match("trf_same3", "dep_a", "r"), maker: testMerchantUser("mer_m2", "owner") })).created);
});

test.serial("two asks at once make one approval", async (t) => {
  const asks = await Promise.all([alice, bob, testOperator("operator", "carol@example.com")].map((maker) => requestApproval(service.db, systemClock, { ...match("trf_same4", "dep_a", maker.subject), maker })));
  t.is(new Set(asks.map((a) => a.id)).size, 1);
  t.is(asks.filter((a) => a.created).length, 1);
  t.is((await pendingOf("trf_same4")).length, 1);
});

test("the key leaves out only reason, note and actor, in any key order", (t) => {
  t.is(sameRequestKey('{"transferId":"t","reason":"a","actor":"x","amount":"5"}'), sameRequestKey('{"amount":"5","transferId":"t","reason":"b","note":"n"}'));
  t.not(sameRequestKey('{"transferId":"t","amount":"5"}'), sameRequestKey('{"transferId":"t","amount":"6"}'));
  t.is(sameRequestKey("not json"), "not json");
});

test.serial("through the service: a second operator's same call is refused APPROVAL_REQUIRED with the first one's approval, saying it already waits and whose it is; ListApprovals finds it by target", async (t) => {
  const refusalOf = (who: typeof alice) =>
    widgets(service.url, who)
      .setDisplayName({ merchantId: "mer_w1", displayName: "four-eyes-w1" })
      .then(
        () => {
          throw new Error("the call did not wait for approval");
        },
        (err: unknown) => errorInfo(err),
      );
  const first = await refusalOf(alice);
  const second = await refusalOf(bob);
  t.is(first.reason, "APPROVAL_REQUIRED");
  t.is(second.reason, "APPROVAL_REQUIRED");
  t.is(second.details?.approvalId, first.details?.approvalId);
  t.is(first.details?.alreadyWaiting, undefined);
  t.like(second.details, { alreadyWaiting: "true", maker: "alice@example.com" });
  t.regex(second.message, /already waits for approval apr_\S+ \(alice@example\.com asked for it/);
  const approvals = createServiceClient(ApprovalService, service.url, { operator: testOperator("viewer"), service: "merchant", timeoutMs: TEST_DEADLINE_MS });
  const found = await approvals.listApprovals({ status: ApprovalStatus.PENDING, targetId: "mer_w1" });
  t.deepEqual(
    found.approvals.map((a) => [a.id, a.maker]),
    [[first.details?.approvalId, "alice@example.com"]],
  );
  t.is((await approvals.listApprovals({ status: ApprovalStatus.PENDING, targetId: "mer_w" })).approvals.length, 0, "a prefix is not the id");
  t.is((await approvals.listApprovals({ status: ApprovalStatus.PENDING, targetId: "mer%w1" })).approvals.length, 0, "a wildcard is taken literally");
});
