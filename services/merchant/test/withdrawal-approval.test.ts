import test from "ava";
import { Code } from "@connectrpc/connect";
import { eventually, rejectionOf, type testMerchantUser } from "@payments/testing";
import { onEachBackend } from "./merchant-on-each-backend.js";

// SetWithdrawalApproval: the merchant's own four-eyes threshold (kuruş), stored in its own
// column (a BIGINT, which MariaDB may answer as a string), on SQLite and on MariaDB.

/** 90 trillion TRY: the largest amount a number holds exactly. */
const LARGEST = BigInt(Number.MAX_SAFE_INTEGER);

onEachBackend(test, "merchant-withdrawal-approval-", (backend) => {
  const { client, asUser, published } = backend;
  const newMerchant = async () => (await client().createMerchant({ name: `Four Eyes ${backend.name}`, allowedIps: [], callbackUrl: "", sandbox: true })).merchant!;

  test(`${backend.name}: a new merchant has no threshold; one is set, read back, changed and cleared`, async (t) => {
    const created = await newMerchant();
    t.is(created.withdrawalApprovalThreshold, undefined);

    const set = (await client().setWithdrawalApproval({ merchantId: created.id, threshold: 1_000_000n })).merchant!;
    t.is(set.withdrawalApprovalThreshold, 1_000_000n);
    t.is((await client().getMerchant({ merchantId: created.id })).merchant!.withdrawalApprovalThreshold, 1_000_000n);
    await eventually(() => published.some((e) => e.merchantId === created.id && e.change === "withdrawal_approval"), "the MerchantChanged event");

    t.is((await client().setWithdrawalApproval({ merchantId: created.id, threshold: LARGEST })).merchant!.withdrawalApprovalThreshold, LARGEST, "the largest exact amount");
    const listed = (await client().listMerchants({ pageSize: 100 })).merchants.find((m) => m.id === created.id);
    t.is(listed?.withdrawalApprovalThreshold, LARGEST, "ListMerchants reads it too");

    const cleared = (await client().setWithdrawalApproval({ merchantId: created.id })).merchant!;
    t.is(cleared.withdrawalApprovalThreshold, undefined, "absent clears it");
    t.is((await client().getMerchant({ merchantId: created.id })).merchant!.withdrawalApprovalThreshold, undefined);
  });

  test(`${backend.name}: zero, a negative or a too large threshold is VALIDATION_ERROR on threshold, and nothing changes`, async (t) => {
    const created = await newMerchant();
    await client().setWithdrawalApproval({ merchantId: created.id, threshold: 50_000n });
    for (const threshold of [0n, -1n, LARGEST + 1n]) {
      const info = await rejectionOf(client().setWithdrawalApproval({ merchantId: created.id, threshold }));
      t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "threshold" }, String(threshold));
    }
    t.is((await client().getMerchant({ merchantId: created.id })).merchant!.withdrawalApprovalThreshold, 50_000n);
  });

  test(`${backend.name}: an unknown merchant is NOT_FOUND`, async (t) => {
    t.like(await rejectionOf(client().setWithdrawalApproval({ merchantId: "mer_nope", threshold: 1n })), { code: Code.NotFound, reason: "MERCHANT_NOT_FOUND" });
  });

  test(`${backend.name}: only the merchant's owner sets it, for its own merchant only`, async (t) => {
    const mine = await newMerchant();
    const other = await newMerchant();
    const as = (role: Parameters<typeof testMerchantUser>[1]) => asUser(mine.id, role);
    for (const role of ["developer", "finance", "viewer"] as const) {
      t.like(await rejectionOf(as(role).setWithdrawalApproval({ merchantId: mine.id, threshold: 100n })), { code: Code.PermissionDenied }, role);
    }
    t.like(await rejectionOf(as("owner").setWithdrawalApproval({ merchantId: other.id, threshold: 100n })), { code: Code.NotFound });
    t.is((await client().getMerchant({ merchantId: other.id })).merchant!.withdrawalApprovalThreshold, undefined, "the other merchant's is untouched");
    t.is((await as("owner").setWithdrawalApproval({ merchantId: mine.id, threshold: 100n })).merchant!.withdrawalApprovalThreshold, 100n);
  });
});
