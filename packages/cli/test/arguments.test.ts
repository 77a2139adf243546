import test from "ava";
import { InvalidArgumentError } from "commander";
import { DeliveryStatus } from "@payments/contracts/callback";
import { DepositStatus } from "@payments/contracts/deposit";
import { WithdrawalStatus } from "@payments/contracts/payout";
import {
  collectIps,
  pageLimitParser,
  parseAdjustmentAmount,
  parseAmount,
  parseBankRef,
  parseBoolean,
  parseCount,
  parseCurrency,
  parseDeliveryStatus,
  parseDepositStatus,
  parseDurationSeconds,
  parseIsoTime,
  parsePositiveAmount,
  parseRequiredText,
  parseWithdrawalStatus,
} from "../src/arguments.js";

test("parseAmount accepts whole kuruş and returns a bigint", (t) => {
  t.is(parseAmount("15050"), 15050n);
  t.is(parseAmount(" 0 "), 0n);
  t.is(parseAmount(String(Number.MAX_SAFE_INTEGER)), BigInt(Number.MAX_SAFE_INTEGER));
});

test("parseAmount rejects decimals with a hint about kuruş", (t) => {
  const err = t.throws(() => parseAmount("150.50"), { instanceOf: InvalidArgumentError });
  t.regex(err.message, /whole number of kuruş/);
  t.regex(err.message, /15050/);
  t.throws(() => parseAmount("150,5"), { instanceOf: InvalidArgumentError });
});

test("parseAmount rejects negatives, non-numbers, exponent and hex forms, and values above MAX_SAFE_INTEGER", (t) => {
  t.throws(() => parseAmount("-5"), { instanceOf: InvalidArgumentError, message: /negative/ });
  for (const bad of ["", "abc", "1e3", "0x10", "+5", "NaN", "Infinity", "12abc"]) {
    t.throws(() => parseAmount(bad), { instanceOf: InvalidArgumentError }, bad);
  }
  t.throws(() => parseAmount("9007199254740992"), { instanceOf: InvalidArgumentError, message: /exceed/ });
});

test("parseBoolean reads true/false words and rejects anything else", (t) => {
  t.true(parseBoolean("true"));
  t.true(parseBoolean("YES"));
  t.false(parseBoolean("false"));
  t.false(parseBoolean("0"));
  t.throws(() => parseBoolean("maybe"), { instanceOf: InvalidArgumentError, message: /true or false/ });
});

test("parseDurationSeconds reads 24h, 1h30m, 2d, 45s and bare seconds", (t) => {
  t.is(parseDurationSeconds("24h"), 86_400);
  t.is(parseDurationSeconds("1h30m"), 5_400);
  t.is(parseDurationSeconds("2d"), 172_800);
  t.is(parseDurationSeconds("45s"), 45);
  t.is(parseDurationSeconds("600"), 600);
  t.is(parseDurationSeconds("0"), 0);
  for (const bad of ["", "h", "1.5h", "24 hours", "-1h", "1w"]) {
    t.throws(() => parseDurationSeconds(bad), { instanceOf: InvalidArgumentError }, bad);
  }
  t.throws(() => parseDurationSeconds("100000d"), { instanceOf: InvalidArgumentError, message: /too long/ });
});

test("parseCount takes whole numbers that fit a uint32", (t) => {
  t.is(parseCount("0"), 0);
  t.is(parseCount("200"), 200);
  t.throws(() => parseCount("4294967296"), { instanceOf: InvalidArgumentError });
  t.throws(() => parseCount("1.5"), { instanceOf: InvalidArgumentError });
});

test("parseBankRef normalises FAST in any case and keeps bank ids as given", (t) => {
  t.is(parseBankRef("fast"), "FAST");
  t.is(parseBankRef("FAST"), "FAST");
  t.is(parseBankRef("bnk_AbC"), "bnk_AbC");
  t.throws(() => parseBankRef(" "), { instanceOf: InvalidArgumentError });
});

test("collectIps accumulates repeated and comma-separated values", (t) => {
  t.deepEqual(collectIps("10.0.0.0/8"), ["10.0.0.0/8"]);
  t.deepEqual(collectIps("1.2.3.4, 2001:db8::/32", ["10.0.0.0/8"]), ["10.0.0.0/8", "1.2.3.4", "2001:db8::/32"]);
  t.deepEqual(collectIps(" , "), []);
});

test("parsePositiveAmount takes whole kuruş from 1 and refuses 0, decimals, words and negatives", (t) => {
  t.is(parsePositiveAmount("1"), 1n);
  t.is(parsePositiveAmount("15050"), 15050n);
  t.throws(() => parsePositiveAmount("0"), { instanceOf: InvalidArgumentError, message: /at least 1/ });
  for (const bad of ["1.5", "abc", "-5", "", "1e3", "9007199254740992"]) {
    t.throws(() => parsePositiveAmount(bad), { instanceOf: InvalidArgumentError }, bad);
  }
});

test("pageLimitParser takes 1 to its maximum", (t) => {
  const parse = pageLimitParser(100);
  t.is(parse("1"), 1);
  t.is(parse(" 100 "), 100);
  for (const bad of ["0", "101", "1.5", "abc", "-1", ""]) t.throws(() => parse(bad), { instanceOf: InvalidArgumentError, message: /1 to 100/ }, bad);
});

test("parseDepositStatus reads the five status names in any case and nothing else", (t) => {
  t.is(parseDepositStatus("pending"), DepositStatus.PENDING);
  t.is(parseDepositStatus("COMPLETED"), DepositStatus.COMPLETED);
  t.is(parseDepositStatus("failed"), DepositStatus.FAILED);
  t.is(parseDepositStatus("expired"), DepositStatus.EXPIRED);
  t.is(parseDepositStatus("cancelled"), DepositStatus.CANCELLED);
  t.is(parseDepositStatus("canceled"), DepositStatus.CANCELLED);
  for (const bad of ["", "paid", "unspecified", "constructor", "1"]) t.throws(() => parseDepositStatus(bad), { instanceOf: InvalidArgumentError }, bad);
});

test("parseRequiredText trims and refuses empty text", (t) => {
  t.is(parseRequiredText("  fraud suspected "), "fraud suspected");
  t.throws(() => parseRequiredText("   "), { instanceOf: InvalidArgumentError });
});

test("parseAdjustmentAmount takes signed whole kuruş and refuses 0, decimals, words, a plus sign and values beyond 2^53-1", (t) => {
  t.is(parseAdjustmentAmount("500"), 500n);
  t.is(parseAdjustmentAmount("-500"), -500n);
  t.is(parseAdjustmentAmount(" -1 "), -1n);
  t.is(parseAdjustmentAmount(String(Number.MAX_SAFE_INTEGER)), BigInt(Number.MAX_SAFE_INTEGER));
  t.is(parseAdjustmentAmount(`-${Number.MAX_SAFE_INTEGER}`), -BigInt(Number.MAX_SAFE_INTEGER));
  t.throws(() => parseAdjustmentAmount("0"), { instanceOf: InvalidArgumentError, message: /cannot be 0/ });
  t.throws(() => parseAdjustmentAmount("-0"), { instanceOf: InvalidArgumentError, message: /cannot be 0/ });
  t.throws(() => parseAdjustmentAmount("1.5"), { instanceOf: InvalidArgumentError, message: /whole number of kuruş.*15050/ });
  for (const bad of ["", "-", "abc", "+5", "1e3", "-1e3", "0x10", "--5", "5-", "-1.5"]) {
    t.throws(() => parseAdjustmentAmount(bad), { instanceOf: InvalidArgumentError }, bad);
  }
  t.throws(() => parseAdjustmentAmount("9007199254740992"), { instanceOf: InvalidArgumentError, message: /exceed/ });
  t.throws(() => parseAdjustmentAmount("-9007199254740992"), { instanceOf: InvalidArgumentError, message: /exceed/ });
});

test("parseCurrency takes three letters in any case and upper-cases them", (t) => {
  t.is(parseCurrency("TRY"), "TRY");
  t.is(parseCurrency(" eur "), "EUR");
  for (const bad of ["", "TL", "LIRA", "T1Y", "₺"]) t.throws(() => parseCurrency(bad), { instanceOf: InvalidArgumentError }, bad);
});

test("parseWithdrawalStatus reads the five withdrawal status names in any case and nothing else", (t) => {
  t.is(parseWithdrawalStatus("pending"), WithdrawalStatus.PENDING);
  t.is(parseWithdrawalStatus("Processing"), WithdrawalStatus.PROCESSING);
  t.is(parseWithdrawalStatus("COMPLETED"), WithdrawalStatus.COMPLETED);
  t.is(parseWithdrawalStatus("failed"), WithdrawalStatus.FAILED);
  t.is(parseWithdrawalStatus("cancelled"), WithdrawalStatus.CANCELLED);
  t.is(parseWithdrawalStatus("canceled"), WithdrawalStatus.CANCELLED);
  for (const bad of ["", "expired", "paid", "unspecified", "constructor", "2"]) t.throws(() => parseWithdrawalStatus(bad), { instanceOf: InvalidArgumentError }, bad);
});

test("parseDeliveryStatus maps pending, delivered and failed (any case) to the proto enum and refuses anything else", (t) => {
  t.is(parseDeliveryStatus("pending"), DeliveryStatus.PENDING);
  t.is(parseDeliveryStatus(" Delivered "), DeliveryStatus.DELIVERED);
  t.is(parseDeliveryStatus("FAILED"), DeliveryStatus.FAILED);
  for (const bad of ["", "sent", "unspecified", "DELIVERY_STATUS_FAILED", "0"]) {
    t.throws(() => parseDeliveryStatus(bad), { instanceOf: InvalidArgumentError, message: /pending, delivered, failed/ }, bad);
  }
});

test("parseIsoTime accepts ISO 8601 times with Z or an offset, and a date alone as midnight UTC", (t) => {
  t.is(parseIsoTime("2026-11-22T10:00:00Z").toISOString(), "2026-11-22T10:00:00.000Z");
  t.is(parseIsoTime("2026-11-22T13:00:00.250+03:00").toISOString(), "2026-11-22T10:00:00.250Z");
  t.is(parseIsoTime("2026-11-22t13:00+0300").toISOString(), "2026-11-22T10:00:00.000Z");
  t.is(parseIsoTime(" 2026-11-22T10:00:00.123456Z ").toISOString(), "2026-11-22T10:00:00.123Z");
  t.is(parseIsoTime("2026-11-22").toISOString(), "2026-11-22T00:00:00.000Z");
  t.is(parseIsoTime("2024-02-29T23:59:59-01:00").toISOString(), "2024-03-01T00:59:59.000Z");
});

test("parseIsoTime refuses a time without its zone, other formats, epoch numbers and dates that do not exist", (t) => {
  t.throws(() => parseIsoTime("2026-11-22T10:00:00"), { instanceOf: InvalidArgumentError, message: /with its zone/ });
  for (const bad of ["", "yesterday", "1763805600", "22.11.2026", "2026-11-22 10:00:00Z", "2026/11/22", "2026-11-22T10Z", "now"]) {
    t.throws(() => parseIsoTime(bad), { instanceOf: InvalidArgumentError, message: /ISO 8601/ }, bad);
  }
  for (const bad of ["2026-02-29", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T10:60:00Z", "2026-11-22T10:00:00+25:00"]) {
    t.throws(() => parseIsoTime(bad), { instanceOf: InvalidArgumentError, message: /not a real date/ }, bad);
  }
});
