import { DEPOSIT_STATUSES, DELIVERY_STATUSES, WITHDRAWAL_STATUSES } from "@payments/records";
import { z } from "zod";
import { byProcessIdQuery as depositByProcessId, createDepositBody } from "../routes/deposits.js";
import { listQuery as eventListQuery } from "../routes/events.js";
import { optionalQueryValue, pageLimit } from "../routes/route.js";
import { sandboxPayBody } from "../routes/sandbox.js";
import { STATEMENT_FORMATS, STATEMENT_MAX_DAYS, statementQuery } from "../routes/statement.js";
import { TRANSACTION_TYPES } from "../routes/transactions.js";
import { byProcessIdQuery as withdrawalByProcessId, createWithdrawalBody } from "../routes/withdrawals.js";
import { balanceListExample, bankListExample, completedDepositExample, depositExample, eventExample, statementCsvExample, statementExample, withdrawalExample } from "./examples.js";
import type { JsonSchema } from "./json-schema.js";
import type { ComponentName } from "./schemas.js";

/** Error codes an operation may answer, by HTTP status. */
export type ErrorCodes = Readonly<Record<number, readonly string[]>>;

/** One merchant operation of the document; document.ts turns it into an OpenAPI Operation Object. */
export interface OperationSpec {
  method: "get" | "post";
  /** OpenAPI path template, `/v1/deposit/{transactionId}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** The path parameters and what they are. */
  pathParams?: Readonly<Record<string, string>>;
  /** The query the route parses, and per-parameter overrides of what zod cannot see (enums behind refinements). */
  query?: { schema: z.ZodObject; overrides?: ReadonlyMap<z.core.$ZodType, JsonSchema>; descriptions?: Readonly<Record<string, string>> };
  /** The JSON body the route parses; `required: false` for routes that accept an empty body. */
  body?: { schema: z.ZodType; required: boolean; example: unknown };
  success: {
    status: 200 | 201;
    data: ComponentName;
    description: string;
    example: unknown;
    /** A CSV rendering of the same answer the merchant asks for in the query (format=csv), with its example. */
    csv?: { description: string; example: string };
  };
  /** Errors of this operation beyond those every merchant operation has (MERCHANT_ERRORS). */
  errors: ErrorCodes;
}

/**
 * What every signed request can be answered with, whatever the route: the authentication
 * order of decisions.md (401s, then 403, then 429), the body reader (413, 415 for a
 * compressed body, 400 for one cut short), the JSON parser on POST (415, 400), and the
 * backing services (500, 503, 504).
 */
export const MERCHANT_ERRORS: ErrorCodes = {
  400: ["VALIDATION_ERROR"],
  401: ["MISSING_API_KEY", "INVALID_API_KEY", "MISSING_TIMESTAMP", "MISSING_SIGNATURE", "TIMESTAMP_EXPIRED", "INVALID_SIGNATURE"],
  403: ["IP_NOT_WHITELISTED"],
  413: ["PAYLOAD_TOO_LARGE"],
  415: ["UNSUPPORTED_MEDIA_TYPE"],
  429: ["RATE_LIMITED"],
  500: ["INTERNAL_ERROR"],
  503: ["SERVICE_UNAVAILABLE"],
  504: ["UPSTREAM_TIMEOUT"],
};

/** What each error code means; the description of an error response lists its codes with these. */
export const ERROR_MEANINGS: Readonly<Record<string, string>> = {
  VALIDATION_ERROR: "The request is malformed; the message names every field and its problem (`processId: is required; amount: …`)",
  DUPLICATE_TRANSACTION: "The processId is already used by one of your transactions of this kind; `error.details.transactionId` is that transaction",
  AMOUNT_OUT_OF_RANGE: "The amount is outside the chosen bank's limits (without bankCode, your widest limits); the message states the range and currency",
  BANK_UNAVAILABLE: "No receiving account is active for the chosen bank (or any bank); nothing was stored",
  INVALID_IBAN: "The IBAN is not a valid Turkish IBAN (26 characters, TR, mod-97 checksum)",
  INSUFFICIENT_BALANCE: "The available balance is lower than the amount; nothing changed",
  MISSING_API_KEY: "X-API-Key is absent",
  INVALID_API_KEY: "The API key is unknown or its merchant is disabled",
  MISSING_TIMESTAMP: "X-Timestamp is absent",
  MISSING_SIGNATURE: "X-Signature is absent",
  TIMESTAMP_EXPIRED: "X-Timestamp is not whole Unix seconds within 300 s of the server's time",
  INVALID_SIGNATURE: "The signature matches none of your active API secrets",
  IP_NOT_WHITELISTED: "The caller's IP is not on your allow-list (withdrawals also refuse every IP while the list is empty)",
  SANDBOX_ONLY: "Sandbox helpers work for sandbox merchants and their deposits only",
  TRANSACTION_NOT_FOUND: "You have no transaction of this kind with this id (or processId)",
  EVENT_NOT_FOUND: "You have no callback event with this id",
  INVALID_TRANSACTION_STATE: "The transaction's status does not allow this move; `error.details.status` is its status",
  PAYLOAD_TOO_LARGE: "The body is larger than 64 KiB",
  UNSUPPORTED_MEDIA_TYPE: "A body not sent as `application/json` (UTF-8), or sent compressed",
  RATE_LIMITED: "Too many requests (or too many failed authentications from this IP); wait Retry-After seconds",
  INTERNAL_ERROR: "An unexpected failure; quote X-Request-Id to support",
  SERVICE_UNAVAILABLE: "A backing service is unreachable; retry later",
  UPSTREAM_TIMEOUT: "A backing service did not answer in time; retry later",
};

const TRANSACTION_ID = "The `transactionId` the gateway returned";
const EVENT_ID = "The event id: a callback's `X-Event-Id` (or `webhook-id`), or an `id` from GET /v1/events";

/**
 * GET /v1/transactions parses a query built inside transactions(): its type and status refine
 * optionalQueryValue against lists known only there. This is the same query from the same
 * pieces (optionalQueryValue, pageLimit), with the lists as enums. (Clones, so each
 * parameter is a schema of its own that an override can name.)
 */
const transactionListQuery = z.object({
  type: optionalQueryValue.clone(),
  status: optionalQueryValue.clone(),
  from: optionalQueryValue.clone(),
  to: optionalQueryValue.clone(),
  limit: pageLimit,
  cursor: optionalQueryValue,
});
const ALL_TRANSACTION_STATUSES = [...new Set([...DEPOSIT_STATUSES, ...WITHDRAWAL_STATUSES])];
const ISO_TIME_QUERY = { type: "string", description: "ISO 8601 time with a zone (2026-11-22T10:15:30.123Z), or a date (2026-11-22, its start in UTC)" };

const PAGE_DESCRIPTIONS = {
  limit: "Page size, 1 to 100 (default 20)",
  cursor: "The `nextCursor` of the previous page",
};

export const OPERATIONS: readonly OperationSpec[] = [
  {
    method: "get",
    path: "/v1/available-banks",
    operationId: "listAvailableBanks",
    tag: "Banks",
    summary: "List the banks open to you",
    description:
      "The banks available for your account with your per-bank minimum and maximum amounts, plus a single FAST entry when FAST is available. Use a bank's `_id` as `bankCode` of a deposit (or `FAST`). The list changes rarely: cache it and refresh it every few hours.",
    success: { status: 200, data: "BankList", description: "The bank list", example: bankListExample },
    errors: {},
  },
  {
    method: "post",
    path: "/v1/deposit",
    operationId: "createDeposit",
    tag: "Deposits",
    summary: "Create a deposit",
    description:
      "Creates a pending deposit and assigns a receiving account. Redirect the customer to `checkoutUrl`; the final status arrives by callback. The deposit expires 30 minutes after creation (`expiresAt`). Unknown fields are ignored.",
    body: {
      schema: createDepositBody,
      required: true,
      example: { processId: "order-1001", amount: 150000, currency: "TRY", bankCode: "ziraat", customer: { id: "cust-42", name: "Ayşe Yılmaz", username: "ayse" }, metadata: { cartId: "c-9001" } },
    },
    success: { status: 201, data: "Deposit", description: "The new deposit, `pending`", example: depositExample },
    errors: { 400: ["DUPLICATE_TRANSACTION", "AMOUNT_OUT_OF_RANGE", "BANK_UNAVAILABLE"] },
  },
  {
    method: "get",
    path: "/v1/deposit",
    operationId: "getDepositByProcessId",
    tag: "Deposits",
    summary: "Get a deposit by your processId",
    description: "The deposit you created with this `processId`.",
    query: { schema: depositByProcessId, descriptions: { processId: "Your processId of the deposit" } },
    success: { status: 200, data: "Deposit", description: "The deposit", example: completedDepositExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "get",
    path: "/v1/deposit/{transactionId}",
    operationId: "getDeposit",
    tag: "Deposits",
    summary: "Get a deposit",
    description: "The deposit with this `transactionId`.",
    pathParams: { transactionId: TRANSACTION_ID },
    success: { status: 200, data: "Deposit", description: "The deposit", example: completedDepositExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "post",
    path: "/v1/deposit/{transactionId}/cancel",
    operationId: "cancelDeposit",
    tag: "Deposits",
    summary: "Cancel a pending deposit",
    description:
      "Moves a `pending` deposit to `cancelled` (a `deposit.cancelled` callback follows). No body is needed; any body sent must be a JSON object and is ignored. Cancelling a cancelled deposit answers 200 with it unchanged; any other final status is 409.",
    pathParams: { transactionId: TRANSACTION_ID },
    success: { status: 200, data: "Deposit", description: "The deposit, `cancelled`", example: { ...depositExample, status: "cancelled", sequence: 2, completedAt: "2026-11-22T10:20:00.000Z", updatedAt: "2026-11-22T10:20:00.000Z" } },
    errors: { 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
  {
    method: "post",
    path: "/v1/withdraw",
    operationId: "createWithdrawal",
    tag: "Withdrawals",
    summary: "Create a withdrawal",
    description:
      "Sends money from your available balance to a recipient's IBAN: the amount is held at once, and the withdrawal moves `pending` → `processing` → `completed` or `failed` (callbacks on each change). Only from an IP on your allow-list; an empty list refuses every caller. Unknown fields are ignored.",
    body: {
      schema: createWithdrawalBody,
      required: true,
      example: { processId: "payout-2001", amount: 50000, accountName: "Mehmet Demir", iban: "TR320010009999901234567890", userId: "cust-42", userName: "mehmet", name: "Mehmet Demir" },
    },
    success: { status: 201, data: "Withdrawal", description: "The new withdrawal, `pending`", example: withdrawalExample },
    errors: { 400: ["DUPLICATE_TRANSACTION", "INVALID_IBAN", "INSUFFICIENT_BALANCE"] },
  },
  {
    method: "get",
    path: "/v1/withdraw",
    operationId: "getWithdrawalByProcessId",
    tag: "Withdrawals",
    summary: "Get a withdrawal by your processId",
    description: "The withdrawal you created with this `processId`.",
    query: { schema: withdrawalByProcessId, descriptions: { processId: "Your processId of the withdrawal" } },
    success: { status: 200, data: "Withdrawal", description: "The withdrawal", example: withdrawalExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "get",
    path: "/v1/withdraw/{transactionId}",
    operationId: "getWithdrawal",
    tag: "Withdrawals",
    summary: "Get a withdrawal",
    description: "The withdrawal with this `transactionId`.",
    pathParams: { transactionId: TRANSACTION_ID },
    success: { status: 200, data: "Withdrawal", description: "The withdrawal", example: withdrawalExample },
    errors: { 404: ["TRANSACTION_NOT_FOUND"] },
  },
  {
    method: "post",
    path: "/v1/withdraw/{transactionId}/cancel",
    operationId: "cancelWithdrawal",
    tag: "Withdrawals",
    summary: "Cancel a pending withdrawal",
    description:
      "Moves a `pending` withdrawal to `cancelled` and returns the held amount to the balance. No body is needed; any body sent must be a JSON object and is ignored. A repeated cancel answers 200 unchanged; once processing has started it is 409.",
    pathParams: { transactionId: TRANSACTION_ID },
    success: { status: 200, data: "Withdrawal", description: "The withdrawal, `cancelled`", example: { ...withdrawalExample, status: "cancelled", sequence: 2, completedAt: "2026-11-22T11:01:00.000Z", updatedAt: "2026-11-22T11:01:00.000Z" } },
    errors: { 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
  {
    method: "get",
    path: "/v1/balance",
    operationId: "getBalance",
    tag: "Balance",
    summary: "Get your balance",
    description: "Per currency: `available` (what a withdrawal can take) and `held` (by withdrawals not yet final), in the smallest currency unit.",
    success: { status: 200, data: "BalanceList", description: "Your balances", example: balanceListExample },
    errors: {},
  },
  {
    method: "get",
    path: "/v1/statement",
    operationId: "getStatement",
    tag: "Balance",
    summary: "Get your statement",
    description: `Your ledger of one currency over whole UTC days, for your accounts: the opening balance, every movement with the balance after it, and the closing balance. The balance is the money you own, \`available + held\` of GET /v1/balance: money held for a withdrawal is yours until the withdrawal completes, so a hold and a release have amount 0 (their \`availableChange\` and \`heldChange\` show the move) and the withdrawal's debit is when it leaves. openingBalance plus every amount is closingBalance, exactly.

\`from\` and \`to\` are dates (YYYY-MM-DD), both included: the statement covers [from 00:00 UTC, the day after to 00:00 UTC), at most ${STATEMENT_MAX_DAYS} days. A statement has no size limit: it is sent as it is read (chunked), however many movements the range holds; should the gateway fail once the response has begun, it breaks the connection off rather than end the document, so a JSON statement that parses, or a CSV one that ends with its closing_balance row, is whole. \`format=csv\` answers the same statement as \`text/csv\` (UTF-8, CRLF, RFC 4180) to download: a header row, an opening row, one row per movement and a closing row, each amount in the smallest unit and with two decimals; a text value starting with = + - @ gets a leading apostrophe so a spreadsheet never runs it. Errors are JSON whatever the format.`,
    query: {
      schema: statementQuery,
      overrides: new Map<z.core.$ZodType, JsonSchema>([
        [statementQuery.shape.from, { type: "string", format: "date" }],
        [statementQuery.shape.to, { type: "string", format: "date" }],
        [statementQuery.shape.format, { type: "string", enum: [...STATEMENT_FORMATS] }],
      ]),
      descriptions: {
        currency: "A currency you are configured for; default TRY (another is a VALIDATION_ERROR, as on withdrawals)",
        from: "The first day, YYYY-MM-DD (UTC)",
        to: "The last day, YYYY-MM-DD (UTC), included; not before `from`",
        format: "json (default) or csv",
      },
    },
    success: {
      status: 200,
      data: "Statement",
      description: "The statement",
      example: statementExample,
      csv: { description: "With format=csv: the statement as a CSV file (Content-Disposition: attachment; filename=\"statement-<currency>-<from>-<to>.csv\")", example: statementCsvExample },
    },
    errors: {},
  },
  {
    method: "get",
    path: "/v1/transactions",
    operationId: "listTransactions",
    tag: "Transactions",
    summary: "List your transactions",
    description: "Deposits and withdrawals, newest first, a page at a time. Unknown parameters are ignored; a known one given twice is a VALIDATION_ERROR.",
    query: {
      schema: transactionListQuery,
      overrides: new Map<z.core.$ZodType, JsonSchema>([
        [transactionListQuery.shape.type, { type: "string", enum: [...TRANSACTION_TYPES] }],
        [transactionListQuery.shape.status, { type: "string", enum: ALL_TRANSACTION_STATUSES }],
        [transactionListQuery.shape.from, ISO_TIME_QUERY],
        [transactionListQuery.shape.to, ISO_TIME_QUERY],
      ]),
      descriptions: {
        type: "Only deposits or only withdrawals",
        status: "Only this status (with `type`, one of that kind's statuses)",
        from: "Created at or after this time",
        to: "Created before this time (later than `from`)",
        ...PAGE_DESCRIPTIONS,
      },
    },
    success: { status: 200, data: "TransactionPage", description: "One page", example: { items: [withdrawalExample, completedDepositExample], nextCursor: null } },
    errors: {},
  },
  {
    method: "get",
    path: "/v1/events",
    operationId: "listEvents",
    tag: "Events",
    summary: "List your callback events",
    description: "The callbacks sent to you (or being sent), newest first, with every delivery attempt.",
    query: {
      schema: eventListQuery,
      overrides: new Map<z.core.$ZodType, JsonSchema>([[eventListQuery.shape.deliveryStatus, { type: "string", enum: [...DELIVERY_STATUSES] }]]),
      descriptions: { deliveryStatus: "Only events in this delivery state", transactionId: "Only the events of this transaction", ...PAGE_DESCRIPTIONS },
    },
    success: { status: 200, data: "EventPage", description: "One page", example: { items: [eventExample], nextCursor: null } },
    errors: {},
  },
  {
    method: "get",
    path: "/v1/events/{eventId}",
    operationId: "getEvent",
    tag: "Events",
    summary: "Get a callback event",
    description: "One callback event, its body and its delivery attempts.",
    pathParams: { eventId: EVENT_ID },
    success: { status: 200, data: "Event", description: "The event", example: eventExample },
    errors: { 404: ["EVENT_NOT_FOUND"] },
  },
  {
    method: "post",
    path: "/v1/events/{eventId}/redeliver",
    operationId: "redeliverEvent",
    tag: "Events",
    summary: "Send a callback again",
    description: "Queues the event for a new delivery now, whatever its delivery status (delivered and failed events come back `pending`). The body sent is the same, with the same id. No body is needed.",
    pathParams: { eventId: EVENT_ID },
    success: { status: 200, data: "Event", description: "The event, `pending`", example: { ...eventExample, deliveryStatus: "pending", nextAttemptAt: "2026-11-22T12:00:00.000Z" } },
    errors: { 404: ["EVENT_NOT_FOUND"] },
  },
  {
    method: "post",
    path: "/v1/sandbox/deposit/{transactionId}/pay",
    operationId: "sandboxPayDeposit",
    tag: "Sandbox",
    summary: "Pay a sandbox deposit",
    description:
      "Sandbox merchants only: reports an incoming transfer matching the deposit, through the same path as a real bank's report, so the deposit completes and its callback is sent. The body is optional: without `amount` the transfer is of the deposit's amount; without `senderName` it comes from the deposit's customer.",
    pathParams: { transactionId: TRANSACTION_ID },
    body: { schema: sandboxPayBody, required: false, example: { amount: 150000, senderName: "Ayşe Yılmaz" } },
    success: { status: 200, data: "Deposit", description: "The deposit after the transfer", example: completedDepositExample },
    errors: { 403: ["SANDBOX_ONLY"], 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
  {
    method: "post",
    path: "/v1/sandbox/deposit/{transactionId}/expire",
    operationId: "sandboxExpireDeposit",
    tag: "Sandbox",
    summary: "Expire a sandbox deposit now",
    description: "Sandbox merchants only: the expiry job's move, now, for a `pending` deposit (a `deposit.expired` callback follows). No body is needed.",
    pathParams: { transactionId: TRANSACTION_ID },
    success: { status: 200, data: "Deposit", description: "The deposit, `expired`", example: { ...depositExample, status: "expired", sequence: 2, completedAt: "2026-11-22T10:16:00.000Z", updatedAt: "2026-11-22T10:16:00.000Z" } },
    errors: { 403: ["SANDBOX_ONLY"], 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
];
