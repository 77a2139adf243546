import test from "ava";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListBanksResponseSchema, ListMerchantLimitsResponseSchema } from "@payments/contracts/bank-catalog";
import { GetMerchantResponseSchema, MerchantStatus } from "@payments/contracts/merchant";
import { formatFields, formatKurus, formatMajor, formatMoney, formatSignedMoney, formatTable, messageJson, stringifyJson } from "../src/output.js";

test("messageJson writes int64 amounts as numbers and timestamps as ISO strings", (t) => {
  const res = create(ListBanksResponseSchema, {
    banks: [{ id: "b1", name: "Bank", code: "0064", active: true, minAmount: 1000n, maxAmount: 5_000_000n, createdAt: timestampFromDate(new Date("2026-11-22T10:15:30.123Z")) }],
  });
  const json = messageJson(ListBanksResponseSchema, res);
  t.deepEqual(json, {
    banks: [{ id: "b1", name: "Bank", code: "0064", logoUrl: "", active: true, minAmount: 1000, maxAmount: 5_000_000, createdAt: "2026-11-22T10:15:30.123Z" }],
  });
});

test("messageJson writes a time on a whole second with its three decimals too, as every other time", (t) => {
  const res = create(ListBanksResponseSchema, {
    banks: [{ id: "b1", name: "Bank", code: "0064", active: true, createdAt: timestampFromDate(new Date("2026-11-22T10:15:30.000Z")) }],
  });
  t.like(messageJson(ListBanksResponseSchema, res), { banks: [{ createdAt: "2026-11-22T10:15:30.000Z" }] });
});

test("messageJson keeps defaults (false, empty lists) and leaves unset optional fields out", (t) => {
  const res = create(GetMerchantResponseSchema, { merchant: { id: "m1", name: "Acme", status: MerchantStatus.ACTIVE, apiKey: "k" } });
  const json = messageJson(GetMerchantResponseSchema, res);
  const merchant = json.merchant as Record<string, unknown>;
  t.is(merchant.sandbox, false);
  t.deepEqual(merchant.allowedIps, []);
  t.is(merchant.status, "MERCHANT_STATUS_ACTIVE");
  t.false("rateLimitPerSecond" in merchant);
});

test("messageJson converts optional int64 fields inside lists", (t) => {
  const res = create(ListMerchantLimitsResponseSchema, { limits: [{ merchantId: "m1", bankId: "FAST", minAmount: 500n }] });
  t.deepEqual(messageJson(ListMerchantLimitsResponseSchema, res), { limits: [{ merchantId: "m1", bankId: "FAST", minAmount: 500 }] });
});

test("stringifyJson writes safe bigints as numbers and huge ones as strings", (t) => {
  t.is(stringifyJson({ a: 5n, b: 2n ** 64n }), '{"a":5,"b":"18446744073709551616"}');
});

test("formatKurus shows the kuruş integer and its lira value", (t) => {
  t.is(formatKurus(15050n), "15050 kuruş (150.50 TRY)");
  t.is(formatKurus(5n), "5 kuruş (0.05 TRY)");
});

test("formatMoney shows kuruş for TRY (and for an empty currency) and the smallest unit of other currencies with their own decimals", (t) => {
  t.is(formatMoney(15050n, "TRY"), "15050 kuruş (150.50 TRY)");
  t.is(formatMoney(15050n, ""), "15050 kuruş (150.50 TRY)");
  t.is(formatMoney(1999n, "EUR"), "1999 (19.99 EUR)");
  t.is(formatMajor(1999n, "JPY"), "1999 JPY");
  t.is(formatMajor(9007199254740991n, "TRY"), "90071992547409.91 TRY", "exact, no float rounding");
  t.is(formatMajor(-5n), "-0.05 TRY");
});

test("formatTable aligns columns and pads nothing after the last one", (t) => {
  t.is(formatTable(["ID", "NAME"], [["a", "x"], ["long-id", "y"]]), "ID       NAME\na        x\nlong-id  y\n");
});

test("formatFields aligns labels", (t) => {
  t.is(formatFields([["id", "1"], ["status", "active"]]), "  id      1\n  status  active\n");
});

test("formatSignedMoney marks increases with + and keeps - for decreases", (t) => {
  t.is(formatSignedMoney(3000n), "+3000 kuruş (+30.00 TRY)");
  t.is(formatSignedMoney(-250n, "TRY"), "-250 kuruş (-2.50 TRY)");
  t.is(formatSignedMoney(0n), "0 kuruş (0.00 TRY)");
  t.is(formatSignedMoney(1999n, "EUR"), "+1999 (+19.99 EUR)");
});
