import type { ApiKeyScope } from "@payments/access";
import { z } from "zod";
import { ID_MAX, SAFE_CHARACTERS } from "../routes/route.js";
import type { JsonSchema } from "./json-schema.js";
import { ACCOUNT_OPERATIONS, BANK_OPERATIONS } from "./operations-account.js";
import { DEPOSIT_OPERATIONS, SANDBOX_OPERATIONS } from "./operations-deposits.js";
import { WITHDRAWAL_OPERATIONS } from "./operations-withdrawals.js";
import type { ComponentName } from "./schemas.js";

/** Error codes an operation may answer, by HTTP status. */
export type ErrorCodes = Readonly<Record<number, readonly string[]>>;

/** One merchant operation of the document; document.ts turns it into an OpenAPI Operation Object. */
export interface OperationSpec {
  method: "get" | "post";
  /** OpenAPI path template, `/v1/deposit/{transactionId}`. */
  path: string;
  operationId: string;
  /** The API key scopes that admit it, any one of them (the route's, key-scopes.ts SCOPES). */
  scopes: readonly ApiKeyScope[];
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
  INSUFFICIENT_SCOPE:
    "The API key the request is signed with lacks the scope this operation needs (the message names it; see the operation's security): nothing was called or changed. Use a key with that scope, made on the merchant dashboard's Developers page",
  SANDBOX_ONLY: "Sandbox helpers work for sandbox merchants and their deposits only",
  TRANSACTION_NOT_FOUND: "You have no transaction of this kind with this id (or processId)",
  EVENT_NOT_FOUND: "You have no callback event with this id",
  INVALID_TRANSACTION_STATE: "The transaction's status does not allow this move; `error.details.status` is its status",
  MERCHANT_MODE_CHANGING: "Your account is switching between sandbox and live (it takes seconds at most); nothing was created, retry shortly",
  NOT_FOUND: "No endpoint has this path (paths are case-sensitive; an empty id, as in `/v1/events//redeliver`, leaves a path no endpoint has). Checked before authentication",
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

/** Every merchant operation, in the document's order; each resource's are in operations-<resource>.ts, their shared texts in operations-texts.ts. */
export const OPERATIONS: readonly OperationSpec[] = [...BANK_OPERATIONS, ...DEPOSIT_OPERATIONS, ...WITHDRAWAL_OPERATIONS, ...ACCOUNT_OPERATIONS, ...SANDBOX_OPERATIONS];
