import test from "ava";
import { Ajv2020 } from "ajv/dist/2020.js";
import { openApiDocument } from "../src/openapi/index.js";
import { startFakeApp } from "./fake-app.js";
import { call } from "./http-client.js";

// The 404 NOT_FOUND the gateway answers for a path no endpoint has is in the OpenAPI document:
// the UnknownPath response (and the description's Errors section says when it comes), and the
// 404 of every operation whose request can miss its route (an empty id mid-path).

const DOC_ID = "https://payments.invalid/openapi.json";

/** A validator of a response schema, by its JSON pointer in the document. */
function schemaAt(pointer: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ ...structuredClone(openApiDocument().document), $id: DOC_ID });
  return ajv.compile({ $ref: `${DOC_ID}#${pointer}/content/application~1json/schema` });
}

test("the document names the unknown path's 404 NOT_FOUND envelope, and says when it is answered", (t) => {
  const { document } = openApiDocument();
  const unknownPath = (document.components.responses as Record<string, { content: Record<string, { schema: { properties: { error: { properties: { code: { enum: string[] } } } } } }> }>).UnknownPath;
  t.truthy(unknownPath);
  t.deepEqual(unknownPath!.content["application/json"]!.schema.properties.error.properties.code.enum, ["NOT_FOUND"]);
  const description = (document.info as { description: string }).description;
  t.regex(description, /## Errors\n/);
  t.regex(description, /A path no endpoint has .* answers \*\*404 `NOT_FOUND`\*\* in that envelope, for any method and before any authentication: the `UnknownPath` response/);
});

test("a real answer for an unknown path, any method, unsigned or signed, is the documented UnknownPath envelope", async (t) => {
  const app = await startFakeApp();
  t.teardown(() => app.close());
  const validate = schemaAt("/components/responses/UnknownPath");
  for (const [method, path] of [
    ["GET", "/v1/nothing-here"],
    ["GET", "/V1/balance"],
    ["POST", "/v1/deposits"],
    ["DELETE", "/index.html"],
  ] as const) {
    const reply = await call(app.url, { method, path, headers: { "X-API-Key": "pk_unknown" } });
    t.is(reply.status, 404, `${method} ${path}`);
    t.is(reply.json.error?.code, "NOT_FOUND");
    t.true(validate(reply.json), `${method} ${path}: ${JSON.stringify(validate.errors)}`);
    t.truthy(reply.headers["x-request-id"]);
  }
});

test("an operation whose id sits mid-path documents NOT_FOUND under its 404, and an empty id gets exactly that", async (t) => {
  const app = await startFakeApp();
  t.teardown(() => app.close());
  const paths = openApiDocument().document.paths;
  for (const [method, template, sent] of [
    ["post", "/v1/events/{eventId}/redeliver", "/v1/events//redeliver"],
    ["post", "/v1/deposit/{transactionId}/cancel", "/v1/deposit//cancel"],
    ["post", "/v1/withdraw/{transactionId}/cancel", "/v1/withdraw//cancel"],
    ["post", "/v1/sandbox/deposit/{transactionId}/pay", "/v1/sandbox/deposit//pay"],
  ] as const) {
    t.truthy(paths[template]?.[method], template);
    const reply = await call(app.url, { method: method.toUpperCase(), path: sent, headers: { "Content-Type": "application/json" }, body: "{}" });
    t.is(reply.status, 404, sent);
    t.is(reply.json.error?.code, "NOT_FOUND", sent);
    t.true(schemaAt(`/paths/${template.replaceAll("/", "~1")}/${method}/responses/404`)(reply.json), `${template} documents it`);
  }
  // An id at the end cannot miss: its 404 stays the kind's code alone.
  const get404 = (paths["/v1/deposit/{transactionId}"]!.get!.responses as Record<string, { content: Record<string, { schema: { properties: { error: { properties: { code: { enum: string[] } } } } } }> }>)[404]!;
  t.deepEqual(get404.content["application/json"]!.schema.properties.error.properties.code.enum, ["TRANSACTION_NOT_FOUND"]);
});
