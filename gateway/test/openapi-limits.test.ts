import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { PayoutService } from "@payments/contracts/payout";
import { hasUnsafeCharacters, newId, newToken } from "@payments/kit";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import test from "ava";
import type { z } from "zod";
import { checkoutToken, depositId, depositProcessId, depositText, eventId, METADATA_MAX_BYTES, optionalTransactionId, payoutIban, payoutProcessId, payoutText, REFERENCE_ALPHABET, REFERENCE_LENGTH, SEED_BANK_LIST, seedBankId, turkishIbanProblem, withdrawalId } from "@payments/testing/services";
import { openApiDocument } from "../src/openapi/index.js";
import { SAFE_CHARACTERS } from "../src/routes/route.js";
import { startFakeApp, type FakeMerchant } from "./fake-app.js";
import { signedCall } from "./http-client.js";

/*
 * The document's request schemas are the server's limits: walked value by value against the
 * routes (a value the document accepts reaches the service, one it refuses is a
 * VALIDATION_ERROR naming the field) and, where a service holds the same limit, against that
 * service's own validator. The examples have the shapes the services really issue.
 */

type JsonSchema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: JsonSchema;
  example?: unknown;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: { "application/json": { schema: JsonSchema; example: Record<string, unknown> } } };
}

const document = () => openApiDocument().document;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const compiled = new Map<JsonSchema, (value: unknown) => boolean>();
/** Whether the document's schema accepts the value: what a client validating against it decides. */
function documentAccepts(schema: JsonSchema, value: unknown): boolean {
  let validate = compiled.get(schema);
  if (!validate) {
    const fn = ajv.compile(schema);
    validate = (v) => fn(v) === true;
    compiled.set(schema, validate);
  }
  return validate(value);
}

function operations(): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(document().paths)
    .filter(([path]) => path.startsWith("/v1/"))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, op: op as unknown as Operation })));
}

/** Strings that hold each character rule: interior controls and bidi overrides, edge and blank whitespace, plain text. */
const PROBES = ["Ayşe Yılmaz", "a b", " a", "a ", "   ", "a\u0001b", "a\tb", "a\u007Fb", "a\u0085b", "a\u202Eb", "a\u2067b"];
/** Valid dates lie on or after BASE_DATE and within a year of it, so the statement's range rules (to not before from, at most 366 days) never decide. */
const BASE_DATE = "2027-06-01";
const DATES = [BASE_DATE, "2028-02-29", "2027-02-29", "2027-13-01", "01.06.2027"];
const TIMES = ["2027-06-01T10:15:30.123Z", "2027-06-01T13:15:30+03:00", "2027-06-01T10:15:30", "2027-06-01 10:15", "yesterday"];

const patternsOf = (schema: JsonSchema): string[] =>
  [schema.pattern, ...((schema.allOf as JsonSchema[] | undefined) ?? []).map((part) => part.pattern)].filter((p): p is string => typeof p === "string");

/**
 * Values at and past every bound the schema states (lengths, ranges), each enum member and a
 * non-member, dates and times of each format, the character probes where a pattern is stated,
 * and a value of the wrong type. In a query every value is text, so only the schema's own type.
 */
function candidatesOf(schema: JsonSchema, where: "body" | "query"): unknown[] {
  const out: unknown[] = [];
  const branches = (schema.anyOf as JsonSchema[] | undefined) ?? [schema];
  for (const branch of branches) {
    const types = [branch.type].flat();
    if (types.includes("null") && where === "body") out.push(null);
    if (types.includes("string")) {
      const min = branch.minLength as number | undefined;
      const max = branch.maxLength as number | undefined;
      if (Array.isArray(branch.enum)) out.push(...(branch.enum as unknown[]), "not-one-of-them");
      if (min !== undefined) out.push("a".repeat(min), ...(min > 0 ? ["a".repeat(min - 1)] : []));
      if (max !== undefined) out.push("a".repeat(max), "a".repeat(max + 1));
      if (branch.format === "date") out.push(...DATES);
      if (branch.format === "date-time") out.push(...TIMES);
      if (patternsOf(branch).length > 0) out.push(...PROBES);
      if (where === "body") out.push(5);
    }
    if (types.includes("integer")) {
      const min = branch.minimum as number | undefined;
      const max = branch.maximum as number | undefined;
      if (min !== undefined) out.push(min, min - 1);
      if (max !== undefined) out.push(max, max + 1);
      out.push(1.5);
      if (where === "body") out.push("1");
    }
    if (types.includes("object")) out.push("x", [1]);
  }
  return [...new Set(out)];
}

/** Every service method answers UNAVAILABLE: a request the gateway lets through is a 503. */
function unavailable<S extends DescService>(service: S): Partial<ServiceImpl<S>> {
  const down = () => {
    throw new ConnectError("down for the test", Code.Unavailable);
  };
  return Object.fromEntries(service.methods.map((method) => [method.localName, down])) as unknown as Partial<ServiceImpl<S>>;
}

const MERCHANT: FakeMerchant = { merchantId: "mer_limits", apiKey: "pk_limits", apiSecret: "sk_limits", sandbox: true, allowedIps: ["127.0.0.1"], rateLimitPerSecond: 0 };

/** The body with the value at a dotted path replaced (or removed). */
function withField(body: Record<string, unknown>, path: string, value: unknown, omit: boolean): Record<string, unknown> {
  const copy = structuredClone(body);
  const names = path.split(".");
  let node: Record<string, unknown> = copy;
  for (const name of names.slice(0, -1)) node = node[name] as Record<string, unknown>;
  const last = names.at(-1)!;
  if (omit) delete node[last];
  else node[last] = value;
  return copy;
}

/** The body's fields, nested ones by dotted path, with their schemas. */
function fieldsOf(schema: JsonSchema, prefix = ""): Array<{ path: string; schema: JsonSchema }> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    return [{ path, schema: field }, ...(field.type === "object" ? fieldsOf(field, `${path}.`) : [])];
  });
}

const namesField = (message: string, field: string) => message.split("; ").some((problem) => problem.startsWith(`${field}: `));

test("every documented limit of every operation's body and query is the route's: at each bound accepted, past it refused", async (t) => {
  const app = await startFakeApp({ merchants: [MERCHANT], deposits: unavailable(DepositService), payouts: unavailable(PayoutService), callbacks: unavailable(CallbackService) });
  t.teardown(() => app.close());

  /** The route's verdict on one field: "refused" when the answer is a VALIDATION_ERROR naming it, "accepted" when the request reached the service, else the status and the start of the answer. */
  const verdict = async (method: string, path: string, body: unknown, field: string): Promise<string> => {
    const reply = await signedCall(app.url, MERCHANT, app.clock, {
      method: method.toUpperCase(),
      path,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } }),
    });
    if (reply.status === 503) return "accepted";
    if (reply.status === 400 && reply.json.error?.code === "VALIDATION_ERROR") return namesField(reply.json.error.message, field) ? "refused" : "accepted";
    return `${reply.status} ${reply.text.slice(0, 200)}`;
  };

  const mismatches: string[] = [];
  const checked = new Map<string, number>();
  const count = (id: string) => checked.set(id, (checked.get(id) ?? 0) + 1);

  for (const { method, path: template, op } of operations()) {
    const params = op.parameters ?? [];
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params.find((p) => p.name === name)!.example)));
    const query = params.filter((p) => p.in === "query");
    // Only the required parameters, each with its example or the first value its schema accepts.
    const base = new Map<string, string>();
    for (const p of query.filter((q) => q.required)) {
      const value = p.example ?? candidatesOf(p.schema, "query").find((v) => documentAccepts(p.schema, v));
      t.not(value, undefined, `${op.operationId}: no value for ${p.name}`);
      base.set(p.name, String(value));
    }
    const withQuery = (values: Map<string, string>) => (values.size === 0 ? path : `${path}?${[...values].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`);
    const requestBody = op.requestBody?.content["application/json"];
    const body = requestBody?.example;

    for (const p of query) {
      const cases: Array<{ value: unknown; omit: boolean }> = [{ value: undefined, omit: true }, ...candidatesOf(p.schema, "query").map((value) => ({ value, omit: false }))];
      for (const { value, omit } of cases) {
        const values = new Map(base);
        if (omit) values.delete(p.name);
        else values.set(p.name, String(value));
        const expected = omit ? (p.required ? "refused" : "accepted") : documentAccepts(p.schema, value) ? "accepted" : "refused";
        const actual = await verdict(method, withQuery(values), body, p.name);
        count(op.operationId);
        if (actual !== expected) mismatches.push(`${op.operationId} ?${p.name}=${omit ? "(absent)" : JSON.stringify(value)}: the document says ${expected}, the route ${actual}`);
      }
    }

    if (requestBody && body) {
      t.true(documentAccepts(requestBody.schema, body), `${op.operationId}: its request example is valid`);
      for (const field of fieldsOf(requestBody.schema)) {
        const cases: Array<{ value: unknown; omit: boolean }> = [{ value: undefined, omit: true }, ...candidatesOf(field.schema, "body").map((value) => ({ value, omit: false }))];
        for (const { value, omit } of cases) {
          const candidate = withField(body, field.path, value, omit);
          const expected = documentAccepts(requestBody.schema, candidate) ? "accepted" : "refused";
          const actual = await verdict(method, withQuery(base), candidate, field.path);
          count(op.operationId);
          if (actual !== expected) mismatches.push(`${op.operationId} ${field.path}=${omit ? "(absent)" : JSON.stringify(value)}: the document says ${expected}, the route ${actual}`);
        }
      }
    }
  }

  t.deepEqual(mismatches, []);
  // Every operation with a query or a body was walked, with values at and past its bounds.
  for (const { op } of operations()) {
    const inputs = (op.parameters ?? []).some((p) => p.in === "query") || op.requestBody !== undefined;
    if (inputs) t.true((checked.get(op.operationId) ?? 0) >= 5, `${op.operationId} was walked`);
  }
});

/** Where a service judges the same field too: its own validator, for the documented field's schema. */
const SERVICE_VALIDATORS: ReadonlyArray<{ operationId: string; field: string; service: z.ZodType }> = [
  { operationId: "createDeposit", field: "processId", service: depositProcessId },
  { operationId: "createDeposit", field: "customer.id", service: depositText() },
  { operationId: "createDeposit", field: "customer.name", service: depositText() },
  { operationId: "createDeposit", field: "customer.username", service: depositText() },
  { operationId: "getDepositByProcessId", field: "processId", service: depositProcessId },
  { operationId: "createWithdrawal", field: "processId", service: payoutProcessId },
  { operationId: "createWithdrawal", field: "accountName", service: payoutText() },
  { operationId: "createWithdrawal", field: "iban", service: payoutIban },
  { operationId: "createWithdrawal", field: "userId", service: payoutText() },
  { operationId: "createWithdrawal", field: "userName", service: payoutText() },
  { operationId: "createWithdrawal", field: "name", service: payoutText() },
  { operationId: "getWithdrawalByProcessId", field: "processId", service: payoutProcessId },
  { operationId: "listEvents", field: "transactionId", service: optionalTransactionId },
];

/** The ids in a path, by the kind of id its example is: each service parses its own. */
const PATH_ID_VALIDATORS: Readonly<Record<string, z.ZodType>> = { dep: depositId, wdr: withdrawalId, evt: eventId };

function fieldSchema(op: Operation, field: string): JsonSchema | undefined {
  const param = op.parameters?.find((p) => p.name === field && p.in === "query");
  if (param) return param.schema;
  const body = op.requestBody?.content["application/json"].schema;
  return body ? fieldsOf(body).find((f) => f.path === field)?.schema : undefined;
}

test("the limits the gateway states for a service's fields, and the ids in paths, are that service's own validators' limits", (t) => {
  const byId = new Map(operations().map(({ op }) => [op.operationId, op]));
  const mismatches: string[] = [];
  for (const { operationId, field, service } of SERVICE_VALIDATORS) {
    const schema = fieldSchema(byId.get(operationId)!, field);
    if (!schema) {
      mismatches.push(`${operationId} has no field ${field}`);
      continue;
    }
    const strings = candidatesOf(schema, "query").filter((v): v is string => typeof v === "string");
    t.true(strings.length >= 2, `${operationId} ${field}`);
    for (const value of strings) {
      const documented = documentAccepts(schema, value);
      if (documented !== service.safeParse(value).success) mismatches.push(`${operationId} ${field}=${JSON.stringify(value)}: the document says ${documented}, the service's validator the opposite`);
    }
  }
  let paths = 0;
  for (const { op } of operations()) {
    for (const param of (op.parameters ?? []).filter((p) => p.in === "path")) {
      const service = PATH_ID_VALIDATORS[String(param.example).split("_")[0]!];
      if (!service) {
        mismatches.push(`${op.operationId}: no service validator for the path id ${String(param.example)}`);
        continue;
      }
      paths++;
      for (const value of [param.example, ...candidatesOf(param.schema, "query")]) {
        if (documentAccepts(param.schema, value) !== service.safeParse(value).success) mismatches.push(`${op.operationId} {${param.name}}=${JSON.stringify(value)}`);
      }
    }
  }
  t.deepEqual(mismatches, []);
  t.true(paths >= 8, `${paths} path ids checked`);
  // The metadata's size is the deposit service's rule, stated in words.
  const metadata = fieldSchema(byId.get("createDeposit")!, "metadata");
  t.regex(String(metadata?.description), new RegExp(`at most ${METADATA_MAX_BYTES / 1024} KiB`));
});

test("the pattern of the characters a name or id may hold is the kit's rule, character by character", (t) => {
  const disagree: string[] = [];
  for (let code = 0; code <= 0x10ffff; code += code < 0x10000 ? 1 : 0x1001) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const char = String.fromCodePoint(code);
    if (SAFE_CHARACTERS.test(`a${char}b`) === hasUnsafeCharacters(char)) disagree.push(code.toString(16));
  }
  t.deepEqual(disagree, []);
});

/** Every `example` in the document, wherever it is, with the key it sits under and its parent. */
function* exampleValues(node: unknown, inExample = false, key = "", parent: unknown = undefined): Generator<{ key: string; value: unknown; parent: unknown }> {
  if (inExample) yield { key, value: node, parent };
  if (node === null || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node)) yield* exampleValues(v, inExample || k === "example", k, node);
}

test("examples have the shapes the services issue: kit ids, seeded bank ids, valid Turkish IBANs, references, checkout tokens", (t) => {
  const idShape = (prefix: string) => new RegExp(`^${prefix}_[A-Za-z0-9_-]{${newId(prefix).length - prefix.length - 1}}$`);
  const bankIds = new Map(SEED_BANK_LIST.map((bank) => [seedBankId(bank.code), bank.code]));
  const reference = new RegExp(`^[${REFERENCE_ALPHABET}]{${REFERENCE_LENGTH}}$`);
  const problems: string[] = [];
  const expect = (ok: boolean, what: string) => ok || problems.push(what);
  const seen = new Set<string>();

  for (const { key, value, parent } of exampleValues(document())) {
    if (typeof value !== "string" && value !== null) continue;
    const where = `${key}=${JSON.stringify(value)}`;
    switch (key) {
      case "transactionId":
        expect(typeof value === "string" && ["dep", "wdr", "adj"].some((p) => idShape(p).test(value)), where);
        break;
      case "_id":
        expect(value === "FAST" || (typeof value === "string" && bankIds.get(value) === (parent as { code?: string }).code), where);
        break;
      case "bankCode":
      case "bankId":
        expect(value === null || value === "FAST" || bankIds.has(String(value)), where);
        break;
      case "iban":
        expect(typeof value === "string" && turkishIbanProblem(value) === undefined, where);
        break;
      case "reference":
        expect(typeof value === "string" && reference.test(value), where);
        break;
      case "checkoutUrl": {
        const token = new URL(String(value)).searchParams.get("token") ?? "";
        expect(checkoutToken.safeParse(token).success && token.length === newToken(24).length, where);
        break;
      }
      case "id":
        // A callback body or event: its id is an event id (a customer's id is the merchant's own).
        if (parent && typeof parent === "object" && "data" in parent) expect(idShape("evt").test(String(value)), where);
        break;
      default:
        continue;
    }
    seen.add(key);
  }
  // Path parameters, callback headers and the request id.
  for (const { op } of operations()) {
    for (const param of (op.parameters ?? []).filter((p) => p.in === "path")) {
      expect(["dep", "wdr", "evt"].some((p) => idShape(p).test(String(param.example))), `${op.operationId} {${param.name}}=${String(param.example)}`);
    }
  }
  const webhook = (document().webhooks as Record<string, { post: { parameters: Array<{ name: string; example: string }> } }>).transactionCallback!;
  for (const header of webhook.post.parameters.filter((h) => ["X-Event-Id", "webhook-id"].includes(h.name))) expect(idShape("evt").test(header.example), `${header.name}=${header.example}`);
  const requestId = (document().components.headers as Record<string, { example?: string }>)["X-Request-Id"]!.example;
  expect(idShape("req").test(String(requestId)), `X-Request-Id=${String(requestId)}`);

  t.deepEqual(problems, []);
  t.deepEqual([...seen].sort(), ["_id", "bankCode", "bankId", "checkoutUrl", "iban", "id", "reference", "transactionId"], "every kind of id was met");
});
