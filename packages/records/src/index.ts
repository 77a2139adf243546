import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Deposit } from "@payments/contracts/deposit";
import type { Balance, Withdrawal } from "@payments/contracts/payout";
import type { CallbackEvent, DeliveryAttempt } from "@payments/contracts/callback";
import {
  deliveryStatusName,
  depositStatusName,
  withdrawalStatusName,
  type DeliveryStatusName,
  type DepositStatusName,
  type WithdrawalStatusName,
} from "@payments/contracts/statuses";

/*
 * The public JSON shape of a transaction, in one place: the gateway answers reads and
 * listings with it, and merchant callbacks will carry the same record as their `data`, so
 * a merchant parses one shape everywhere. Field order is the order merchants see.
 * Callback events are here too: the listing shows the body a callback carried.
 */

// The status names and their proto enums live in @payments/contracts/statuses (services use
// them too); re-exported here, where the gateway, the SDK and the CLI have always found them.
export {
  DEPOSIT_STATUSES,
  isDepositStatusName,
  depositStatusToProto,
  depositStatusName,
  type DepositStatusName,
  WITHDRAWAL_STATUSES,
  isWithdrawalStatusName,
  withdrawalStatusToProto,
  withdrawalStatusName,
  type WithdrawalStatusName,
  DELIVERY_STATUSES,
  isDeliveryStatusName,
  deliveryStatusToProto,
  deliveryStatusName,
  type DeliveryStatusName,
} from "@payments/contracts/statuses";

export interface AssignedAccountRecord {
  bankName: string;
  accountName: string;
  iban: string;
}

export interface CustomerRecord {
  id: string;
  name: string;
  username: string;
}

/** A deposit as merchants see it (api.md "Deposit transaction" plus the record fields of decisions.md). */
export interface DepositRecord {
  transactionId: string;
  type: "deposit";
  processId: string;
  /** The amount received once completed; the requested amount before. Smallest currency unit. */
  amount: number;
  requestedAmount: number;
  currency: string;
  status: DepositStatusName;
  /** Absent (not null) when no receiving account was assigned: api.md "present only if assigned". */
  assignedAccount?: AssignedAccountRecord;
  reference: string;
  checkoutUrl: string;
  /**
   * Where the checkout page sends the customer back, as the deposit service stored it
   * (normalised). Present only when the merchant gave one: a merchant that never sends
   * `returnUrl` gets exactly the record (and callback body) it got before the field existed.
   */
  returnUrl?: string;
  /** The bank the merchant chose (a bank `_id` or `FAST`), null when none. */
  bankCode: string | null;
  customer: CustomerRecord;
  metadata: Record<string, unknown> | null;
  failureReason: string | null;
  /** Grows with every change of the transaction, so a stale callback can be told apart. */
  sequence: number;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

/**
 * Non-negative int64 values (amounts, sequence) as JSON numbers. JSON numbers are exact only up to 2^53,
 * so anything beyond is a bug to surface, not a value to round.
 */
export function safeNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Error(`${what} ${value} cannot be sent as a JSON number`);
  }
  return Number(value);
}

/** ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:15:30.123Z. */
export function isoTime(timestamp: Timestamp): string {
  return new Date(timestampMs(timestamp)).toISOString();
}

function requiredTime(timestamp: Timestamp | undefined, what: string, id: string, kind: "deposit" | "withdrawal" | "event" = "deposit"): string {
  if (!timestamp) throw new Error(`${kind} ${id} has no ${what}`);
  return isoTime(timestamp);
}

function metadataObject(json: string, id: string): Record<string, unknown> | null {
  if (json === "") return null;
  const value: unknown = JSON.parse(json);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`deposit ${id} has metadata that is not a JSON object`);
  return value as Record<string, unknown>;
}

/** The checkout page of a deposit: the token is the only thing in the query string. */
export function checkoutUrl(publicBaseUrl: string, checkoutToken: string): string {
  return `${publicBaseUrl}/checkout?token=${encodeURIComponent(checkoutToken)}`;
}

/** The public record of a deposit. Throws on a message the deposit service would never send (missing times, unknown status). */
export function depositRecord(deposit: Deposit, publicBaseUrl: string): DepositRecord {
  const id = deposit.id;
  if (!deposit.customer) throw new Error(`deposit ${id} has no customer`);
  const account = deposit.assignedAccount;
  return {
    transactionId: id,
    type: "deposit",
    processId: deposit.processId,
    amount: safeNumber(deposit.amount, "amount"),
    requestedAmount: safeNumber(deposit.requestedAmount, "requestedAmount"),
    currency: deposit.currency,
    status: depositStatusName(deposit.status),
    ...(account ? { assignedAccount: { bankName: account.bankName, accountName: account.accountName, iban: account.iban } } : {}),
    reference: deposit.reference,
    checkoutUrl: checkoutUrl(publicBaseUrl, deposit.checkoutToken),
    ...(deposit.returnUrl === "" ? {} : { returnUrl: deposit.returnUrl }),
    bankCode: deposit.bankId === "" ? null : deposit.bankId,
    customer: { id: deposit.customer.id, name: deposit.customer.name, username: deposit.customer.username },
    metadata: metadataObject(deposit.metadataJson, id),
    failureReason: deposit.failureReason === "" ? null : deposit.failureReason,
    sequence: safeNumber(deposit.sequence, "sequence"),
    expiresAt: requiredTime(deposit.expiresAt, "expiresAt", id),
    createdAt: requiredTime(deposit.createdAt, "createdAt", id),
    updatedAt: requiredTime(deposit.updatedAt, "updatedAt", id),
    completedAt: deposit.completedAt ? isoTime(deposit.completedAt) : null,
  };
}

// ---------------------------------------------------------------- withdrawals

/** A withdrawal as merchants see it (api.md "Withdrawal transaction" plus the record fields of decisions.md). */
export interface WithdrawalRecord {
  transactionId: string;
  type: "withdrawal";
  processId: string;
  /** Smallest currency unit. */
  amount: number;
  currency: string;
  status: WithdrawalStatusName;
  /** The bank `_id` the merchant named, null when none. */
  bankId: string | null;
  /** The recipient. */
  accountName: string;
  /** Electronic format: no spaces, upper case. */
  iban: string;
  /** The merchant's customer. */
  userId: string;
  userName: string;
  name: string;
  /** A code such as ACCOUNT_CLOSED when failed; APPROVAL_REJECTED or APPROVAL_EXPIRED when cancelled by the merchant's own approval of an API key's withdrawal; null otherwise. */
  failureReason: string | null;
  sequence: number;
  createdAt: string;
  updatedAt: string;
  /** When it became final (completed, failed or cancelled); null before. */
  completedAt: string | null;
}

/** The public record of a withdrawal. Throws on a message the payout service would never send (missing times, unknown status). */
export function withdrawalRecord(withdrawal: Withdrawal): WithdrawalRecord {
  const id = withdrawal.id;
  return {
    transactionId: id,
    type: "withdrawal",
    processId: withdrawal.processId,
    amount: safeNumber(withdrawal.amount, "amount"),
    currency: withdrawal.currency,
    status: withdrawalStatusName(withdrawal.status),
    bankId: withdrawal.bankId === "" ? null : withdrawal.bankId,
    accountName: withdrawal.accountName,
    iban: withdrawal.iban,
    userId: withdrawal.userId,
    userName: withdrawal.userName,
    name: withdrawal.name,
    failureReason: withdrawal.failureReason === "" ? null : withdrawal.failureReason,
    sequence: safeNumber(withdrawal.sequence, "sequence"),
    createdAt: requiredTime(withdrawal.createdAt, "createdAt", id, "withdrawal"),
    updatedAt: requiredTime(withdrawal.updatedAt, "updatedAt", id, "withdrawal"),
    completedAt: withdrawal.completedAt ? isoTime(withdrawal.completedAt) : null,
  };
}

/** Any transaction record; `type` tells them apart. */
export type TransactionRecord = DepositRecord | WithdrawalRecord;

/** One currency of a merchant's balance, in the smallest currency unit. */
export interface BalanceRecord {
  currency: string;
  /** What a withdrawal can take. */
  available: number;
  /** Held by withdrawals not yet final. */
  held: number;
}

/** The public form of a balance; negative or unsafe amounts throw (a bug upstream). */
export function balanceRecord(balance: Balance): BalanceRecord {
  return {
    currency: balance.currency,
    available: safeNumber(balance.available, "available"),
    held: safeNumber(balance.held, "held"),
  };
}

// ---------------------------------------------------------------- callback events

/** One delivery attempt as merchants see it. */
export interface DeliveryAttemptRecord {
  number: number;
  attemptedAt: string;
  /** The callback URL used; null when the merchant had none. */
  url: string | null;
  /** The HTTP status answered; null when no answer arrived. */
  statusCode: number | null;
  latencyMs: number;
  /** Why it did not count as delivered (the trimmed response body, a timeout, ...); null when delivered. */
  error: string | null;
  /** delivered, retry, failed, or lost (the sender stopped before recording the answer). */
  outcome: string;
}

/**
 * A callback event as merchants list it: the callback body exactly as sent (`id`, `type`,
 * `createdAt`, `data` with the transaction record) plus its delivery state and attempts.
 */
export interface EventRecord {
  id: string;
  type: string;
  createdAt: string;
  data: TransactionRecord;
  deliveryStatus: DeliveryStatusName;
  /** When the next attempt is due; null unless pending and waiting. */
  nextAttemptAt: string | null;
  /** When a 2xx last arrived; null until then. */
  deliveredAt: string | null;
  attempts: DeliveryAttemptRecord[];
}

export function deliveryAttemptRecord(attempt: DeliveryAttempt): DeliveryAttemptRecord {
  return {
    number: attempt.number,
    attemptedAt: requiredTime(attempt.attemptedAt, "attemptedAt", `attempt ${attempt.number}`, "event"),
    url: attempt.url === "" ? null : attempt.url,
    statusCode: attempt.statusCode === 0 ? null : attempt.statusCode,
    latencyMs: attempt.latencyMs,
    error: attempt.error === "" ? null : attempt.error,
    outcome: attempt.outcome,
  };
}

/** The public record of a callback event. Throws on a message the callback-sender would never send. */
export function eventRecord(event: CallbackEvent): EventRecord {
  const body: unknown = JSON.parse(event.bodyJson);
  if (typeof body !== "object" || body === null || !("data" in body)) throw new Error(`event ${event.id} has no callback body`);
  return {
    id: event.id,
    type: event.type,
    createdAt: requiredTime(event.createdAt, "createdAt", event.id, "event"),
    data: (body as { data: TransactionRecord }).data,
    deliveryStatus: deliveryStatusName(event.deliveryStatus),
    nextAttemptAt: event.nextAttemptAt ? isoTime(event.nextAttemptAt) : null,
    deliveredAt: event.deliveredAt ? isoTime(event.deliveredAt) : null,
    attempts: event.attempts.map(deliveryAttemptRecord),
  };
}
export * from "./csv.js";
export * from "./xlsx.js";
export * from "./statement.js";
export * from "./input.js";
export * from "./failure-codes.js";
export * from "./time-zone.js";
