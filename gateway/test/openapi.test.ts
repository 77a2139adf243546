import { readFileSync } from "node:fs";
import Router from "@koa/router";
import { validate, compileErrors } from "@readme/openapi-parser";
import test from "ava";
import { z } from "zod";
import { OpenApiMismatch, checkOpenApiResponse, openApiChecker } from "../../test/openapi-check.js";
import { callbackBodyExample, depositExample } from "../src/openapi/examples.js";
import { COMPONENT_SCHEMAS, OPERATIONS, buildOpenApiDocument, callbackBodySchema, openApiDocument, serializeOpenApi, successEnvelope } from "../src/openapi/index.js";
import { inputSchema } from "../src/openapi/json-schema.js";
import { startFakeApp } from "./fake-app.js";
import { call } from "./http-client.js";

const document = () => openApiDocument().document;

test("the document is a valid OpenAPI 3.1 document", async (t) => {
  const result = await validate(structuredClone(document()) as never);
  t.true(result.valid, result.valid ? "" : compileErrors(result));
});

test("the committed gateway/openapi.json is what the builder produces now", (t) => {
  const committed = readFileSync(new URL("../openapi.json", import.meta.url), "utf8");
  t.true(committed === serializeOpenApi(buildOpenApiDocument()), "gateway/openapi.json is out of date: run pnpm openapi");
});

/** `/v1/deposit/:transactionId` → `/v1/deposit/{transactionId}`. */
const openApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

test("every merchant route the app registers is documented, and every documented operation is registered", async (t) => {
  // The routes as app.ts hands them to the router, recorded on the way in.
  const registered: { method: string; path: string }[] = [];
  const register = Router.prototype.register;
  Router.prototype.register = function (this: Router, path: unknown, methods: unknown, ...rest: unknown[]) {
    for (const method of methods as string[]) registered.push({ method, path: String(path) });
    return (register as (...args: unknown[]) => unknown).call(this, path, methods, ...rest) as never;
  } as typeof register;
  let app;
  try {
    app = await startFakeApp();
  } finally {
    Router.prototype.register = register;
  }
  t.teardown(() => app.close());

  // A merchant route is one that wants a signature: unsigned, it answers 401 MISSING_API_KEY.
  const merchant = new Set<string>();
  for (const route of registered) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)(\.[a-z]+)?/g, "x$2");
    const reply = await call(app.url, { method: route.method, path });
    if (reply.json.error?.code === "MISSING_API_KEY") merchant.add(`${route.method.toLowerCase()} ${openApiPath(route.path)}`);
  }
  const documented = new Set(Object.entries(document().paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`)));
  const registeredKeys = new Set(registered.map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`));

  t.true(merchant.size >= 15, `only ${merchant.size} merchant routes found`);
  t.deepEqual([...merchant].filter((key) => !documented.has(key)), [], "merchant routes missing from the OpenAPI document");
  t.deepEqual([...documented].filter((key) => !registeredKeys.has(key)), [], "documented operations no route serves");
  t.deepEqual([...documented].filter((key) => !merchant.has(key)), ["get /openapi.json"], "only /openapi.json is documented without authentication");
});

test("GET /openapi.json answers the document without authentication, built once per process", async (t) => {
  const app = await startFakeApp();
  t.teardown(() => app.close());
  const reply = await call(app.url, { path: "/openapi.json" });
  t.is(reply.status, 200);
  t.regex(String(reply.headers["content-type"]), /^application\/json/);
  t.deepEqual(JSON.parse(reply.text), JSON.parse(JSON.stringify(buildOpenApiDocument())));
  t.is(openApiDocument(), openApiDocument());
});

test("every example in the document is one the response and request schemas accept", (t) => {
  for (const op of OPERATIONS) {
    const envelope = successEnvelope(COMPONENT_SCHEMAS[op.success.data]);
    t.true(envelope.safeParse({ success: true, data: op.success.example, timestamp: 1 }).success, `${op.operationId}: success example`);
    if (op.body) t.true(op.body.schema.safeParse(op.body.example).success, `${op.operationId}: request example`);
    // The document's own examples pass the response checker, errors included.
    const path = op.path.replace(/\{[^}]+\}/g, "x");
    const responses = document().paths[op.path]![op.method]!.responses as Record<string, { content?: Record<string, { example?: unknown }>; $ref?: string }>;
    for (const [status, response] of Object.entries(responses)) {
      const resolved = response.$ref ? (document().components.responses as Record<string, typeof response>)[response.$ref.split("/").pop()!]! : response;
      t.notThrows(() => checkOpenApiResponse(op.method, path, Number(status), resolved.content!["application/json"]!.example), `${op.operationId} ${status}`);
    }
  }
  t.true(callbackBodySchema.safeParse(callbackBodyExample).success);
});

test("the checker refuses an answer the document does not describe", (t) => {
  const ok = { success: true, data: depositExample, timestamp: 1795342864 };
  t.notThrows(() => checkOpenApiResponse("GET", "/v1/deposit/dep_1", 200, ok));
  t.notThrows(() => checkOpenApiResponse("GET", "/healthz", 599, "anything: not documented, not checked"));

  const wrongStatus = t.throws(() => checkOpenApiResponse("GET", "/v1/deposit/dep_1", 201, ok), { instanceOf: OpenApiMismatch });
  t.regex(wrongStatus.message, /status 201 is not documented for GET \/v1\/deposit\/\{transactionId\}/);

  const missing: Partial<typeof depositExample> = { ...depositExample };
  delete missing.reference;
  const missingField = t.throws(() => checkOpenApiResponse("GET", "/v1/deposit/dep_1", 200, { ...ok, data: missing }), { instanceOf: OpenApiMismatch });
  t.regex(missingField.message, /must have required property 'reference'/);

  const extraField = t.throws(() => checkOpenApiResponse("POST", "/v1/deposit", 201, { ...ok, data: { ...depositExample, secret: 1 } }), { instanceOf: OpenApiMismatch });
  t.regex(extraField.message, /additional properties/);

  const wrongCode = t.throws(() => checkOpenApiResponse("GET", "/v1/balance", 404, { success: false, error: { code: "TRANSACTION_NOT_FOUND", message: "x" }, timestamp: 1 }), { instanceOf: OpenApiMismatch });
  t.regex(wrongCode.message, /status 404 is not documented/);
  const undocumentedCode = t.throws(() => checkOpenApiResponse("POST", "/v1/deposit", 400, { success: false, error: { code: "INVALID_IBAN", message: "x" }, timestamp: 1 }), { instanceOf: OpenApiMismatch });
  t.regex(undocumentedCode.message, /error\/code must be equal to one of the allowed values/);

  t.throws(() => checkOpenApiResponse("DELETE", "/v1/deposit/dep_1", 200, ok), { message: /documents no DELETE/ });
  t.is(openApiChecker().pathTemplate("/v1/deposit?processId=a"), "/v1/deposit");

  // Another method on a documented path: its 405 is held to the 405 the path's operations document.
  const methodNotAllowed = { success: false, error: { code: "METHOD_NOT_ALLOWED", message: "DELETE is not allowed here; use GET or HEAD" }, timestamp: 1 };
  t.notThrows(() => checkOpenApiResponse("DELETE", "/v1/deposit/dep_1", 405, methodNotAllowed));
  const wrong405 = t.throws(() => checkOpenApiResponse("DELETE", "/v1/deposit/dep_1", 405, { ...methodNotAllowed, error: { code: "NOT_FOUND", message: "x" } }), { instanceOf: OpenApiMismatch });
  t.regex(wrong405.message, /error\/code must be equal to one of the allowed values/);
  t.throws(() => checkOpenApiResponse("DELETE", "/v1/deposit/dep_1", 405, { success: false }), { instanceOf: OpenApiMismatch });
});

test("a real 405 from the gateway is one the document describes, with Allow, for a merchant path and for /openapi.json", async (t) => {
  const app = await startFakeApp();
  t.teardown(() => app.close());
  // call() checks every answer against the document: a 405 body that is not the documented one fails here.
  for (const [method, path, allow] of [
    ["DELETE", "/v1/deposit/dep_DLJ1ewVC0-cK6aIcn1PvxA", "GET, HEAD"],
    ["GET", "/v1/withdraw/wdr_3S_1bc8dtVWlJ4jbob7ymA/cancel", "POST"],
    ["PUT", "/v1/available-banks", "GET, HEAD"],
    ["POST", "/openapi.json", "GET, HEAD"],
  ] as const) {
    const reply = await call(app.url, { method, path });
    t.is(reply.status, 405, `${method} ${path}`);
    t.is(reply.json.error?.code, "METHOD_NOT_ALLOWED");
    t.is(reply.headers.allow, allow);
  }
});

test("every operation documents every status the gateway can answer it with, and its codes", (t) => {
  const common: Record<string, string[]> = {
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
  const codesOf = (response: { $ref?: string; content?: Record<string, { schema: { properties: { error: { properties: { code: { enum: string[] } } } } } }> }) => {
    const resolved = response.$ref ? (document().components.responses as Record<string, typeof response>)[response.$ref.split("/").pop()!]! : response;
    return resolved.content!["application/json"]!.schema.properties.error.properties.code.enum;
  };
  for (const op of OPERATIONS) {
    const responses = document().paths[op.path]![op.method]!.responses as Record<string, Parameters<typeof codesOf>[0]>;
    for (const [status, codes] of Object.entries(common)) {
      t.truthy(responses[status], `${op.operationId} documents ${status}`);
      if (responses[status]) for (const code of codes) t.true(codesOf(responses[status]).includes(code), `${op.operationId} ${status} ${code}`);
    }
    // An id in the path can name nothing: 404 with the kind's code; an empty one before the path's end misses every route, NOT_FOUND.
    const kindCode = op.path.startsWith("/v1/events") ? "EVENT_NOT_FOUND" : "TRANSACTION_NOT_FOUND";
    if (op.pathParams) t.deepEqual(codesOf(responses[404]!), [kindCode, ...(/\}\//.test(op.path) ? ["NOT_FOUND"] : [])], op.operationId);
    else if (responses[404]) t.false(codesOf(responses[404]).includes("NOT_FOUND"), `${op.operationId}: its own path always reaches its route`);
    // The 405 and 429 tell which methods, and how long to wait.
    const headersOf = (status: string) => {
      const response = responses[status] as { $ref?: string; headers?: Record<string, unknown> };
      return Object.keys((response.$ref ? (document().components.responses as Record<string, typeof response>)[response.$ref.split("/").pop()!]! : response).headers ?? {});
    };
    t.true(headersOf("405").includes("Allow"), op.operationId);
    t.true(headersOf("429").includes("Retry-After"), op.operationId);
  }
  t.truthy((document().paths["/openapi.json"]!.get!.responses as Record<string, unknown>)[405]);
});

test("request schemas come from the routes' own zod schemas; a custom schema without an override is refused", (t) => {
  const deposit = document().paths["/v1/deposit"]!.post!.requestBody as { content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }> };
  const schema = deposit.content["application/json"]!.schema;
  t.deepEqual(schema.required, ["processId", "amount", "customer"]);
  t.like(schema.properties.amount, { type: "integer", minimum: 1 });
  t.throws(() => inputSchema(z.object({ x: z.custom<string>(() => true) })), { message: /no JSON Schema override for the custom schema at properties\.x/ });
});

test("the callback is documented as a webhook with both signature schemes' headers", (t) => {
  const webhook = (document().webhooks as Record<string, { post: { parameters: { name: string; in: string }[] } }>).transactionCallback!;
  t.deepEqual(
    webhook.post.parameters.map((p) => p.name),
    ["X-Event-Id", "X-Event-Type", "X-Timestamp", "X-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"],
  );
});
