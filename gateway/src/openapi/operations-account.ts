import { DEPOSIT_STATUSES, DELIVERY_STATUSES, TIME_ZONE_PATTERN, WITHDRAWAL_STATUSES } from "@payments/records";
import { z } from "zod";
import { listQuery as eventListQuery } from "../routes/events.js";
import { ID_MAX, optionalQueryValue, pageLimit } from "../routes/route.js";
import { STATEMENT_FORMATS, STATEMENT_LOCALES, STATEMENT_MAX_DAYS, statementQuery } from "../routes/statement.js";
import { TRANSACTION_TYPES } from "../routes/transactions.js";
import {
  DEPOSIT_ID,
  EVENT_ID as EVENT_ID_EXAMPLE,
  balanceListExample,
  bankListExample,
  completedDepositExample,
  eventExample,
  statementCsvExample,
  statementExample,
  withdrawalExample,
} from "./examples.js";
import type { JsonSchema } from "./json-schema.js";
import type { OperationSpec } from "./operations.js";
import { NOT_AN_ID } from "./operations-texts.js";
import { SCOPES } from "../key-scopes.js";

const EVENT_ID_PARAM = {
  description: `The event id (\`evt_\` and 22 URL-safe characters): a callback's \`X-Event-Id\` (or \`webhook-id\`), or an \`id\` from GET /v1/events. ${NOT_AN_ID}`,
  example: EVENT_ID_EXAMPLE,
};

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

/** The bank list: the document's first operation. */
export const BANK_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "get",
    path: "/v1/available-banks",
    operationId: "listAvailableBanks",
    scopes: SCOPES.anyKey,
    tag: "Banks",
    summary: "List the banks open to you",
    description:
      "The banks available for your account with your per-bank minimum and maximum amounts, plus a single FAST entry when FAST is available. Use a bank's `_id` as `bankCode` of a deposit (or `FAST`). The list changes rarely: cache it and refresh it every few hours.",
    success: { status: 200, data: "BankList", description: "The bank list", example: bankListExample },
    errors: {},
  },
];

/** The reads of your account (balance, statement, transactions) and its callback events, in the document's order. */
export const ACCOUNT_OPERATIONS: readonly OperationSpec[] = [
  {
    method: "get",
    path: "/v1/balance",
    operationId: "getBalance",
    scopes: SCOPES.readWithdrawals,
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
    scopes: SCOPES.read,
    tag: "Balance",
    summary: "Get your statement",
    description: `Your ledger of one currency over whole UTC days, for your accounts: the opening balance, every movement with the balance after it, and the closing balance. The balance is the money you own, \`available + held\` of GET /v1/balance: money held for a withdrawal is yours until the withdrawal completes, so a hold and a release have amount 0 (their \`availableChange\` and \`heldChange\` show the move) and the withdrawal's debit is when it leaves. openingBalance plus every amount is closingBalance, exactly.

\`from\` and \`to\` are dates (YYYY-MM-DD), both included: the statement covers [from 00:00 UTC, the day after to 00:00 UTC), at most ${STATEMENT_MAX_DAYS} days. With \`timeZone\` (an IANA name such as \`Europe/Istanbul\`) they are that zone's days instead: [from 00:00, the day after to 00:00) on its clocks, each day's start by the zone's rules on that day (\`timeZone=Europe/Istanbul&from=2026-12-01&to=2026-12-31\` covers 2026-11-30T21:00Z to 2026-12-31T21:00Z), and the answer names it (\`timeZone\`, canonically spelled); movement times stay UTC instants. A name the server's time zone data does not know, or an offset such as \`+03:00\`, is a VALIDATION_ERROR. Without it nothing changes: whole UTC days, no \`timeZone\` in the answer. A statement has no size limit: it is sent as it is read (chunked), however many movements the range holds; should the gateway fail once the response has begun, it breaks the connection off rather than end the document, so a JSON statement that parses, or a CSV one that ends with its closing_balance row, is whole. \`format=csv\` answers the same statement as \`text/csv\` (UTF-8, CRLF, RFC 4180) to download: a header row, an opening row, one row per movement and a closing row, each amount in the smallest unit and with two decimals; a text value starting with = + - @ gets a leading apostrophe so a spreadsheet never runs it. The file starts with a UTF-8 byte-order mark (U+FEFF), so Excel reads it as UTF-8. \`format=xlsx\` answers the same rows as an Excel workbook: one sheet, a bold frozen header row, times as date cells in UTC, amounts as numbers (the smallest unit, and the currency with two decimals shown), ids and kinds as text. \`locale\` is the language of a file: \`en\` (default) as above; \`tr\` gives Turkish headers and, for CSV, \`;\` between cells and a decimal comma (\`1500,50\`, no thousands separator), as Excel set to Turkish reads it; times (ISO 8601 UTC) and kinds (\`opening_balance\`, \`deposit_credit\`, …) are the same in both. The JSON is the same whatever the locale. Errors are JSON whatever the format.`,
    query: {
      schema: statementQuery,
      overrides: new Map<z.core.$ZodType, JsonSchema>([
        [statementQuery.shape.from, { type: "string", format: "date" }],
        [statementQuery.shape.to, { type: "string", format: "date" }],
        [statementQuery.shape.format, { type: "string", enum: [...STATEMENT_FORMATS] }],
        [statementQuery.shape.locale, { type: "string", enum: [...STATEMENT_LOCALES] }],
        [statementQuery.shape.timeZone, { type: "string", pattern: TIME_ZONE_PATTERN }],
      ]),
      descriptions: {
        currency: "A currency you are configured for; default TRY (another is a VALIDATION_ERROR, as on withdrawals)",
        from: "The first day, YYYY-MM-DD (UTC's, or timeZone's)",
        to: "The last day, YYYY-MM-DD (UTC's, or timeZone's), included; not before `from`",
        format: "json (default), csv or xlsx",
        locale: "The language of a csv or xlsx file: en (default) or tr (Turkish headers; a CSV with ; between cells and decimal commas)",
        timeZone: "Whose days `from` and `to` are: an IANA time zone name (Europe/Istanbul for Türkiye's days); default UTC",
      },
      examples: { timeZone: "Europe/Istanbul" },
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
    scopes: SCOPES.read,
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
    scopes: SCOPES.read,
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
    scopes: SCOPES.read,
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
    scopes: SCOPES.read,
    tag: "Events",
    summary: "Send a callback again",
    description: "Queues the event for a new delivery now, whatever its delivery status (delivered and failed events come back `pending`). The body sent is the same, with the same id. No body is needed.",
    pathParams: { eventId: EVENT_ID_PARAM },
    success: { status: 200, data: "Event", description: "The event, `pending`", example: { ...eventExample, deliveryStatus: "pending", nextAttemptAt: "2026-11-22T12:00:00.000Z" } },
    errors: { 404: ["EVENT_NOT_FOUND"] },
  },
];
