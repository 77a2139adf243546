import { DEPOSIT_STATUSES, DELIVERY_STATUSES, WITHDRAWAL_STATUSES } from "@payments/records";
import { z } from "zod";
import { byProcessIdQuery as depositByProcessId, createDepositBody } from "../routes/deposits.js";
import { listQuery as eventListQuery } from "../routes/events.js";
import { MAX_JSON_DEPTH } from "../json-depth.js";
import { BANK_ID_MAX, ID_MAX, IBAN_INPUT_MAX, PROCESS_ID_MAX, SAFE_CHARACTERS, TEXT_MAX, optionalQueryValue, pageLimit } from "../routes/route.js";
import { sandboxPayBody } from "../routes/sandbox.js";
import { STATEMENT_FORMATS, STATEMENT_LOCALES, STATEMENT_MAX_DAYS, statementQuery } from "../routes/statement.js";
import { TRANSACTION_TYPES } from "../routes/transactions.js";
import { byProcessIdQuery as withdrawalByProcessId, createWithdrawalBody } from "../routes/withdrawals.js";
import {
  AKBANK_BANK_ID,
  DEPOSIT_ID,
  EVENT_ID as EVENT_ID_EXAMPLE,
  RECIPIENT_IBAN,
  WITHDRAWAL_ID,
  ZIRAAT_BANK_ID,
  balanceListExample,
  bankListExample,
  completedDepositExample,
  depositExample,
  eventExample,
  statementCsvExample,
  statementExample,
  withdrawalExample,
} from "./examples.js";
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
  /** The path parameters: what each is, and an id of the right kind as example. Their schema is PATH_ID. */
  pathParams?: Readonly<Record<string, { description: string; example: string }>>;
  /** The query the route parses, and per-parameter overrides of what zod cannot see (enums behind refinements), descriptions and examples. */
  query?: {
    schema: z.ZodObject;
    overrides?: ReadonlyMap<z.core.$ZodType, JsonSchema>;
    descriptions?: Readonly<Record<string, string>>;
    examples?: Readonly<Record<string, unknown>>;
  };
  /**
   * The JSON body the route parses; `required: false` for routes that accept an empty body.
   * `descriptions` by dotted field path (`customer.name`): what a field is, and the rules the
   * services judge that no schema can state (uniqueness, a bank's limits, the IBAN checksum).
   */
  body?: { schema: z.ZodType; required: boolean; example: unknown; descriptions?: Readonly<Record<string, string>> };
  success: {
    status: 200 | 201;
    data: ComponentName;
    description: string;
    example: unknown;
    /** A CSV rendering of the same answer the merchant asks for in the query (format=csv), with its example. */
    csv?: { description: string; example: string };
    /** An Excel workbook (.xlsx) of the same answer the merchant asks for in the query (format=xlsx). */
    xlsx?: { description: string };
  };
  /** Errors of this operation beyond those every merchant operation has (MERCHANT_ERRORS). */
  errors: ErrorCodes;
}

/**
 * What every signed request can be answered with, whatever the route: the route match (405
 * for another method on the path), the authentication order of decisions.md (401s, then 403,
 * then 429), the body reader (413, 415 for a compressed body, 400 for one cut short), the JSON
 * parser on POST (415, 400), Node's HTTP parser and timers (400, 408, 413, 431: the
 * clientError listener answers those in the envelope too), and the backing services (500,
 * 503, 504).
 */
export const MERCHANT_ERRORS: ErrorCodes = {
  400: ["VALIDATION_ERROR"],
  401: ["MISSING_API_KEY", "INVALID_API_KEY", "MISSING_TIMESTAMP", "MISSING_SIGNATURE", "TIMESTAMP_EXPIRED", "INVALID_SIGNATURE"],
  403: ["IP_NOT_WHITELISTED"],
  405: ["METHOD_NOT_ALLOWED"],
  408: ["REQUEST_TIMEOUT"],
  413: ["PAYLOAD_TOO_LARGE"],
  415: ["UNSUPPORTED_MEDIA_TYPE"],
  429: ["RATE_LIMITED"],
  431: ["HEADERS_TOO_LARGE"],
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
  NOT_FOUND: "No endpoint has this path (paths are case-sensitive)",
  METHOD_NOT_ALLOWED:
    "The path exists but not with this method (a GET of a POST-only path, a PUT, an OPTIONS): `Allow` lists the methods it takes. Checked before authentication. A client made from this document never sends one",
  REQUEST_TIMEOUT: "The request was not received completely within the server's timeouts; the connection is closed",
  HEADERS_TOO_LARGE: "The request headers are larger than 16 KiB; the connection is closed",
  PAYLOAD_TOO_LARGE: "The body is larger than 64 KiB",
  UNSUPPORTED_MEDIA_TYPE: "A body not sent as `application/json` (UTF-8), or sent compressed",
  RATE_LIMITED: "Too many requests (or too many failed authentications from this IP); wait Retry-After seconds",
  INTERNAL_ERROR: "An unexpected failure; quote X-Request-Id to support",
  SERVICE_UNAVAILABLE: "A backing service is unreachable; retry later",
  UPSTREAM_TIMEOUT: "A backing service did not answer in time; retry later",
};

/**
 * The schema of every id in a path: the services parse one as 1..40 characters without
 * control characters (test/openapi-limits.test.ts holds this to their validators), and
 * answer anything else as an id of nothing, 404, like an id that does not exist.
 */
export const PATH_ID = z.string().min(1).max(ID_MAX).regex(SAFE_CHARACTERS);

const NOT_AN_ID = `Ids are at most ${ID_MAX} characters; any other string is simply not found (404).`;
const DEPOSIT_ID_PARAM = { description: `The deposit's \`transactionId\` as the gateway returned it (\`dep_\` and 22 URL-safe characters). ${NOT_AN_ID}`, example: DEPOSIT_ID };
const WITHDRAWAL_ID_PARAM = { description: `The withdrawal's \`transactionId\` as the gateway returned it (\`wdr_\` and 22 URL-safe characters). ${NOT_AN_ID}`, example: WITHDRAWAL_ID };
const EVENT_ID_PARAM = {
  description: `The event id (\`evt_\` and 22 URL-safe characters): a callback's \`X-Event-Id\` (or \`webhook-id\`), or an \`id\` from GET /v1/events. ${NOT_AN_ID}`,
  example: EVENT_ID_EXAMPLE,
};

/*
 * What the request fields are, and the limits the services judge beyond the schema: the
 * lengths and characters are in the schema itself (route.ts), these say the rest.
 */
const TEXT = `trimmed, then 1 to ${TEXT_MAX} characters (counted in UTF-16 code units: a character outside the Basic Multilingual Plane, such as an emoji, counts 2), none of them a control character or bidirectional override`;
const PROCESS_ID_RULE = `1 to ${PROCESS_ID_MAX} characters, kept exactly as sent: no whitespace at either end, no control characters or bidirectional overrides`;
const CURRENCY =
  "Currency code (any case, surrounding spaces ignored); default `TRY`. One of the currencies this gateway is configured for (by default only TRY): another is 400 VALIDATION_ERROR naming the currencies, checked by the service because the list is configuration.";

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
/** `from`/`to` of the listing: a time with a zone, or a date meaning its start in UTC (transactions.ts accepts exactly these two forms). */
const ISO_TIME_QUERY = {
  anyOf: [
    { type: "string", format: "date-time" },
    { type: "string", format: "date" },
  ],
  description: "ISO 8601 time with Z or an offset (2026-11-22T10:15:30.123Z, 2026-11-22T13:15:30+03:00), or a date (2026-11-22, its start in UTC)",
};

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
      example: { processId: "order-1001", amount: 150000, currency: "TRY", bankCode: ZIRAAT_BANK_ID, customer: { id: "cust-42", name: "Ayşe Yılmaz", username: "ayse" }, metadata: { cartId: "c-9001" }, returnUrl: "https://shop.example.com/orders/order-1001" },
      descriptions: {
        processId: `Your id of this deposit: ${PROCESS_ID_RULE}. Unique among your deposits (withdrawals have their own): a second deposit with it is 400 DUPLICATE_TRANSACTION, whose \`error.details.transactionId\` is the first; checked by the deposit service.`,
        amount:
          "Integer in the smallest currency unit (kuruş for TRY). It must also lie within the chosen bank's `minAmount`..`maxAmount` of GET /v1/available-banks (without `bankCode`, your widest limits): otherwise 400 AMOUNT_OUT_OF_RANGE, checked by the deposit service because the limits are per bank and per merchant.",
        currency: CURRENCY,
        bankCode: `A bank's \`_id\` (\`bnk_…\`) or \`FAST\` from GET /v1/available-banks, at most ${BANK_ID_MAX} characters; null or absent: any of your banks. One not open to you now is 400 VALIDATION_ERROR, and a listed bank with no receiving account free is 400 BANK_UNAVAILABLE; both checked by the deposit service against the catalog.`,
        customer: "Your customer, as you know them.",
        "customer.id": `Your id of the customer: ${TEXT}.`,
        "customer.name": `The customer's full name: ${TEXT}.`,
        "customer.username": `The customer's username: ${TEXT}.`,
        metadata: `Any JSON object, echoed back in the deposit record and its callbacks: at most 8 KiB as JSON text (checked by the deposit service) and nested at most ${MAX_JSON_DEPTH} levels deep.`,
      },
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
    query: { schema: depositByProcessId, descriptions: { processId: `Your processId of the deposit: ${PROCESS_ID_RULE}` }, examples: { processId: "order-1001" } },
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
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
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
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
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
      example: { processId: "payout-2001", amount: 50000, bankId: AKBANK_BANK_ID, accountName: "Mehmet Demir", iban: RECIPIENT_IBAN, userId: "cust-42", userName: "mehmet", name: "Mehmet Demir" },
      descriptions: {
        processId: `Your id of this withdrawal: ${PROCESS_ID_RULE}. Unique among your withdrawals (deposits have their own): a second withdrawal with it is 400 DUPLICATE_TRANSACTION, whose \`error.details.transactionId\` is the first; checked by the payout service.`,
        amount:
          "Integer in the smallest currency unit (kuruş for TRY). At most your `available` balance in this currency (GET /v1/balance): otherwise 400 INSUFFICIENT_BALANCE and nothing changes, checked by the payout service as it holds the amount.",
        currency: CURRENCY,
        bankId: `The recipient's bank: a bank's \`_id\` (\`bnk_…\`) from GET /v1/available-banks, at most ${BANK_ID_MAX} characters; null or absent: not named. One the bank catalog does not know is 400 VALIDATION_ERROR, checked by the payout service.`,
        accountName: `The recipient's account holder: ${TEXT}.`,
        iban: `The recipient's Turkish IBAN, at most ${IBAN_INPUT_MAX} characters as sent. Spaces are removed and letters upper-cased; what is left must be 26 characters, start with \`TR\` and carry valid ISO 13616 mod-97 check digits (\`TR64 0004 6000 0018 7230 4596 11\` is fine): otherwise 400 INVALID_IBAN, checked by the payout service.`,
        userId: `Your id of the customer: ${TEXT}.`,
        userName: `The customer's username: ${TEXT}.`,
        name: `The customer's full name: ${TEXT}.`,
      },
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
    query: { schema: withdrawalByProcessId, descriptions: { processId: `Your processId of the withdrawal: ${PROCESS_ID_RULE}` }, examples: { processId: "payout-2001" } },
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
    pathParams: { transactionId: WITHDRAWAL_ID_PARAM },
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
    pathParams: { transactionId: WITHDRAWAL_ID_PARAM },
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

\`from\` and \`to\` are dates (YYYY-MM-DD), both included: the statement covers [from 00:00 UTC, the day after to 00:00 UTC), at most ${STATEMENT_MAX_DAYS} days. A statement has no size limit: it is sent as it is read (chunked), however many movements the range holds; should the gateway fail once the response has begun, it breaks the connection off rather than end the document, so a JSON statement that parses, or a CSV one that ends with its closing_balance row, is whole. \`format=csv\` answers the same statement as \`text/csv\` (UTF-8, CRLF, RFC 4180) to download: a header row, an opening row, one row per movement and a closing row, each amount in the smallest unit and with two decimals; a text value starting with = + - @ gets a leading apostrophe so a spreadsheet never runs it. The file starts with a UTF-8 byte-order mark (U+FEFF), so Excel reads it as UTF-8. \`format=xlsx\` answers the same rows as an Excel workbook: one sheet, a bold frozen header row, times as date cells in UTC, amounts as numbers (the smallest unit, and the currency with two decimals shown), ids and kinds as text. \`locale\` is the language of a file: \`en\` (default) as above; \`tr\` gives Turkish headers and, for CSV, \`;\` between cells and a decimal comma (\`1500,50\`, no thousands separator), as Excel set to Turkish reads it; times (ISO 8601 UTC) and kinds (\`opening_balance\`, \`deposit_credit\`, …) are the same in both. The JSON is the same whatever the locale. Errors are JSON whatever the format.`,
    query: {
      schema: statementQuery,
      overrides: new Map<z.core.$ZodType, JsonSchema>([
        [statementQuery.shape.from, { type: "string", format: "date" }],
        [statementQuery.shape.to, { type: "string", format: "date" }],
        [statementQuery.shape.format, { type: "string", enum: [...STATEMENT_FORMATS] }],
        [statementQuery.shape.locale, { type: "string", enum: [...STATEMENT_LOCALES] }],
      ]),
      descriptions: {
        currency: "A currency you are configured for; default TRY (another is a VALIDATION_ERROR, as on withdrawals)",
        from: "The first day, YYYY-MM-DD (UTC)",
        to: "The last day, YYYY-MM-DD (UTC), included; not before `from`",
        format: "json (default), csv or xlsx",
        locale: "The language of a csv or xlsx file: en (default) or tr (Turkish headers; a CSV with ; between cells and decimal commas)",
      },
    },
    success: {
      status: 200,
      data: "Statement",
      description: "The statement",
      example: statementExample,
      csv: { description: "With format=csv: the statement as a CSV file, starting with a UTF-8 byte-order mark (Content-Disposition: attachment; filename=\"statement-<currency>-<from>-<to>.csv\")", example: statementCsvExample },
      xlsx: { description: "With format=xlsx: the statement as an Excel workbook (Content-Disposition: attachment; filename=\"statement-<currency>-<from>-<to>.xlsx\")" },
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
      descriptions: {
        deliveryStatus: "Only events in this delivery state",
        transactionId: `Only the events of this deposit or withdrawal (at most ${ID_MAX} characters); one that is not yours lists nothing`,
        ...PAGE_DESCRIPTIONS,
      },
      examples: { transactionId: DEPOSIT_ID },
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
    pathParams: { eventId: EVENT_ID_PARAM },
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
    pathParams: { eventId: EVENT_ID_PARAM },
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
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
    body: {
      schema: sandboxPayBody,
      required: false,
      example: { amount: 150000, senderName: "Ayşe Yılmaz" },
      descriptions: {
        amount: "The amount transferred, an integer in the smallest currency unit; default the deposit's amount. Another amount is handled as a real transfer of it would be.",
        senderName: `The transfer's sender name; \`""\`, null or absent: the deposit's customer name. Otherwise ${TEXT}.`,
      },
    },
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
    pathParams: { transactionId: DEPOSIT_ID_PARAM },
    success: { status: 200, data: "Deposit", description: "The deposit, `expired`", example: { ...depositExample, status: "expired", sequence: 2, completedAt: "2026-11-22T10:16:00.000Z", updatedAt: "2026-11-22T10:16:00.000Z" } },
    errors: { 403: ["SANDBOX_ONLY"], 404: ["TRANSACTION_NOT_FOUND"], 409: ["INVALID_TRANSACTION_STATE"] },
  },
];
