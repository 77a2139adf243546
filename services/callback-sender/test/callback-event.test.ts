import test from "ava";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { DepositStatus, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { WithdrawalStatus, WithdrawalStatusChangedSchema } from "@payments/contracts/payout";
import { callbackEventOf, isCallbackTopic } from "../src/callback-event.js";

const at = Date.parse("2026-11-22T10:15:30.123Z");
const time = timestampFromMs(at);

function depositEvent(status: DepositStatus) {
  return toBinary(
    DepositStatusChangedSchema,
    create(DepositStatusChangedSchema, {
      eventId: "evt_dep",
      occurredAt: time,
      deposit: {
        id: "dep_1",
        merchantId: "mer_1",
        processId: "p1",
        amount: 15_000n,
        requestedAmount: 15_000n,
        currency: "TRY",
        status,
        reference: "ABCD2345",
        checkoutToken: "tok",
        customer: { id: "c1", name: "Ayşe", username: "ayse" },
        sequence: 2n,
        expiresAt: time,
        createdAt: time,
        updatedAt: time,
        completedAt: time,
      },
    }),
  );
}

test("a deposit status change becomes a callback body with the public record, built once", (t) => {
  const event = callbackEventOf("deposit.v1.deposit_completed", depositEvent(DepositStatus.COMPLETED), "https://pay.example")!;
  t.like(event, { id: "evt_dep", merchantId: "mer_1", type: "deposit.completed", transactionType: "deposit", transactionId: "dep_1", sequence: 2, createdAt: at });
  const body = JSON.parse(event.body) as Record<string, unknown> & { data: Record<string, unknown> };
  t.deepEqual(Object.keys(body), ["id", "type", "createdAt", "data"]);
  t.is(body.createdAt, "2026-11-22T10:15:30.123Z");
  t.like(body.data, { transactionId: "dep_1", status: "completed", sequence: 2, amount: 15_000, checkoutUrl: "https://pay.example/checkout?token=tok" });
});

test("a withdrawal status change becomes a withdrawal.* callback", (t) => {
  const data = toBinary(
    WithdrawalStatusChangedSchema,
    create(WithdrawalStatusChangedSchema, {
      eventId: "evt_w",
      occurredAt: time,
      withdrawal: { id: "wd_1", merchantId: "mer_1", processId: "w1", amount: 500n, currency: "TRY", status: WithdrawalStatus.FAILED, failureReason: "ACCOUNT_CLOSED", sequence: 3n, createdAt: time, updatedAt: time },
    }),
  );
  const event = callbackEventOf("payout.v1.withdrawal_failed", data, "https://pay.example")!;
  t.like(event, { type: "withdrawal.failed", transactionType: "withdrawal", sequence: 3 });
  t.like((JSON.parse(event.body) as { data: Record<string, unknown> }).data, { failureReason: "ACCOUNT_CLOSED", status: "failed" });
});

test("other events on the same subjects are not callbacks, and an event contradicting its subject is refused", (t) => {
  t.false(isCallbackTopic("deposit.v1.deposit_created"));
  t.false(isCallbackTopic("payout.v1.withdrawal_pending"));
  t.true(isCallbackTopic("payout.v1.withdrawal_processing"));
  t.is(callbackEventOf("deposit.v1.something_else", new Uint8Array(), "https://pay.example"), undefined);
  t.throws(() => callbackEventOf("deposit.v1.deposit_completed", depositEvent(DepositStatus.CANCELLED), "https://pay.example"), { message: /carries a cancelled deposit/ });
  t.throws(() => callbackEventOf("deposit.v1.deposit_completed", new Uint8Array(), "https://pay.example"), { message: /lacks its id/ });
});
