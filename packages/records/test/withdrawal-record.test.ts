import test from "ava";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { BalanceSchema, WithdrawalSchema, WithdrawalStatus, type Withdrawal } from "@payments/contracts/payout";
import { WITHDRAWAL_STATUSES, balanceRecord, isWithdrawalStatusName, withdrawalRecord, withdrawalStatusName, withdrawalStatusToProto } from "../src/index.js";
import { WITHDRAWAL_RECORD_KEYS } from "@payments/testing";

const CREATED = Date.UTC(2026, 10, 22, 10, 15, 30, 123);

function withdrawal(overrides: Omit<Partial<Withdrawal>, "$typeName" | "$unknown"> = {}): Withdrawal {
  return create(WithdrawalSchema, {
    id: "wd_abc",
    merchantId: "m_1",
    processId: "payout-1",
    amount: 25000n,
    currency: "TRY",
    status: WithdrawalStatus.PENDING,
    bankId: "bnk_x",
    accountName: "Ayşe Yılmaz",
    iban: "TR330006100519786457841326",
    userId: "u-1",
    userName: "ayse",
    name: "Ayşe Yılmaz",
    failureReason: "",
    sequence: 1n,
    createdAt: timestampFromMs(CREATED),
    updatedAt: timestampFromMs(CREATED),
    awaitingOperator: false,
    bankReference: "",
    sandbox: false,
    ...overrides,
  });
}

test("a pending withdrawal becomes the public record, with its fields in the documented order", (t) => {
  const record = withdrawalRecord(withdrawal());
  t.deepEqual(Object.keys(record), WITHDRAWAL_RECORD_KEYS);
  t.deepEqual(record, {
    transactionId: "wd_abc",
    type: "withdrawal",
    processId: "payout-1",
    amount: 25000,
    currency: "TRY",
    status: "pending",
    bankId: "bnk_x",
    accountName: "Ayşe Yılmaz",
    iban: "TR330006100519786457841326",
    userId: "u-1",
    userName: "ayse",
    name: "Ayşe Yılmaz",
    failureReason: null,
    sequence: 1,
    createdAt: "2026-11-22T10:15:30.123Z",
    updatedAt: "2026-11-22T10:15:30.123Z",
    completedAt: null,
  });
  // Never the merchant id: the merchant knows who it is, and a callback body is the same record.
  t.false(JSON.stringify(record).includes("m_1"));
});

test("the payout service's internal fields (awaiting an operator, the bank's reference, sandbox) never reach the merchant's record", (t) => {
  const record = withdrawalRecord(withdrawal({ status: WithdrawalStatus.PROCESSING, awaitingOperator: true, bankReference: "BANKREF-9F3K2", sandbox: true }));
  t.is(record.status, "processing");
  const json = JSON.stringify(record);
  for (const internal of ["awaitingOperator", "bankReference", "sandbox", "BANKREF-9F3K2"]) t.false(json.includes(internal), internal);
});

test("an empty bank id and failure reason are null", (t) => {
  const record = withdrawalRecord(withdrawal({ bankId: "", failureReason: "" }));
  t.is(record.bankId, null);
  t.is(record.failureReason, null);
});

test("a failed withdrawal carries its failure reason and completedAt", (t) => {
  const done = CREATED + 2_000;
  const record = withdrawalRecord(
    withdrawal({
      status: WithdrawalStatus.FAILED,
      failureReason: "ACCOUNT_CLOSED",
      sequence: 3n,
      updatedAt: timestampFromMs(done),
      completedAt: timestampFromMs(done),
    }),
  );
  t.like(record, { status: "failed", failureReason: "ACCOUNT_CLOSED", sequence: 3, updatedAt: "2026-11-22T10:15:32.123Z", completedAt: "2026-11-22T10:15:32.123Z" });
});

test("every public status maps to its proto status and back", (t) => {
  t.deepEqual([...WITHDRAWAL_STATUSES], ["pending", "processing", "completed", "failed", "cancelled"]);
  for (const name of WITHDRAWAL_STATUSES) {
    t.true(isWithdrawalStatusName(name));
    t.is(withdrawalStatusName(withdrawalStatusToProto(name)), name);
    t.is(withdrawalRecord(withdrawal({ status: withdrawalStatusToProto(name) })).status, name);
  }
  t.false(isWithdrawalStatusName("expired"));
});

test("amounts up to Number.MAX_SAFE_INTEGER are exact; beyond it, or negative, the conversion throws", (t) => {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  t.is(withdrawalRecord(withdrawal({ amount: max })).amount, Number.MAX_SAFE_INTEGER);
  t.throws(() => withdrawalRecord(withdrawal({ amount: max + 1n })), { message: /amount/ });
  t.throws(() => withdrawalRecord(withdrawal({ sequence: max + 1n })), { message: /sequence/ });
  t.throws(() => withdrawalRecord(withdrawal({ amount: -1n })), { message: /amount/ });
});

test("a message the service never sends (no status, no times) throws, naming the withdrawal", (t) => {
  t.throws(() => withdrawalRecord(withdrawal({ status: WithdrawalStatus.UNSPECIFIED })), { message: /withdrawal status/ });
  t.throws(() => withdrawalRecord(withdrawal({ createdAt: undefined })), { message: /withdrawal wd_abc has no createdAt/ });
  t.throws(() => withdrawalRecord(withdrawal({ updatedAt: undefined })), { message: /updatedAt/ });
});

test("a balance is three plain numbers; an unsafe or negative amount throws", (t) => {
  t.deepEqual(balanceRecord(create(BalanceSchema, { currency: "TRY", available: 150000n, held: 2500n })), { currency: "TRY", available: 150000, held: 2500 });
  t.deepEqual(balanceRecord(create(BalanceSchema, { currency: "TRY" })), { currency: "TRY", available: 0, held: 0 });
  t.throws(() => balanceRecord(create(BalanceSchema, { currency: "TRY", available: -1n })), { message: /available/ });
  t.throws(() => balanceRecord(create(BalanceSchema, { currency: "TRY", held: 2n ** 60n })), { message: /held/ });
});
