import test from "ava";
import { MerchantService } from "@payments/contracts/merchant";
import { ApprovalService } from "@payments/contracts/operator";
import { PayoutService } from "@payments/contracts/payout";
import { errorInfo } from "@payments/kit";
import { createServiceClient, createTestDatabase, deleteTestStream, jetStreamTestEnv, rejectionOf, TEST_OPERATOR_ENV, testMerchantUser } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";

// A merchant's own four-eyes on MariaDB under parallel load: a withdrawal above the merchant's
// threshold waits; six of its users approve it at the same moment; it runs exactly once and the
// balance is debited once. The same request sent again meanwhile is the same approval.
test("six users of the merchant approving one withdrawal at once on MariaDB: it runs once, one debit", async (t) => {
  const database = await createTestDatabase();
  const nats = jetStreamTestEnv();
  const running = await startInProcess(["merchant", "bank-catalog", "payout"], {
    env: { LOG_LEVEL: "fatal", MASTER_KEY: "b9".repeat(32), PAYOUT_WORKER: "0", DATABASE_URL: database.url, ...nats, ...TEST_OPERATOR_ENV },
  });
  try {
    const url = running.server.url;
    const merchantId = (await createServiceClient(MerchantService, url).createMerchant({ name: "Race Shop", sandbox: true })).merchant!.id;
    await createServiceClient(PayoutService, url).adjustBalance({ merchantId, amount: 100_000n, currency: "TRY", reason: "test funding" });
    await createServiceClient(MerchantService, url, { operator: testMerchantUser(merchantId, "owner", "owner@race.test"), approver: null }).setWithdrawalApproval({ threshold: 1_000n });
    const maker = createServiceClient(PayoutService, url, { operator: testMerchantUser(merchantId, "finance", "maker@race.test"), approver: null });
    const request = { processId: "race-1", amount: 40_000n, iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" };
    const [first, again] = await Promise.all([rejectionOf(maker.createWithdrawal(request)), rejectionOf(maker.createWithdrawal(request))]);
    t.is(first.reason, "APPROVAL_REQUIRED");
    const approvalId = first.details?.approvalId ?? "";
    t.is(again.reason, "APPROVAL_REQUIRED");

    const approvers = Array.from({ length: 6 }, (_, i) => testMerchantUser(merchantId, i % 2 === 0 ? "finance" : "owner", `checker${i}@race.test`));
    const outcomes = await Promise.allSettled(approvers.map((who) => createServiceClient(ApprovalService, url, { operator: who, service: "payout" }).approve({ id: approvalId })));
    t.is(outcomes.filter((o) => o.status === "fulfilled").length, 1, "one approver runs it");
    for (const o of outcomes) if (o.status === "rejected") t.is(errorInfo(o.reason).reason, "APPROVAL_NOT_PENDING");

    const gateway = createServiceClient(PayoutService, url, { operator: null, merchant: merchantId });
    const { withdrawals } = await gateway.listWithdrawals({ merchantId, limit: 100 });
    t.is(withdrawals.filter((w) => w.processId === "race-1").length, 1, "one withdrawal");
    const balance = (await gateway.getBalances({ merchantId })).balances.find((b) => b.currency === "TRY");
    t.like(balance, { available: 60_000n, held: 40_000n }, "held once (the worker is off: the withdrawal waits, its amount held)");
    if (again.details?.approvalId !== approvalId) {
      // Sent at the very same moment, the second may have been stored beside the first; approving it must then fail as a duplicate, never pay twice.
      const second = await rejectionOf(createServiceClient(ApprovalService, url, { operator: approvers[0]!, service: "payout" }).approve({ id: again.details?.approvalId ?? "" }).then((r) => { if (r.approval?.outcome !== "ok") throw new Error(r.approval?.outcome); }));
      t.truthy(second.message, "the second stored request did not run");
      t.is((await gateway.listWithdrawals({ merchantId, limit: 100 })).withdrawals.filter((w) => w.processId === "race-1").length, 1);
    }
  } finally {
    await running.stop();
    await database.drop();
    await deleteTestStream(nats);
  }
});
