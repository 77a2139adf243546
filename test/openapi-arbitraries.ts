import { gzipSync } from "node:zlib";
import fc from "fast-check";

/*
 * fast-check arbitraries derived from the gateway's OpenAPI document, for the edge fuzzing
 * (edge-fuzz.e2e.test.ts): the operations (method, path template, path and query parameters,
 * whether they are signed, the request body's schema and example), hostile text, request
 * targets, headers and bodies. Bodies come in two kinds: anything at all, and bodies that a
 * correct gateway must refuse (a breaker applied to a valid body), so that a signed request
 * carrying one can be sent without ever being allowed to change anything.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The parts of a JSON Schema the arbitraries read. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  allOf?: Schema[];
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  enum?: unknown[];
  format?: string;
  $ref?: string;
}

export interface QueryParameter {
  name: string;
  required: boolean;
  schema: Schema;
  example?: unknown;
}

export interface Operation {
  /** Upper case, as documented. */
  method: string;
  /** `/v1/deposit/{transactionId}`. */
  template: string;
  operationId: string;
  /** Whether the operation needs the three authentication headers (the document's default security applies). */
  signed: boolean;
  pathParameters: string[];
  query: QueryParameter[];
  body?: { required: boolean; schema: Schema; example?: Record<string, Json> };
}

interface DocumentLike {
  security?: unknown[];
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown>>;
}

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options", "trace"];

/** Follows a local `$ref` (`#/components/…`) once; anything else as it is. */
function resolve<T>(document: DocumentLike, node: T): T {
  const ref = (node as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/")) return node;
  let at: unknown = document;
  for (const token of ref.slice(2).split("/")) at = (at as Record<string, unknown>)[token.replaceAll("~1", "/").replaceAll("~0", "~")];
  return resolve(document, at as T);
}

/** Every operation of the document, in its order. */
export function operationsOf(document: DocumentLike): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [verb, raw] of Object.entries(item)) {
      if (!METHODS.includes(verb)) continue;
      const op = raw as { operationId?: string; security?: unknown[]; parameters?: unknown[]; requestBody?: unknown };
      const parameters = (op.parameters ?? []).map((p) => resolve(document, p) as { name: string; in: string; required?: boolean; schema?: Schema; example?: unknown });
      const requestBody = resolve(document, op.requestBody) as { required?: boolean; content?: Record<string, { schema?: Schema; example?: Record<string, Json> }> } | undefined;
      const json = requestBody?.content?.["application/json"];
      const security = op.security ?? document.security ?? [];
      operations.push({
        method: verb.toUpperCase(),
        template,
        operationId: op.operationId ?? `${verb} ${template}`,
        signed: security.length > 0,
        pathParameters: parameters.filter((p) => p.in === "path").map((p) => p.name),
        query: parameters.filter((p) => p.in === "query").map((p) => ({ name: p.name, required: p.required ?? false, schema: p.schema ?? {}, example: p.example })),
        ...(json?.schema ? { body: { required: requestBody?.required ?? false, schema: resolve(document, json.schema), ...(json.example ? { example: json.example } : {}) } } : {}),
      });
    }
  }
  return operations;
}

/** The template with each `{name}` replaced by its value, inserted as given (already encoded). */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!Object.hasOwn(values, name)) throw new Error(`no value for {${name}} of ${template}`);
    return values[name]!;
  });
}

// ------------------------------------------------------------------------------ hostile text

/** Strings that have broken parsers, normalisers and databases before. */
export const TRICKS = [
  "\u0000",
  "a\u0000b",
  "e\u0301", // e + combining acute (NFD of é)
  "\u00e9", // é precomposed
  "\uFB01", // ﬁ ligature (NFKC: fi)
  "\uFF21\uFF24\uFF2D", // fullwidth ADM
  "\u0130", // İ: lower-cases to two code units
  "\u0131", // dotless ı
  "\u00DF", // ß: upper-cases to SS
  "\u212A", // Kelvin sign (NFKC: K)
  "\u202Eevil", // right-to-left override
  "\u200B", // zero-width space
  "\uFEFF", // byte order mark
  "\uD800", // lone high surrogate
  "\uDC00", // lone low surrogate
  "💸",
  "..",
  "../../etc/passwd",
  "%",
  "%00",
  "%zz",
  "%C0%AF", // overlong UTF-8 for /
  "%ED%A0%80", // an encoded surrogate: invalid UTF-8
  "%FF%FE",
  "%2F",
  "%252F",
  "\\",
  "'",
  '"',
  "' OR '1'='1' -- ",
  "'; DROP TABLE deposits; --",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "{{7*7}}",
  "\r\nX-Injected: 1",
  "\t",
  " ",
  "",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "NaN",
  "-1",
  "1e309",
  "0x10",
  "9".repeat(40),
] as const;

/** Any text: tricks, random code points (lone surrogates too), and long runs of either. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKS) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...TRICKS), { minLength: 1, maxLength: 6 }).map((parts) => parts.join("")) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...TRICKS, "a", "ş", "💸"), fc.integer({ min: 50, max: 2_000 })).map(([s, n]) => s.repeat(Math.ceil(n / Math.max(1, s.length)))) },
);

/** Bytes that are not UTF-8 (a stray continuation byte, a truncated sequence, an overlong form, 0xFF). */
export const invalidUtf8: fc.Arbitrary<Buffer> = fc.constantFrom(
  Buffer.from([0x80]),
  Buffer.from([0xc3]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xff, 0xfe]),
);

/**
 * Percent-encodes only what Node's parser refuses in a request target (controls, space, DEL,
 * bytes above 0x7F) or what would end this component (`#`, `?`): the rest goes raw, `%`
 * included, so `%zz`, a lone `%` and encoded surrogates reach the app as written.
 */
function rawWherePossible(bytes: Buffer): Buffer {
  const out: number[] = [];
  for (const b of bytes) {
    if (b <= 0x20 || b >= 0x7f || b === 0x23 || b === 0x3f) out.push(...Buffer.from(`%${b.toString(16).toUpperCase().padStart(2, "0")}`));
    else out.push(b);
  }
  return Buffer.from(out);
}

/**
 * One path segment or query value as bytes. Mostly what reaches the app: percent-encoded, or
 * raw wherever Node lets a byte through (stray `%`, `%zz`, encoded surrogates and bytes that
 * are not UTF-8); sometimes bytes as they come, which Node's parser mostly refuses.
 */
export const hostileComponent: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 2, arbitrary: hostileText.map((s) => Buffer.from(encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "\uFFFD")))) },
  { weight: 2, arbitrary: hostileText.map((s) => rawWherePossible(Buffer.from(s, "utf8"))) },
  { weight: 1, arbitrary: fc.tuple(hostileText, invalidUtf8, hostileText).map(([a, bad, b]) => rawWherePossible(Buffer.concat([Buffer.from(a), bad, Buffer.from(b)]))) },
);

/** Bytes as they come (controls, spaces, bytes above 0x7F), which Node's parser mostly refuses in a request target. */
export const rawBytes: fc.Arbitrary<Buffer> = fc.uint8Array({ minLength: 1, maxLength: 30 }).map((bytes) => Buffer.from(bytes));

// ------------------------------------------------------------------------------ methods, targets, headers

/**
 * Methods beside the documented ones: other standard ones, WebDAV, made up, lower case,
 * overlong, and CONNECT (Node hands it to the server's `connect` event, not to the app: the
 * gateway's server answers it there, gateway/src/client-error.ts).
 */
export const oddMethod: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "HEAD", "CONNECT", "PROPFIND", "MKCOL", "SEARCH", "QUERY", "PURGE", "M-SEARCH") },
  // Methods Node's parser does not know: it answers them itself.
  { weight: 1, arbitrary: fc.constantFrom("get", "Post", "FOO", "G\u00C9T", "GET\u0000", "X".repeat(2_000)) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
);

/** A query string built from the operation's documented parameters (hostile values, repeated, missing) and made-up ones. */
export function queryFor(op: Operation): fc.Arbitrary<Buffer> {
  const names = [...op.query.map((q) => q.name), "__proto__", "constructor", "x", "token", "processId", "limit", "cursor"];
  const pair = fc.tuple(fc.oneof(fc.constantFrom(...names), hostileComponent.map((b) => b.toString("latin1"))), fc.option(hostileComponent, { nil: undefined }));
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
    {
      weight: 4,
      arbitrary: fc.array(pair, { minLength: 1, maxLength: 8 }).map((pairs) =>
        Buffer.concat([
          Buffer.from("?"),
          ...pairs.flatMap(([name, value], i) => [Buffer.from(i === 0 ? "" : "&"), Buffer.from(name, "latin1"), ...(value === undefined ? [] : [Buffer.from("="), value])]),
        ]),
      ),
    },
    { weight: 1, arbitrary: fc.oneof(hostileComponent, rawBytes).map((b) => Buffer.concat([Buffer.from("?"), b])) },
  );
}

/** A request target for the operation: its template with hostile path parameters (or a known id from `known`), and a query. */
export function targetFor(op: Operation, known: fc.Arbitrary<string> = fc.constant("none")): fc.Arbitrary<Buffer> {
  const parameter = fc.oneof({ weight: 6, arbitrary: hostileComponent }, { weight: 3, arbitrary: known.map((id) => Buffer.from(id)) }, { weight: 1, arbitrary: rawBytes });
  const values = fc.tuple(...op.pathParameters.map(() => parameter));
  const shape = fc.oneof({ weight: 6, arbitrary: fc.constant("as documented") }, { weight: 1, arbitrary: fc.constantFrom("trailing slash", "double slash", "dot segment", "encoded slash", "upper case") });
  return fc.tuple(values, shape, queryFor(op)).map(([given, how, query]) => {
    // Placeholders no template holds, replaced by the parameters' bytes below.
    const marker = op.pathParameters.map((_, i) => `{{param ${i}}}`);
    let path = fillTemplate(op.template, Object.fromEntries(op.pathParameters.map((name, i) => [name, marker[i]!])));
    if (how === "trailing slash") path += "/";
    if (how === "double slash") path = path.replace("/v1/", "/v1//");
    if (how === "dot segment") path = path.replace("/v1/", "/v1/./x/../");
    if (how === "encoded slash") path = path.replace("/v1/", "/v1%2F");
    if (how === "upper case") path = path.toUpperCase();
    const parts = path.split(/(\{\{param \d+\}\})/i).map((part) => {
      const m = /^\{\{param (\d+)\}\}$/i.exec(part);
      return m ? given[Number(m[1])]! : Buffer.from(part);
    });
    return Buffer.concat([...parts, query]);
  });
}

/** Header names the gateway reads, and others that have meaning to HTTP. */
const HEADER_NAMES = [
  "X-API-Key",
  "X-Timestamp",
  "X-Signature",
  "Content-Type",
  "Content-Encoding",
  "Accept",
  "Accept-Encoding",
  "Accept-Language",
  "X-Forwarded-For",
  "X-Request-Id",
  "Authorization",
  "Cookie",
  "Origin",
  "Range",
  "If-None-Match",
  "Expect",
  "Upgrade",
  "traceparent",
  "X-HTTP-Method-Override",
];

/** A header value: ordinary, hostile, raw bytes (NUL, CR, LF, bytes above 0x7F), or overlong (past Node's 16 KiB header limit). */
export const headerValue: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("application/json", "gzip", "br", "x-unknown", "identity", "100-continue", "h2c", "tr-TR,tr;q=0.9", "bytes=0-1", "*/*", "0", "-1", "1764000000", "not-a-number", "Bearer x", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") },
  { weight: 4, arbitrary: hostileText.map((s) => [...s].filter((c) => c === "\t" || (c >= " " && c !== "\u007F")).join("")) },
  // Visible ASCII, tab and obs-text (0x80-0xFF): bytes HTTP allows in a value.
  { weight: 3, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => Buffer.from([...b].map((x) => (x < 0x20 && x !== 0x09) || x === 0x7f ? x + 0x40 : x))) },
  { weight: 1, arbitrary: hostileText },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.integer({ min: 4_000, max: 20_000 }).map((n) => "v".repeat(n)) },
);

/**
 * Headers: known and made-up names, duplicates and all. An Expect other than 100-continue
 * reaches the app through the server's `checkExpectation` listener (gateway/src/server.ts).
 */
export const hostileHeaders: fc.Arbitrary<Array<[string, string | Buffer]>> = fc.array(
  fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...HEADER_NAMES) }, { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,30}$/) }), headerValue),
  { maxLength: 6 },
);

// ------------------------------------------------------------------------------ bodies

/** A body, the headers that go with it, and what was done to it (for the failure message). */
export interface BodyCase {
  bytes: Buffer;
  headers: Array<[string, string]>;
  framing?: "length" | "chunked";
  what: string;
}

const JSON_TYPE: [string, string] = ["Content-Type", "application/json"];

/** Content types a JSON body must not be accepted under. */
const WRONG_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/jsonx", "application/json; charset=latin1", "application/json; charset=utf-16", "text/json", "*/*", ""];

/** Content codings the gateway does not accept on a request body. */
const CODINGS = ["gzip", "deflate", "br", "x-unknown", "gzip, identity", "GZIP"];

/** A JSON text `levels` deep, either as the whole body or inside a field. */
function deep(levels: number, open: string, close: string, inner = "1"): string {
  return `${open.repeat(levels)}${inner}${close.repeat(levels)}`;
}

/**
 * Bodies no route may accept, whatever the route: not JSON, not an object, not UTF-8, too
 * deep, too large, under another content type or a content coding. `valid` is the JSON text
 * of an acceptable object body for the route; `limit` the gateway's BODY_LIMIT.
 */
export function refusedBody(valid: string, limit: number): fc.Arbitrary<BodyCase> {
  const validBytes = Buffer.from(valid);
  return fc.oneof(
    fc.integer({ min: 1, max: Math.max(1, valid.length - 1) }).map((n) => ({ bytes: Buffer.from(valid.slice(0, n)), headers: [JSON_TYPE], what: `the first ${n} characters of a JSON object` })),
    fc.oneof(fc.jsonValue().filter((v) => typeof v !== "object" || v === null || Array.isArray(v)), fc.constantFrom<Json>([], [{}], "{}", 0, null, true)).map((v) => ({ bytes: Buffer.from(JSON.stringify(v)), headers: [JSON_TYPE], what: "JSON that is not an object" })),
    fc.tuple(invalidUtf8, fc.nat()).map(([bad, at]) => {
      // Inside a string value: after the first quote of the text.
      const quote = valid.indexOf('"') + 1 + (at % 3);
      return { bytes: Buffer.concat([validBytes.subarray(0, quote), bad, validBytes.subarray(quote)]), headers: [JSON_TYPE], what: `bytes that are not UTF-8 (${bad.toString("hex")})` };
    }),
    fc.tuple(fc.integer({ min: 33, max: 20_000 }), fc.boolean()).map(([levels, field]) => ({
      bytes: Buffer.from(field ? `{"metadata":${deep(levels, '{"a":', "}")},${valid.slice(1)}` : deep(levels, "[", "]")),
      headers: [JSON_TYPE],
      what: `JSON nested ${levels} levels deep${field ? " in a field" : ""}`,
    })),
    fc.integer({ min: limit + 1, max: limit + 20_000 }).map((size) => ({ bytes: Buffer.from(`{"pad":"${"x".repeat(size)}",${valid.slice(1)}`), headers: [JSON_TYPE], what: `a body of ${size + valid.length + 8} bytes` })),
    fc.constantFrom(...WRONG_TYPES).map((type) => ({ bytes: validBytes, headers: type === "" ? [] : [["Content-Type", type] as [string, string]], what: `a JSON object as ${type || "no Content-Type"}` })),
    fc.constantFrom(...CODINGS).map((coding) => ({ bytes: gzipSync(validBytes), headers: [JSON_TYPE, ["Content-Encoding", coding] as [string, string]], what: `a JSON object gzipped, Content-Encoding: ${coding}` })),
    // Node keeps the first of repeated Content-Type headers (and discards the rest).
    fc.constant({ bytes: validBytes, headers: [["Content-Type", "text/plain"], JSON_TYPE] as Array<[string, string]>, what: "Content-Type text/plain, then application/json" }),
  );
}

/** Any body at all: the refused ones, random JSON, random bytes, chunked. */
export function anyBody(valid: string, limit: number): fc.Arbitrary<BodyCase | undefined> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: refusedBody(valid, limit) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ bytes: Buffer.from(JSON.stringify(v)), headers: [JSON_TYPE], what: "random JSON" })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => ({ bytes: Buffer.from(b), headers: [JSON_TYPE], what: "random bytes" })) },
    { weight: 1, arbitrary: fc.constant<BodyCase>({ bytes: Buffer.from(valid), headers: [JSON_TYPE], framing: "chunked", what: "a JSON object, chunked" }) },
  );
}

/** The JSON types a schema allows (anyOf unioned; no type: any). */
function allowedTypes(schema: Schema): Set<string> | undefined {
  if (schema.anyOf) {
    const all = new Set<string>();
    for (const option of schema.anyOf) {
      const types = allowedTypes(option);
      if (!types) return undefined;
      for (const t of types) all.add(t);
    }
    return all;
  }
  if (schema.type === undefined) return undefined;
  return new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
}

/** A JSON value of a type the schema does not allow, if there is one. */
function wrongValue(schema: Schema): Json[] {
  const allowed = allowedTypes(schema);
  if (!allowed) return [];
  const candidates: Array<[string, Json]> = [
    ["boolean", true],
    ["array", []],
    ["object", {}],
    ["string", "1"],
    ["number", 1.5],
    ["null", null],
  ];
  return candidates.filter(([type]) => !allowed.has(type) && !(type === "number" && allowed.has("number"))).map(([, value]) => value);
}

/** Every schema of the body (top level and nested objects) with the path to it. */
function fieldsOf(schema: Schema, at: string[] = []): Array<{ path: string[]; schema: Schema; required: boolean }> {
  const out: Array<{ path: string[]; schema: Schema; required: boolean }> = [];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const path = [...at, name];
    out.push({ path, schema: child, required: (schema.required ?? []).includes(name) });
    if (child.properties) out.push(...fieldsOf(child, path));
  }
  return out;
}

/** The string schema inside `schema` (itself, or the string option of an anyOf). */
function stringSchema(schema: Schema): Schema | undefined {
  if (allowedTypes(schema)?.has("string") && !schema.anyOf) return schema;
  return schema.anyOf?.find((s) => allowedTypes(s)?.has("string"));
}

/** Whether a string schema refuses control characters (the gateway's SAFE_CHARACTERS pattern). */
function refusesControls(schema: Schema): boolean {
  return [schema.pattern, ...(schema.allOf ?? []).map((s) => s.pattern)].some((p) => p?.includes("\\u0000-\\u001F"));
}

/** A change to one field of a valid body that makes it invalid by the schema, with its description. */
export interface Breaker {
  what: string;
  apply(body: Record<string, Json>): void;
}

/** Sets an own property, `__proto__` included (a plain assignment would set the prototype). */
function own(at: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(at, key, { value, enumerable: true, writable: true, configurable: true });
}

function setAt(body: Record<string, Json>, path: string[], value: Json | undefined): void {
  let at = body;
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(at, key) ? at[key] : undefined;
    if (typeof next !== "object" || next === null || Array.isArray(next)) own(at, key, {});
    at = at[key] as Record<string, Json>;
  }
  if (value === undefined) delete at[path.at(-1)!];
  else own(at, path.at(-1)!, value);
}

/** A value that stands for JSON text JSON.stringify cannot write (`1e999`, `01`, `NaN`); serialiseBody puts the text in. */
const rawJson = (text: string): string => `\u0000raw:${text}\u0000`;

/** The body as JSON text, with the raw texts of breakers in place. */
export function serialiseBody(body: Record<string, Json>): string {
  return JSON.stringify(body).replace(/"\\u0000raw:([^"\\]*)\\u0000"/g, "$1");
}

/** Numbers a JSON parser reads as non-finite, and texts that are not JSON numbers at all. */
const RAW_NUMBERS = ["1e999", "-1e999", "NaN", "Infinity", "01", "+1", ".5", "0x10", "1_000"];

/**
 * Every breaker the schema implies: a required field removed or null, a value of a type not
 * allowed, a string one past maxLength, a number below minimum, a control character where the
 * pattern forbids them. Each leaves a body the document says is invalid.
 */
export function schemaBreakers(schema: Schema): Breaker[] {
  const breakers: Breaker[] = [];
  for (const { path, schema: field, required } of fieldsOf(schema)) {
    const name = path.join(".");
    if (required) {
      breakers.push({ what: `${name} removed`, apply: (b) => setAt(b, path, undefined) });
      if (!allowedTypes(field)?.has("null")) breakers.push({ what: `${name} null`, apply: (b) => setAt(b, path, null) });
    }
    for (const value of wrongValue(field)) breakers.push({ what: `${name} ${JSON.stringify(value)}`, apply: (b) => setAt(b, path, value) });
    const text = stringSchema(field);
    if (text?.maxLength !== undefined) {
      const max = text.maxLength;
      breakers.push({ what: `${name} of ${max + 1} characters`, apply: (b) => setAt(b, path, "ş".repeat(max + 1)) });
    }
    if (text && refusesControls(text)) {
      breakers.push({ what: `${name} with a NUL`, apply: (b) => setAt(b, path, "a\u0000b") });
      breakers.push({ what: `${name} with a right-to-left override`, apply: (b) => setAt(b, path, "a\u202Eb") });
    }
    const numeric = field.anyOf?.find((s) => s.minimum !== undefined) ?? field;
    if (numeric.minimum !== undefined) {
      const min = numeric.minimum;
      breakers.push({ what: `${name} ${min - 1}`, apply: (b) => setAt(b, path, min - 1) });
      if (min > 0) breakers.push({ what: `${name} -0`, apply: (b) => setAt(b, path, rawJson("-0")) });
      if (allowedTypes(numeric)?.has("integer")) breakers.push({ what: `${name} ${min + 0.5}`, apply: (b) => setAt(b, path, min + 0.5) });
    }
    if (numeric.maximum !== undefined) {
      const max = numeric.maximum;
      // Past the largest safe integer a JSON number may round back onto it: 2 ** 53 + 2 does not.
      const over = max >= Number.MAX_SAFE_INTEGER ? "9007199254740994" : String(max + 1);
      breakers.push({ what: `${name} ${over}`, apply: (b) => setAt(b, path, rawJson(over)) });
      breakers.push({ what: `${name} 1e308`, apply: (b) => setAt(b, path, 1e308) });
    }
    if (allowedTypes(numeric)?.has("integer") || allowedTypes(numeric)?.has("number")) {
      for (const text of RAW_NUMBERS) breakers.push({ what: `${name} ${text}`, apply: (b) => setAt(b, path, rawJson(text)) });
    }
  }
  return breakers;
}

/** The body's string fields given hostile (perhaps still valid) text: what the services see when a later check refuses the request. */
export function withHostileStrings(schema: Schema): fc.Arbitrary<Array<{ path: string[]; value: string }>> {
  const strings = fieldsOf(schema).filter((f) => stringSchema(f.schema) !== undefined);
  if (strings.length === 0) return fc.constant([]);
  const value = (f: (typeof strings)[number]) =>
    fc.oneof(
      hostileText,
      // Hostile but within the field's rules (no control or bidi characters, trimmed, not too long), so it gets past the gateway to a service.
      hostileText.map((text) => {
        const cut = [...text.replace(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, "").trim()].slice(0, stringSchema(f.schema)?.maxLength ?? 200).join("").trim();
        return cut === "" ? "ş" : cut;
      }),
    );
  return fc.array(fc.constantFrom(...strings).chain((f) => value(f).map((v) => ({ path: f.path, value: v }))), { maxLength: 4 });
}

/** Object keys that have meant something to some code: prototype names, operators, empty, hostile text. */
const hostileKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "", "$where", "$gt", "a.b", "a[0]"), hostileText.map((k) => k.slice(0, 100)));

const hostileObject: fc.Arbitrary<Record<string, Json>> = fc.array(fc.tuple(hostileKey, fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>), { maxLength: 12 }).map((entries) => {
  const out: Record<string, Json> = {};
  for (const [key, value] of entries) own(out, key, value);
  return out;
});

/**
 * Hostile content that neither makes a body valid nor invalid: free-form objects (a
 * deposit's metadata) filled with hostile keys and values, and extra top-level keys the
 * schema does not name (`__proto__` as an own key among them).
 */
export function withHostileExtras(schema: Schema): fc.Arbitrary<Array<{ path: string[]; value: Json }>> {
  const freeForm = fieldsOf(schema).filter((f) => {
    const object = f.schema.anyOf?.find((s) => allowedTypes(s)?.has("object")) ?? f.schema;
    return allowedTypes(object)?.has("object") === true && object.properties === undefined;
  });
  const options: Array<fc.Arbitrary<{ path: string[]; value: Json }>> = [fc.tuple(hostileKey, fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>).map(([key, value]) => ({ path: [key], value }))];
  if (freeForm.length > 0) options.push(fc.tuple(fc.constantFrom(...freeForm), hostileObject).map(([f, value]) => ({ path: f.path, value })));
  return fc.array(fc.oneof(...options), { maxLength: 3 });
}

/** Applies hostile strings to a body (in place). */
export function applyStrings(body: Record<string, Json>, values: Array<{ path: string[]; value: Json }>): void {
  for (const { path, value } of values) setAt(body, path, value);
}

export type { Json };
