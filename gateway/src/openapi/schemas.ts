import { DELIVERY_STATUSES, DEPOSIT_STATUSES, WITHDRAWAL_STATUSES } from "@payments/records";
import { CALLBACK_EVENT_TYPES } from "@payments/signing";
import { z } from "zod";
import { STATEMENT_KINDS } from "../routes/statement.js";

/*
 * What the gateway answers, as zod schemas: the OpenAPI document's response schemas are
 * generated from these, and tests parse real answers with them. They mirror
 * @payments/records (and routes/available-banks.ts) field for field. Objects are strict: a
 * field the records gain and these lack fails the response check of the end-to-end suites
 * instead of going undocumented.
 */

/** Amounts, balances and sequences: non-negative integers a JSON number holds exactly (kuruş for TRY). */
const count = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
const amount = count.describe("Integer in the smallest currency unit (kuruş for TRY)");
/** Every time in a body is `Date#toISOString()`: UTC with milliseconds. */
const time = z.iso.datetime({ precision: 3 }).describe("ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:15:30.123Z");
const nullableTime = time.nullable();

export const bankSchema = z
  .strictObject({
    _id: z.string().describe("Bank identifier; `FAST` for the FAST entry. Send it as `bankCode` (deposit) or `bankId` (withdrawal)."),
    name: z.string(),
    code: z.string().describe("Bank code; `FAST` for the FAST entry"),
    minAmount: amount,
    maxAmount: amount,
    logo: z.url().optional().describe("Logo image URL; absent on the FAST entry"),
  })
  .meta({ description: "One bank open to the merchant, with this merchant's limits." });

export const bankListSchema = z.strictObject({
  banks: z.array(bankSchema).describe("At most one entry has `_id` FAST, and only when FAST is available"),
});

export const assignedAccountSchema = z
  .strictObject({ bankName: z.string(), accountName: z.string(), iban: z.string() })
  .meta({ description: "The receiving account the customer pays into." });

export const customerSchema = z.strictObject({ id: z.string(), name: z.string(), username: z.string() });

export const depositSchema = z
  .strictObject({
    transactionId: z.string().describe("The gateway's opaque id of the deposit"),
    type: z.literal("deposit"),
    processId: z.string().describe("The merchant's id, echoed back"),
    amount: amount.describe("The amount received once completed; the requested amount before"),
    requestedAmount: amount,
    currency: z.string(),
    status: z.enum(DEPOSIT_STATUSES),
    assignedAccount: assignedAccountSchema.optional().describe("Present only when an account is assigned"),
    reference: z.string().describe("Short code the customer writes in the transfer description"),
    checkoutUrl: z.url().describe("Where to send the customer; carries a token in its query string"),
    returnUrl: z
      .url()
      .optional()
      .describe("Where the checkout page sends the customer back, as stored (normalised); present only when the deposit was created with one"),
    bankCode: z.string().nullable().describe("The bank the merchant chose, null when none"),
    customer: customerSchema,
    metadata: z.record(z.string(), z.unknown()).nullable().describe("The merchant's metadata object, null when none was sent"),
    failureReason: z.string().nullable(),
    sequence: count.describe("Grows with every change of the transaction: a callback with a smaller one is stale"),
    expiresAt: time,
    createdAt: time,
    updatedAt: time,
    completedAt: nullableTime.describe("When it became final; null before"),
  })
  .meta({ description: "A deposit as the merchant sees it (reads, listings and callbacks)." });

export const withdrawalSchema = z
  .strictObject({
    transactionId: z.string(),
    type: z.literal("withdrawal"),
    processId: z.string(),
    amount,
    currency: z.string(),
    status: z.enum(WITHDRAWAL_STATUSES),
    bankId: z.string().nullable(),
    accountName: z.string(),
    iban: z.string().describe("Electronic format: no spaces, upper case"),
    userId: z.string(),
    userName: z.string(),
    name: z.string(),
    failureReason: z.string().nullable().describe("A code such as ACCOUNT_CLOSED when failed; APPROVAL_REJECTED or APPROVAL_EXPIRED when cancelled by the merchant's own approval of an API key's withdrawal; null otherwise"),
    sequence: count,
    createdAt: time,
    updatedAt: time,
    completedAt: nullableTime.describe("When it became final (completed, failed or cancelled); null before"),
  })
  .meta({ description: "A withdrawal (payout) as the merchant sees it." });

export const transactionSchema = z.discriminatedUnion("type", [depositSchema, withdrawalSchema]).meta({ description: "A deposit or a withdrawal; `type` tells them apart." });

export const transactionPageSchema = z.strictObject({
  items: z.array(transactionSchema).describe("Newest first"),
  nextCursor: z.string().nullable().describe("Pass as `cursor` for the next page; null at the end"),
});

export const balanceSchema = z.strictObject({ currency: z.string(), available: amount.describe("What a withdrawal can take"), held: amount.describe("Held by withdrawals not yet final") });

export const balanceListSchema = z.strictObject({ balances: z.array(balanceSchema) });

/** A signed integer amount (a movement's change): negative takes money out. */
const signedAmount = z.int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
const day = z.iso.date().describe("A UTC day, YYYY-MM-DD");

export const statementMovementSchema = z
  .strictObject({
    at: time.describe("When the ledger entry was posted"),
    kind: z
      .enum(STATEMENT_KINDS)
      .describe(
        "deposit_credit: a completed deposit credited. withdrawal_hold: a withdrawal's amount set aside from available (amount 0: still yours). withdrawal_debit: a completed withdrawal's money left (negative). withdrawal_release: a cancelled or failed withdrawal's amount back to available (amount 0). adjustment: a manual correction by the operator (either sign).",
      ),
    amount: signedAmount.describe("Change of your balance (available + held), in the smallest currency unit; negative when money left"),
    availableChange: signedAmount.describe("Change of `available`"),
    heldChange: signedAmount.describe("Change of `held`"),
    balanceAfter: amount.describe("Your balance (available + held) after this movement"),
    transactionId: z.string().describe("The deposit or withdrawal it belongs to (an adjustment's own id, `adj_…`, for an adjustment)"),
    processId: z.string().nullable().describe("Your processId of that deposit or withdrawal; null for an adjustment (and for deposits credited before statements existed)"),
  })
  .meta({ description: "One ledger movement of a statement." });

export const statementSchema = z
  .strictObject({
    currency: z.string(),
    from: day.describe("The first day covered, from its start (00:00 UTC, or in timeZone)"),
    to: day.describe("The last day covered, to its end (inclusive)"),
    timeZone: z.string().optional().describe("The time zone whose days `from` and `to` are, when the request named one (canonically spelled); absent: UTC days"),
    openingBalance: amount.describe("Your balance (available + held, as GET /v1/balance) at the start of `from`"),
    closingBalance: amount.describe("Your balance at the end of `to`: openingBalance plus every movement's amount, exactly"),
    movements: z.array(statementMovementSchema).describe("Every movement of the period, in the order the ledger posted them; balanceAfter is the running balance"),
  })
  .meta({ description: "Your statement of one currency over whole UTC days." });

export const callbackEventTypeSchema = z.enum(CALLBACK_EVENT_TYPES);

/** The body of a callback, exactly as POSTed to the merchant. */
export const callbackBodySchema = z
  .strictObject({
    id: z.string().describe("The event id, also in X-Event-Id and webhook-id; stable across retries"),
    type: callbackEventTypeSchema,
    createdAt: time.describe("When the status changed"),
    data: transactionSchema,
  })
  .meta({ description: "A status change of one transaction." });

export const deliveryAttemptSchema = z.strictObject({
  number: count,
  attemptedAt: time,
  url: z.string().nullable().describe("The callback URL used; null when the merchant had none"),
  statusCode: z.int().nullable().describe("The HTTP status answered; null when no answer arrived"),
  latencyMs: count,
  error: z.string().nullable().describe("Why it did not count as delivered; null when delivered"),
  outcome: z.enum(["delivered", "retry", "failed", "lost"]),
});

export const eventSchema = z
  .strictObject({
    id: z.string(),
    type: callbackEventTypeSchema,
    createdAt: time,
    data: transactionSchema.describe("The transaction record the callback carried"),
    deliveryStatus: z.enum(DELIVERY_STATUSES),
    nextAttemptAt: nullableTime.describe("When the next attempt is due; null unless pending and waiting"),
    deliveredAt: nullableTime,
    attempts: z.array(deliveryAttemptSchema),
  })
  .meta({ description: "A callback event: the body sent, its delivery state and every attempt." });

export const eventPageSchema = z.strictObject({
  items: z.array(eventSchema).describe("Newest first"),
  nextCursor: z.string().nullable(),
});

/** The envelope's `timestamp`: Unix seconds. */
const unixSeconds = z.int().min(0).describe("Unix time in seconds of the response");

/** `{ success: true, data, timestamp }` around one of the schemas above. */
export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.strictObject({ success: z.literal(true), data, timestamp: unixSeconds });
}

/** `{ success: false, error: { code, message, details? }, timestamp }`, the code one of `codes`. */
export function failureEnvelope(codes: readonly [string, ...string[]]) {
  return z.strictObject({
    success: z.literal(false),
    error: z.strictObject({
      code: z.enum(codes),
      message: z.string(),
      details: z.record(z.string(), z.string()).optional().describe("Extra facts, e.g. transactionId of the existing transaction on DUPLICATE_TRANSACTION"),
    }),
    timestamp: unixSeconds,
  });
}

/**
 * The named schemas of `components.schemas`, by name. Nested ones are referenced by name,
 * so a deposit is one schema wherever it appears.
 */
export const COMPONENT_SCHEMAS = {
  Bank: bankSchema,
  BankList: bankListSchema,
  AssignedAccount: assignedAccountSchema,
  Customer: customerSchema,
  Deposit: depositSchema,
  Withdrawal: withdrawalSchema,
  Transaction: transactionSchema,
  TransactionPage: transactionPageSchema,
  Balance: balanceSchema,
  BalanceList: balanceListSchema,
  StatementMovement: statementMovementSchema,
  Statement: statementSchema,
  CallbackEventType: callbackEventTypeSchema,
  CallbackBody: callbackBodySchema,
  DeliveryAttempt: deliveryAttemptSchema,
  Event: eventSchema,
  EventPage: eventPageSchema,
} as const satisfies Record<string, z.ZodType>;

export type ComponentName = keyof typeof COMPONENT_SCHEMAS;
