import { InvalidArgumentError } from "commander";
import type { DeliveryStatus } from "@payments/contracts/callback";
import type { DepositStatus } from "@payments/contracts/deposit";
import type { WithdrawalStatus } from "@payments/contracts/payout";
import {
  DELIVERY_STATUSES,
  DEPOSIT_STATUSES,
  WITHDRAWAL_STATUSES,
  deliveryStatusToProto,
  depositStatusToProto,
  isDeliveryStatusName,
  isDepositStatusName,
  isWithdrawalStatusName,
  withdrawalStatusToProto,
} from "@payments/contracts/statuses";
import { failureCodeOf } from "@payments/records";

// Parsers for option and argument values. They throw commander's InvalidArgumentError, so a
// bad value is reported like any other usage error (exit 2) before a service is called.

const WHOLE_NUMBER = /^\d+$/;

/** An amount in kuruş: a whole, non-negative number no larger than Number.MAX_SAFE_INTEGER. */
export function parseAmount(value: string): bigint {
  const text = value.trim();
  if (!WHOLE_NUMBER.test(text)) {
    const hint = /^-?\d+[.,]\d+$/.test(text) ? ` (150.50 TRY is 15050)` : "";
    if (text.startsWith("-") && WHOLE_NUMBER.test(text.slice(1))) throw new InvalidArgumentError("an amount cannot be negative.");
    throw new InvalidArgumentError(`an amount must be a whole number of kuruş${hint}.`);
  }
  const amount = BigInt(text);
  if (amount > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidArgumentError(`an amount cannot exceed ${Number.MAX_SAFE_INTEGER}.`);
  return amount;
}

/** An amount of money that changes hands (a deposit, a transfer): like parseAmount, and at least 1. */
export function parsePositiveAmount(value: string): bigint {
  const amount = parseAmount(value);
  if (amount === 0n) throw new InvalidArgumentError("an amount must be at least 1 kuruş.");
  return amount;
}

/**
 * A signed, non-zero amount in kuruş (a balance adjustment): a whole number, negative with a
 * leading `-`, no larger than Number.MAX_SAFE_INTEGER either way. `0`, `1.5`, `+5`, `1e3`,
 * `abc` are refused.
 */
export function parseAdjustmentAmount(value: string): bigint {
  const text = value.trim();
  const negative = text.startsWith("-");
  const digits = negative ? text.slice(1) : text;
  if (!WHOLE_NUMBER.test(digits)) {
    const hint = /^-?\d+[.,]\d+$/.test(text) ? ` (150.50 TRY is 15050)` : "";
    throw new InvalidArgumentError(`an adjustment must be a whole number of kuruş, negative to take money out${hint}.`);
  }
  const magnitude = BigInt(digits);
  if (magnitude === 0n) throw new InvalidArgumentError("an adjustment cannot be 0.");
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidArgumentError(`an adjustment cannot exceed ${Number.MAX_SAFE_INTEGER} either way.`);
  return negative ? -magnitude : magnitude;
}

/** An ISO 4217 currency code: three letters, any case → upper case. */
export function parseCurrency(value: string): string {
  const text = value.trim();
  if (!/^[A-Za-z]{3}$/.test(text)) throw new InvalidArgumentError("expected a three-letter currency code such as TRY.");
  return text.toUpperCase();
}

/** `true` or `false` (also yes/no, on/off, 1/0), for switches that can be turned either way. */
export function parseBoolean(value: string): boolean {
  const text = value.trim().toLowerCase();
  if (["true", "yes", "on", "1"].includes(text)) return true;
  if (["false", "no", "off", "0"].includes(text)) return false;
  throw new InvalidArgumentError("expected true or false.");
}

const UINT32_MAX = 4_294_967_295;

/** A whole number from 0 to 2^32-1 (rate limits). */
export function parseCount(value: string): number {
  const text = value.trim();
  if (!WHOLE_NUMBER.test(text) || Number(text) > UINT32_MAX) throw new InvalidArgumentError(`expected a whole number from 0 to ${UINT32_MAX}.`);
  return Number(text);
}

/** A page size from 1 to `max` (the service's own bound), for `--limit`. */
export function pageLimitParser(max: number): (value: string) => number {
  return (value: string) => {
    const text = value.trim();
    const n = Number(text);
    if (!WHOLE_NUMBER.test(text) || n < 1 || n > max) throw new InvalidArgumentError(`expected a whole number from 1 to ${max}.`);
    return n;
  };
}

/** Free text the service requires (a reason, a sender name): trimmed, not empty. */
export function parseRequiredText(value: string): string {
  const text = value.trim();
  if (text === "") throw new InvalidArgumentError("must not be empty.");
  return text;
}

/** A withdrawal's failure reason code (`withdrawal fail --reason`): upper-cased; anything else names the accepted codes. */
export function parseFailureCode(value: string): string {
  const result = failureCodeOf(value);
  if ("problem" in result) throw new InvalidArgumentError(`${result.problem}.`);
  return result.code;
}

// The status names are @payments/contracts/statuses'; the CLI's own names for them stay.
export { DEPOSIT_STATUSES as DEPOSIT_STATUS_NAMES, WITHDRAWAL_STATUSES as WITHDRAWAL_STATUS_NAMES, DELIVERY_STATUSES as DELIVERY_STATUS_NAMES };
export type { DepositStatusName, WithdrawalStatusName } from "@payments/contracts/statuses";

/** pending, completed, failed, expired or cancelled (any case; "canceled" too) → the proto enum. */
export function parseDepositStatus(value: string): DepositStatus {
  let text = value.trim().toLowerCase();
  if (text === "canceled") text = "cancelled";
  if (!isDepositStatusName(text)) throw new InvalidArgumentError(`expected one of ${DEPOSIT_STATUSES.join(", ")}.`);
  return depositStatusToProto(text);
}

/** pending, processing, completed, failed or cancelled (any case; "canceled" too) → the proto enum. */
export function parseWithdrawalStatus(value: string): WithdrawalStatus {
  let text = value.trim().toLowerCase();
  if (text === "canceled") text = "cancelled";
  if (!isWithdrawalStatusName(text)) throw new InvalidArgumentError(`expected one of ${WITHDRAWAL_STATUSES.join(", ")}.`);
  return withdrawalStatusToProto(text);
}

/** A callback event's delivery status: pending, delivered or failed (any case) → the proto enum. */
export function parseDeliveryStatus(value: string): DeliveryStatus {
  const text = value.trim().toLowerCase();
  if (!isDeliveryStatusName(text)) throw new InvalidArgumentError(`expected one of ${DELIVERY_STATUSES.join(", ")}.`);
  return deliveryStatusToProto(text);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * An ISO 8601 point in time: `2026-11-22T10:00:00Z`, `2026-11-22T13:00:00.250+03:00`, or a
 * date alone (`2026-11-22`, midnight UTC). A time needs its zone (`Z` or an offset): the
 * operator's local zone is not the services', so a bare time would be a guess.
 */
export function parseIsoTime(value: string): Date {
  const text = value.trim().toUpperCase();
  const date = ISO_DATE.exec(text);
  const dateTime = date ? undefined : ISO_DATE_TIME.exec(text);
  const parts = date ?? dateTime;
  if (!parts) {
    const hint = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? " with its zone (Z or an offset such as +03:00)" : "";
    throw new InvalidArgumentError(`expected an ISO 8601 time${hint}, such as 2026-11-22T10:00:00Z or 2026-11-22.`);
  }
  const [, year, month, day, hour = "00", minute = "00", second = "00"] = parts;
  const numbers = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = numbers;
  // Date.UTC rolls 2026-02-30 over to March; a date that does not come back the same does not exist.
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  if (calendar.getUTCFullYear() !== y || calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    throw new InvalidArgumentError(`${value.trim()} is not a real date and time.`);
  }
  const parsed = new Date(date ? `${text}T00:00:00Z` : text.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"));
  if (Number.isNaN(parsed.getTime())) throw new InvalidArgumentError(`${value.trim()} is not a real date and time.`);
  return parsed;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "24h", "90m", "1h30m", "45s", "2d", or a bare number of seconds → seconds. */
export function parseDurationSeconds(value: string): number {
  const text = value.trim().toLowerCase();
  let seconds: number;
  if (WHOLE_NUMBER.test(text)) {
    seconds = Number(text);
  } else if (/^(\d+[smhd])+$/.test(text)) {
    seconds = 0;
    for (const [, amount, unit] of text.matchAll(/(\d+)([smhd])/g)) seconds += Number(amount) * (UNIT_SECONDS[unit ?? "s"] ?? 1);
  } else {
    throw new InvalidArgumentError('expected a duration such as 24h, 90m, 1h30m, 45s or 2d.');
  }
  if (seconds > UINT32_MAX) throw new InvalidArgumentError("duration is too long.");
  return seconds;
}

/** A bank id, or FAST in any case (stored as "FAST"). */
export function parseBankRef(value: string): string {
  const text = value.trim();
  if (text === "") throw new InvalidArgumentError("expected a bank id or FAST.");
  return text.toUpperCase() === "FAST" ? "FAST" : text;
}

/** Repeatable `--ip`: each use adds one or more comma-separated addresses or CIDRs. */
export function collectIps(value: string, previous: readonly string[] = []): string[] {
  const added = value
    .split(",")
    .map((ip) => ip.trim())
    .filter((ip) => ip !== "");
  return [...previous, ...added];
}
