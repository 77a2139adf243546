import test from "ava";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { AssignedAccountSchema, CustomerSchema, DepositSchema, DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { DEPOSIT_STATUSES, depositRecord, depositStatusToProto } from "../src/index.js";
import { DEPOSIT_RECORD_KEYS } from "@payments/testing";

const BASE = "https://pay.example.test";
const CREATED = Date.UTC(2026, 10, 22, 10, 15, 30, 123);

function deposit(overrides: MessageInitShape<typeof DepositSchema> = {}): Deposit {
  return create(DepositSchema, {
    id: "dep_abc",
    merchantId: "m_1",
    processId: "order-1",
    amount: 15050n,
    requestedAmount: 15050n,
    currency: "TRY",
    status: DepositStatus.PENDING,
    bankId: "bnk_x",
    assignedAccount: create(AssignedAccountSchema, { accountId: "acc_1", bankId: "bnk_x", bankName: "Akbank", accountName: "Sandbox A.Ş.", iban: "TR000000000000000000000001" }),
    reference: "K7Q2M9",
    checkoutToken: "tok_AbC-_12345678901234",
    customer: create(CustomerSchema, { id: "c1", name: "Ayşe Yılmaz", username: "ayse" }),
    metadataJson: '{"cart":"42","tags":["a"]}',
    failureReason: "",
    sequence: 1n,
    sandbox: true,
    expiresAt: timestampFromMs(CREATED + 30 * 60_000),
    createdAt: timestampFromMs(CREATED),
    updatedAt: timestampFromMs(CREATED),
    ...overrides,
  });
}

test("a pending deposit becomes the public record, with its fields in the documented order", (t) => {
  const record = depositRecord(deposit(), BASE);
  t.deepEqual(Object.keys(record), DEPOSIT_RECORD_KEYS);
  t.deepEqual(record, {
    transactionId: "dep_abc",
    type: "deposit",
    processId: "order-1",
    amount: 15050,
    requestedAmount: 15050,
    currency: "TRY",
    status: "pending",
    assignedAccount: { bankName: "Akbank", accountName: "Sandbox A.Ş.", iban: "TR000000000000000000000001" },
    reference: "K7Q2M9",
    checkoutUrl: `${BASE}/checkout?token=tok_AbC-_12345678901234`,
    bankCode: "bnk_x",
    customer: { id: "c1", name: "Ayşe Yılmaz", username: "ayse" },
    metadata: { cart: "42", tags: ["a"] },
    failureReason: null,
    sequence: 1,
    expiresAt: "2026-11-22T10:45:30.123Z",
    createdAt: "2026-11-22T10:15:30.123Z",
    updatedAt: "2026-11-22T10:15:30.123Z",
    completedAt: null,
  });
});

test("assignedAccount is absent, not null, when no account was assigned", (t) => {
  const record = depositRecord(deposit({ assignedAccount: undefined }), BASE);
  t.false("assignedAccount" in record);
  t.false(JSON.stringify(record).includes("assignedAccount"));
});

test("a returnUrl the merchant gave follows checkoutUrl; none given, the record has no returnUrl key at all", (t) => {
  const withUrl = depositRecord(deposit({ returnUrl: "https://shop.example/return?order=1" }), BASE);
  t.is(withUrl.returnUrl, "https://shop.example/return?order=1");
  const keys = Object.keys(withUrl);
  t.is(keys.indexOf("returnUrl"), keys.indexOf("checkoutUrl") + 1);
  const without = depositRecord(deposit(), BASE);
  t.false("returnUrl" in without, "absent, not null: the record is exactly what it was before the field existed");
  t.deepEqual(Object.keys(withUrl).filter((k) => k !== "returnUrl"), Object.keys(without), "every other field as it was, in its order");
  t.is(JSON.stringify(without).includes("returnUrl"), false);
});

test("empty bank, metadata and failure reason are null", (t) => {
  const record = depositRecord(deposit({ bankId: "", metadataJson: "", failureReason: "" }), BASE);
  t.is(record.bankCode, null);
  t.is(record.metadata, null);
  t.is(record.failureReason, null);
});

test("a final deposit carries completedAt, its received amount beside the requested one, and its failure reason", (t) => {
  const completedAt = CREATED + 5 * 60_000;
  const completed = depositRecord(
    deposit({ status: DepositStatus.COMPLETED, amount: 15000n, sequence: 2n, completedAt: timestampFromMs(completedAt), updatedAt: timestampFromMs(completedAt) }),
    BASE,
  );
  t.like(completed, { status: "completed", amount: 15000, requestedAmount: 15050, sequence: 2, completedAt: "2026-11-22T10:20:30.123Z", updatedAt: "2026-11-22T10:20:30.123Z" });
  const failed = depositRecord(deposit({ status: DepositStatus.FAILED, failureReason: "sender name mismatch", completedAt: timestampFromMs(completedAt) }), BASE);
  t.like(failed, { status: "failed", failureReason: "sender name mismatch" });
});

test("every public status maps to its proto status and back", (t) => {
  for (const name of DEPOSIT_STATUSES) {
    t.is(depositRecord(deposit({ status: depositStatusToProto(name) }), BASE).status, name);
  }
});

test("the checkout token is URL-encoded into the checkout URL", (t) => {
  t.is(depositRecord(deposit({ checkoutToken: "a b&c=d" }), BASE).checkoutUrl, `${BASE}/checkout?token=a%20b%26c%3Dd`);
});

test("amounts up to Number.MAX_SAFE_INTEGER are exact numbers; beyond it the conversion throws instead of rounding", (t) => {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  t.is(depositRecord(deposit({ amount: max, requestedAmount: max }), BASE).amount, Number.MAX_SAFE_INTEGER);
  t.throws(() => depositRecord(deposit({ amount: max + 1n }), BASE), { message: /amount/ });
  t.throws(() => depositRecord(deposit({ requestedAmount: max + 1n }), BASE), { message: /requestedAmount/ });
  t.throws(() => depositRecord(deposit({ sequence: max + 1n }), BASE), { message: /sequence/ });
  t.throws(() => depositRecord(deposit({ amount: -1n }), BASE), { message: /amount/ });
});

test("a message the service never sends (no status, no times, no customer, metadata not an object) throws", (t) => {
  t.throws(() => depositRecord(deposit({ status: DepositStatus.UNSPECIFIED }), BASE));
  t.throws(() => depositRecord(deposit({ createdAt: undefined }), BASE), { message: /createdAt/ });
  t.throws(() => depositRecord(deposit({ expiresAt: undefined }), BASE), { message: /expiresAt/ });
  t.throws(() => depositRecord(deposit({ customer: undefined }), BASE), { message: /customer/ });
  t.throws(() => depositRecord(deposit({ metadataJson: "[1]" }), BASE), { message: /metadata/ });
});
