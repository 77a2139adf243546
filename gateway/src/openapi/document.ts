import { XLSX_CONTENT_TYPE } from "@payments/records";
import type { z } from "zod";
import { GETTING_STARTED } from "./getting-started.js";
import { EVENT_ID, REQUEST_ID, callbackBodyExample } from "./examples.js";
import { componentSchemas, inputSchema, outputSchema, type JsonSchema } from "./json-schema.js";
import { ERROR_MEANINGS, MERCHANT_ERRORS, OPERATIONS, PATH_ID, type ErrorCodes, type OperationSpec } from "./operations.js";
import { COMPONENT_SCHEMAS, failureEnvelope, successEnvelope, type ComponentName } from "./schemas.js";
import { EVERY_SCOPE, scopeMask, scopeWords } from "../key-scopes.js";

/** The OpenAPI document as JSON. Plain objects: the tests and `pnpm openapi` read it as such. */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: Record<string, Record<string, unknown>>;
};

const ref = (section: string, name: string) => ({ $ref: `#/components/${section}/${name}` });

/** The request signing rule of api.md and decisions.md, for the security schemes. */
const SIGNING = `Every merchant request carries three headers: \`X-API-Key\` (your API key), \`X-Timestamp\` (Unix time in seconds, as a string) and \`X-Signature\`.

\`X-Signature\` = lower-case hex of HMAC-SHA256, keyed with your API secret, of the plain concatenation

    X-Timestamp + METHOD + path-with-query + body

- \`X-Timestamp\` exactly as sent; \`METHOD\` in upper case (\`GET\`, \`POST\`);
- the path with its query string exactly as sent (\`/v1/deposit?processId=order-1\`);
- the body bytes exactly as sent (sign what you send, never a re-serialised copy); the empty string when there is none (GET).

The timestamp must be within 300 seconds of the server's time, either way. Checks run in this order, and the first failure answers: MISSING_API_KEY, INVALID_API_KEY, MISSING_TIMESTAMP, MISSING_SIGNATURE, TIMESTAMP_EXPIRED, INVALID_SIGNATURE (all 401), then IP_NOT_WHITELISTED (403), INSUFFICIENT_SCOPE (403) and RATE_LIMITED (429). During a secret rotation the old secret keeps working for a grace period. Keep the secret on your server.

**Scopes.** Each API key has scopes, chosen when it is made: \`read\` (transactions, balance, statement, callback events), \`deposits\` (create, read and cancel deposits; the sandbox helpers), \`withdrawals\` (create, read and cancel withdrawals; the balance). Every key may read the bank list. Each operation names the scopes that admit it (its \`security\`: any one of them); a key without one is answered 403 INSUFFICIENT_SCOPE and nothing is called. Give each system the narrowest key it needs: a shop's checkout a \`deposits\` key, a payouts server a \`withdrawals\` key.`;

/** The callback's headers, for the webhook: both signatures of decisions.md and Standard Webhooks. */
const CALLBACK_HEADERS: readonly { name: string; description: string; schema: JsonSchema; example: string }[] = [
  { name: "X-Event-Id", description: "The event id, as `id` in the body: the same on every retry. De-duplicate on it.", schema: { type: "string" }, example: EVENT_ID },
  { name: "X-Event-Type", description: "The event type, as `type` in the body.", schema: ref("schemas", "CallbackEventType"), example: "deposit.completed" },
  { name: "X-Timestamp", description: "Unix time in seconds of this attempt, as a string.", schema: { type: "string", pattern: "^\\d+$" }, example: "1795342864" },
  {
    name: "X-Signature",
    description:
      "Lower-case hex HMAC-SHA256, keyed with your API secret (the current one), of `X-Timestamp + \"POST\" + path-with-query-of-your-callback-URL + raw body`: the request signing scheme. Reject a timestamp more than 300 s from your clock.",
    schema: { type: "string", pattern: "^[0-9a-f]{64}$" },
    example: "5d41402abc4b2a76b9719d911017c592ae2c5d8f1a0b0c8e9f7d6c5b4a392817",
  },
  { name: "webhook-id", description: "Standard Webhooks: the event id (the same as X-Event-Id).", schema: { type: "string" }, example: EVENT_ID },
  { name: "webhook-timestamp", description: "Standard Webhooks: Unix time in seconds of this attempt.", schema: { type: "string", pattern: "^\\d+$" }, example: "1795342864" },
  {
    name: "webhook-signature",
    description:
      "Standard Webhooks: `v1,<base64 HMAC-SHA256 of webhook-id + \".\" + webhook-timestamp + \".\" + raw body>`, keyed with the base64-decoded part of your webhook secret after `whsec_`. While your webhook secret is being rotated there are two signatures, separated by a space; accept the callback when one matches.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$" },
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
];

function errorDescription(codes: readonly string[]): string {
  return codes.map((code) => `- \`${code}\`: ${ERROR_MEANINGS[code] ?? code}`).join("\n");
}

/** Whether some API key cannot call the operation (its scopes are not every scope). */
function scoped(op: Pick<OperationSpec, "scopes">): boolean {
  return scopeMask(op.scopes) !== EVERY_SCOPE;
}

/**
 * Whether a request meant for the operation can miss every route: an id in the middle of its
 * path that is empty (`/v1/events//redeliver`) leaves a path no endpoint has, 404 NOT_FOUND. An
 * id at the end cannot: without it the path is its collection's (`/v1/deposit/`).
 */
function canMissItsRoute(op: Pick<OperationSpec, "path">): boolean {
  return /\}\//.test(op.path);
}

/**
 * Each status's codes: MERCHANT_ERRORS with the operation's own added (INSUFFICIENT_SCOPE where a
 * key may lack its scope, NOT_FOUND where an empty id misses the route), in status order.
 */
export function operationErrors(op: Pick<OperationSpec, "errors" | "scopes" | "path">): ErrorCodes {
  const merged: Record<number, string[]> = {};
  for (const source of [MERCHANT_ERRORS, scoped(op) ? { 403: ["INSUFFICIENT_SCOPE"] } : {}, op.errors, canMissItsRoute(op) ? { 404: ["NOT_FOUND"] } : {}]) {
    for (const [status, codes] of Object.entries(source)) (merged[Number(status)] ??= []).push(...codes.filter((c) => !merged[Number(status)]?.includes(c)));
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => Number(a) - Number(b)));
}

/** Headers a failure of this status carries besides X-Request-Id. */
const STATUS_HEADERS: Readonly<Record<number, Record<string, unknown>>> = {
  405: { Allow: ref("headers", "Allow") },
  429: { "Retry-After": ref("headers", "Retry-After") },
};

function errorResponse(status: number, codes: readonly string[]): Record<string, unknown> {
  const [first, ...rest] = codes;
  return {
    description: errorDescription(codes),
    headers: {
      "X-Request-Id": ref("headers", "X-Request-Id"),
      ...STATUS_HEADERS[status],
    },
    content: {
      "application/json": {
        schema: outputSchema(failureEnvelope([first!, ...rest])),
        example: { success: false, error: { code: first, message: ERROR_MEANINGS[first!] ?? first }, timestamp: 1795342864 },
      },
    },
  };
}

function sameCodes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((code, i) => code === b[i]);
}

/** The 403 of an operation some keys may not call: the common codes and INSUFFICIENT_SCOPE, one shared response. */
const SCOPED_403: readonly string[] = [...(MERCHANT_ERRORS[403] ?? []), "INSUFFICIENT_SCOPE"];

/**
 * `Error<status>`: the failure response of each status every merchant operation has, with just the
 * common codes; `Error403Scoped` with INSUFFICIENT_SCOPE too; `UnknownPath`, the 404 NOT_FOUND of
 * a path no endpoint has (ERRORS_NOTE), which no operation can name.
 */
function commonErrorResponses(): Record<string, unknown> {
  return {
    ...Object.fromEntries(Object.entries(MERCHANT_ERRORS).map(([status, codes]) => [`Error${status}`, errorResponse(Number(status), codes)])),
    Error403Scoped: errorResponse(403, SCOPED_403),
    UnknownPath: errorResponse(404, ["NOT_FOUND"]),
  };
}

/** The end of the document's description: the answer of a path no operation has, which OpenAPI cannot put on a path. */
const ERRORS_NOTE = `## Errors

Every failure is the envelope \`{ "success": false, "error": { "code", "message", "details"? }, "timestamp" }\`, with an \`X-Request-Id\` header; each operation lists its statuses and codes. A path no endpoint has (paths are case-sensitive, \`/V1/balance\` is not \`/v1/balance\`) answers **404 \`NOT_FOUND\`** in that envelope, for any method and before any authentication: the \`UnknownPath\` response under components. A known path with another method answers 405 \`METHOD_NOT_ALLOWED\` with \`Allow\`.`;

function parameters(op: OperationSpec): Record<string, unknown>[] {
  const params: Record<string, unknown>[] = [];
  for (const [name, { description, example }] of Object.entries(op.pathParams ?? {})) {
    params.push({ name, in: "path", required: true, description, schema: inputSchema(PATH_ID), example });
  }
  if (op.query) {
    for (const [name, schema] of Object.entries<z.ZodType>(op.query.schema.shape)) {
      params.push({
        name,
        in: "query",
        required: !schema.safeParse(undefined).success,
        ...(op.query.descriptions?.[name] ? { description: op.query.descriptions[name] } : {}),
        schema: inputSchema(schema, op.query.overrides),
        ...(op.query.examples?.[name] !== undefined ? { example: op.query.examples[name] } : {}),
      });
    }
  }
  return params;
}

/**
 * Puts each description on the field at its dotted path (`customer.name`) of a body's JSON
 * Schema. A path the schema does not have throws: a renamed field must not lose its rules.
 */
export function describeFields(schema: JsonSchema, descriptions: Readonly<Record<string, string>>): JsonSchema {
  const described = structuredClone(schema);
  for (const [path, description] of Object.entries(descriptions)) {
    let node: JsonSchema | undefined = described;
    for (const name of path.split(".")) {
      // A nullable object is anyOf [object, null]: its fields are in the object branch.
      const object: JsonSchema | undefined = (node?.properties ? node : ((node?.anyOf as JsonSchema[] | undefined)?.find((branch) => branch.properties) ?? undefined));
      node = (object?.properties as Record<string, JsonSchema> | undefined)?.[name];
    }
    if (!node) throw new Error(`openapi: no field ${path} to describe`);
    node.description = description;
  }
  return described;
}

function operation(op: OperationSpec): Record<string, unknown> {
  const params = parameters(op);
  const responses: Record<string, unknown> = {
    [op.success.status]: {
      description: op.success.description,
      headers: {
        "X-Request-Id": ref("headers", "X-Request-Id"),
        ...(op.success.csv || op.success.xlsx ? { "Content-Disposition": { description: "File answers (CSV, XLSX) only: `attachment` with the file's name", schema: { type: "string" } } } : {}),
      },
      content: {
        "application/json": {
          schema: ref("schemas", `${op.success.data}Response`),
          example: { success: true, data: op.success.example, timestamp: 1795342864 },
        },
        ...(op.success.csv ? { "text/csv": { schema: { type: "string", description: op.success.csv.description }, example: op.success.csv.example } } : {}),
        ...(op.success.xlsx ? { [XLSX_CONTENT_TYPE]: { schema: { type: "string", format: "binary", description: op.success.xlsx.description } } } : {}),
      },
    },
  };
  for (const [status, codes] of Object.entries(operationErrors(op))) {
    // A status whose codes are just the common ones shares one response object.
    const common = MERCHANT_ERRORS[Number(status)];
    responses[status] =
      common && sameCodes(common, codes)
        ? ref("responses", `Error${status}`)
        : status === "403" && sameCodes(SCOPED_403, codes)
          ? ref("responses", "Error403Scoped")
          : errorResponse(Number(status), codes);
  }
  const needs = scoped(op) ? `Needs an API key with the ${scopeWords(op.scopes.map((s) => `\`${s}\``), "or")} scope.` : "Any API key may call it.";
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: `${op.description}\n\n${needs}`,
    // Alternatives: a key with any one of the scopes (OpenAPI 3.1 lets an apiKey requirement name the roles it needs).
    ...(scoped(op) ? { security: op.scopes.map((scope) => ({ ApiKey: [scope], Timestamp: [], Signature: [] })) } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required,
            content: { "application/json": { schema: describeFields(inputSchema(op.body.schema), op.body.descriptions ?? {}), example: op.body.example } },
          },
        }
      : {}),
    responses,
  };
}

/** The document itself, served at GET /openapi.json: public, so the reference page and code generators can load it. */
const SELF_OPERATION = {
  operationId: "getOpenApiDocument",
  tags: ["Reference"],
  summary: "This OpenAPI document",
  description: "The OpenAPI 3.1 document of this API. No authentication.",
  security: [],
  responses: {
    200: {
      description: "The document",
      content: {
        "application/json": {
          schema: { type: "object", required: ["openapi", "info", "paths"], properties: { openapi: { type: "string", pattern: "^3\\.1\\.\\d+$" }, info: { type: "object" }, paths: { type: "object" } } },
        },
      },
    },
    405: ref("responses", "Error405"),
  },
};

const WEBHOOK = {
  post: {
    operationId: "transactionCallback",
    tags: ["Callbacks"],
    summary: "A transaction's status changed",
    description: `POSTed to your callback URL once per status change after creation: ${COMPONENT_SCHEMAS.CallbackEventType.options.map((t) => `\`${t}\``).join(", ")}. \`data\` is the transaction record the API answers reads with; its \`sequence\` grows with every change, so discard a callback whose sequence is not newer than the one you have. A deposit's final status is final, with one exception: a late payment (a transfer that arrives after the deposit expired, completed by your late-payment rule or an operator) moves it from \`expired\` to \`completed\`, so after \`deposit.expired\` a \`deposit.completed\` with the next sequence may follow. Verify either signature over the raw body before trusting it.

Delivery is at least once: any 2xx within 10 s counts as delivered. Otherwise it is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (a Retry-After in your answer is honoured), then marked failed. GET /v1/events lists the events and their attempts; POST /v1/events/{eventId}/redeliver sends one again.`,
    security: [],
    parameters: CALLBACK_HEADERS.map((h) => ({ name: h.name, in: "header", required: true, description: h.description, schema: h.schema, example: h.example })),
    requestBody: { required: true, content: { "application/json": { schema: ref("schemas", "CallbackBody"), example: callbackBodyExample } } },
    responses: {
      "2XX": { description: "Delivered: the event is not sent again (unless you ask for a redelivery)." },
      default: { description: "Not delivered (also: no answer within 10 s): retried on the schedule above." },
    },
  },
};

/** `<Data>Response`: the success envelope around each data schema an operation answers with. */
function envelopeSchemas(): Record<string, z.ZodType> {
  const names = [...new Set(OPERATIONS.map((op) => op.success.data))] as ComponentName[];
  return Object.fromEntries(names.map((name) => [`${name}Response`, successEnvelope(COMPONENT_SCHEMAS[name])]));
}

/**
 * Builds the whole document. Deterministic: the same code gives the same JSON, key order
 * included, so `pnpm openapi` writes a stable file and the test can compare it.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const op of OPERATIONS) (paths[op.path] ??= {})[op.method] = operation(op);
  paths["/openapi.json"] = { get: SELF_OPERATION };

  return {
    openapi: "3.1.1",
    info: {
      title: "Payment gateway: merchant API",
      version: "1.0.0",
      summary: "Bank list, deposits, withdrawals, balance, transactions and callbacks for Turkish bank transfers.",
      description: `${GETTING_STARTED}\n${ERRORS_NOTE}`,
    },
    servers: [{ url: "/", description: "This gateway" }],
    security: [{ ApiKey: [], Timestamp: [], Signature: [] }],
    tags: [
      { name: "Banks", description: "The banks and limits open to you." },
      { name: "Deposits", description: "Money in: your customer pays by bank transfer." },
      { name: "Withdrawals", description: "Money out: payouts to an IBAN, from an allowed IP." },
      { name: "Balance", description: "What you hold, per currency." },
      { name: "Transactions", description: "Deposits and withdrawals, listed." },
      { name: "Events", description: "The callbacks sent to you, and redelivery." },
      { name: "Sandbox", description: "Test helpers for sandbox merchants." },
      { name: "Callbacks", description: "What the gateway POSTs to your callback URL." },
      { name: "Reference", description: "This document." },
    ],
    paths,
    webhooks: { transactionCallback: WEBHOOK },
    components: {
      schemas: componentSchemas({ ...COMPONENT_SCHEMAS, ...envelopeSchemas() }),
      responses: commonErrorResponses(),
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: `Your API key. An operation's security names the key scopes that admit it (\`read\`, \`deposits\`, \`withdrawals\`).\n\n${SIGNING}` },
        Timestamp: { type: "apiKey", in: "header", name: "X-Timestamp", description: "Unix time in seconds, as a string, within 300 s of the server's time. Part of the signed message." },
        Signature: {
          type: "apiKey",
          in: "header",
          name: "X-Signature",
          description: "Lower-case hex HMAC-SHA256 of `X-Timestamp + METHOD + path-with-query + body`, keyed with your API secret. See ApiKey for the whole rule.",
        },
      },
      headers: {
        "X-Request-Id": {
          description: "The request's id (a valid incoming X-Request-Id, `[A-Za-z0-9._:-]{1,128}`, is echoed; otherwise one is made); quote it to support.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
          example: REQUEST_ID,
        },
        "Retry-After": { description: "Whole seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } },
        Allow: { description: "The methods this path takes, e.g. `GET, HEAD`.", schema: { type: "string" }, example: "GET, HEAD" },
      },
    },
  };
}
