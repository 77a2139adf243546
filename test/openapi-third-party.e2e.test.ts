import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import test from "ava";
import createClient, { type Client } from "openapi-fetch";
import { spawnAllInOne, type AllInOneProcess } from "@payments/testing";
import { signedHeaders } from "@payments/signing";
import { openApiDocument, type OpenApiDocument } from "../gateway/src/openapi/index.js";
import { OpenApiChecker, checkOpenApiResponse } from "./openapi-check.js";

/*
 * The OpenAPI document as a third party uses it: served by a real `pnpm start` process,
 * turned into TypeScript by openapi-typescript at test time, the generated types compiled
 * with openapi-fetch, and real signed calls made through openapi-fetch; every answer is
 * checked against the document, and the document's example ids against the ids the running
 * gateway really issues.
 *
 * openapi-typescript 7 builds its output with the TypeScript 5 compiler API, which the root's
 * TypeScript 7 no longer has (its `import ts from "typescript"` finds no `ts.factory` there,
 * so the root's own openapi-typescript cannot run): openapi-typescript and TypeScript are
 * both taken from @payments/sdk, which pins TypeScript 5.9.3 for its own `generate`.
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const sdkRequire = createRequire(join(ROOT, "packages/sdk/package.json"));

/** What the test uses of openapi-typescript 7 (its own types name the TypeScript 5 AST). */
interface OpenApiTypeScript {
  default(schema: unknown, options?: Record<string, unknown>): Promise<unknown>;
  astToString(ast: unknown): string;
}

interface Merchant {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
}

let app: AllInOneProcess;
let merchant: Merchant;
let openapiTS: OpenApiTypeScript;
let workDir = "";
let served: OpenApiDocument;
let servedChecker: OpenApiChecker;
let generated = "";
/** The ids the running gateway really issued, by kind. */
const real = { deposit: "", withdrawal: "", event: "", requestId: "", banks: [] as Array<Record<string, unknown>> };

test.before(async () => {
  const [started, generator] = await Promise.all([
    spawnAllInOne({ SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms" }),
    import(pathToFileURL(sdkRequire.resolve("openapi-typescript").replace(/\.cjs$/, ".mjs")).href) as Promise<OpenApiTypeScript>,
  ]);
  app = started;
  openapiTS = generator;
  workDir = await mkdtemp(join(tmpdir(), "openapi-third-party-"));
  // A sandbox merchant (seeded sandbox accounts take its deposits) allowed to withdraw from here.
  const made = await app.cli(["merchant", "create", "--name", "Third Party Shop", "--sandbox", "--ip", "127.0.0.1,::1", "--json"]);
  if (made.code !== 0) throw new Error(`merchant create failed: ${made.stderr}`);
  merchant = JSON.parse(made.stdout) as Merchant;
});

test.after.always(async () => {
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (app as typeof app | undefined)?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const PATHS = ["/v1/available-banks", "/v1/deposit", "/v1/deposit/{transactionId}", "/v1/withdraw", "/v1/balance", "/v1/statement"];

test.serial("GET /openapi.json answers without credentials the document the gateway's code builds, naming the merchant API's paths", async (t) => {
  const res = await fetch(`${app.gatewayUrl}/openapi.json`);
  t.is(res.status, 200);
  t.regex(res.headers.get("content-type") ?? "", /^application\/json/);
  served = (await res.json()) as OpenApiDocument;
  checkOpenApiResponse("GET", "/openapi.json", res.status, served);
  t.deepEqual(served, openApiDocument().document, "the checker of the other suites checks against the document the gateway serves");
  t.regex(served.openapi, /^3\.1\./);
  for (const path of PATHS) t.true(Object.hasOwn(served.paths, path), `${path} is documented`);
  servedChecker = new OpenApiChecker(served);
});

test.serial("openapi-typescript turns the served document into TypeScript with every documented path and operation", async (t) => {
  const started = Date.now();
  generated = openapiTS.astToString(await openapiTS.default(structuredClone(served)));
  t.log(`generated ${generated.length} characters in ${Date.now() - started} ms`);
  await writeFile(join(workDir, "schema.ts"), generated);
  t.regex(generated, /^export interface paths \{/m);
  t.regex(generated, /^export interface components \{/m);
  t.regex(generated, /^export interface operations \{/m);
  for (const [path, methods] of Object.entries(served.paths)) {
    t.true(generated.includes(`    ${JSON.stringify(path)}: {`), `paths has ${path}`);
    for (const operation of Object.values(methods)) {
      const id = (operation as { operationId?: string }).operationId;
      if (id) t.true(generated.includes(`    ${id}: {`), `operations has ${id}`);
    }
  }
});

/** The bodies the runtime calls send; the compiled client source sends the same ones. */
const DEPOSIT = { processId: "third-party-1", amount: 12_000, customer: { id: "cus_1", name: "Elif Şahin", username: "elif" }, returnUrl: "https://shop.example/return" };
const WITHDRAWAL = { processId: "third-party-payout-1", amount: 5_000, accountName: "Elif Şahin", iban: "TR640004600000187230459611", userId: "cus_1", userName: "elif", name: "Elif Şahin" };

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/**
 * A merchant's client as a third party would write it against the generated `paths`; it is
 * only compiled, never run. Each `@ts-expect-error` must meet an error, so types that had
 * decayed to `any` fail the compile too.
 */
function clientSource(): string {
  return `import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema.js";

// Where a real client signs (see signedHeaders): what it reads of the request is what matters here.
const signing: Middleware = {
  async onRequest({ request }) {
    const url = new URL(request.url);
    const body = await request.clone().text();
    request.headers.set("X-Signature", \`\${request.method} \${url.pathname}\${url.search} \${body.length}\`);
    return request;
  },
};

export async function merchantCalls(baseUrl: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl });
  client.use(signing);
  const banks = await client.GET("/v1/available-banks");
  const bankId: string | undefined = banks.data?.data.banks[0]?._id;
  const minAmount: number | undefined = banks.data?.data.banks[0]?.minAmount;
  const created = await client.POST("/v1/deposit", { body: ${JSON.stringify({ ...DEPOSIT, bankCode: "FAST" })} });
  if (created.error) return [created.error.error.code, created.error.error.message];
  const transactionId: string = created.data.data.transactionId;
  const returnUrl: string | undefined = created.data.data.returnUrl;
  const status: "pending" | "completed" | "failed" | "expired" | "cancelled" = created.data.data.status;
  const byId = await client.GET("/v1/deposit/{transactionId}", { params: { path: { transactionId } } });
  const byProcessId = await client.GET("/v1/deposit", { params: { query: { processId: ${JSON.stringify(DEPOSIT.processId)} } } });
  const balance = await client.GET("/v1/balance");
  const available: number | undefined = balance.data?.data.balances[0]?.available;
  const withdrawal = await client.POST("/v1/withdraw", { body: { ...${JSON.stringify(WITHDRAWAL)}, bankId: bankId ?? null } });
  const statement = await client.GET("/v1/statement", { params: { query: { from: "2026-11-21", to: "2026-11-23", currency: "TRY" } } });
  // Documented as JSON, CSV (text) or XLSX: the data is their union until narrowed, or until the client asks for JSON only.
  const closing: number | undefined = typeof statement.data === "object" ? statement.data.data.closingBalance : undefined;
  const jsonOnly = createClient<paths, "application/json">({ baseUrl });
  const opening: number | undefined = (await jsonOnly.GET("/v1/statement", { params: { query: { from: "2026-11-21", to: "2026-11-23" } } })).data?.data.openingBalance;
  // @ts-expect-error: an amount is an integer of kuruş, not a string
  await client.POST("/v1/deposit", { body: { ...${JSON.stringify(DEPOSIT)}, amount: "120.00" } });
  // @ts-expect-error: a deposit names its customer
  await client.POST("/v1/deposit", { body: { processId: "x", amount: 1000 } });
  // @ts-expect-error: the transactionId path parameter is required
  await client.GET("/v1/deposit/{transactionId}", { params: { path: {} } });
  // @ts-expect-error: GET /v1/deposit needs its processId
  await client.GET("/v1/deposit", { params: { query: {} } });
  // @ts-expect-error: there is no such path
  await client.GET("/v1/deposits");
  return [String(minAmount), transactionId, returnUrl ?? "", status, byId.data?.data.processId ?? "", byProcessId.data?.data.transactionId ?? "", String(available), withdrawal.data?.data.transactionId ?? "", String(closing), String(opening)];
}
`;
}

/**
 * TypeScript 5's createProgram and getPreEmitDiagnostics on `roots`, in a worker thread: the
 * check takes seconds of CPU, and a blocked event loop would let the gateway close this
 * process's idle keep-alive connections (after its 5 s keepAliveTimeout) unnoticed, failing
 * the next fetch.
 */
const TYPECHECK = `
const { parentPort, workerData } = require("node:worker_threads");
const ts = require(workerData.typescript);
const started = Date.now();
const program = ts.createProgram(workerData.roots, {
  ...workerData.options,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
const problems = ts.getPreEmitDiagnostics(program).map((d) => {
  const at = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
  return (d.file ? d.file.fileName.slice(workerData.dir.length) : "") + (at ? ":" + (at.line + 1) + ":" + (at.character + 1) : "") + " " + ts.flattenDiagnosticMessageText(d.messageText, "\\n");
});
parentPort.postMessage({ version: ts.version, ms: Date.now() - started, problems });
`;

function typecheck(roots: string[]): Promise<{ version: string; ms: number; problems: string[] }> {
  const options = {
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    // The generated schema.ts and client.ts are checked in full; only the libraries' .d.ts are skipped.
    skipLibCheck: true,
    lib: ["lib.es2023.d.ts"],
    types: ["node"],
  };
  const worker = new Worker(TYPECHECK, { eval: true, execArgv: [], workerData: { typescript: sdkRequire.resolve("typescript"), roots, options, dir: workDir } });
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the type check's worker exited with ${code}`)));
  });
}

test.serial("the generated types compile under strict TypeScript with openapi-fetch: the calls with documented bodies and parameters typecheck, wrong ones do not", async (t) => {
  // A few seconds (under 20 s even on a busy machine), so it is part of the suite.
  t.truthy(generated, "the generation test ran");
  await writeFile(join(workDir, "client.ts"), clientSource());
  await writeFile(join(workDir, "package.json"), `${JSON.stringify({ type: "module", private: true })}\n`);
  // openapi-fetch and @types/node as the repository has them.
  await symlink(join(ROOT, "node_modules"), join(workDir, "node_modules"), "dir");
  const { version, ms, problems } = await typecheck([join(workDir, "client.ts")]);
  t.log(`TypeScript ${version} checked the generated types and the client in ${ms} ms`);
  t.deepEqual(problems, []);
});

/** The request each answer was for, so every answer can be checked against the document. */
const requestOf = new WeakMap<Response, Request>();

/** One operation as this file calls it: any path and query parameters, any JSON body, any JSON answer. */
interface LooseOperation {
  parameters: { query?: Record<string, unknown>; path?: Record<string, unknown> };
  requestBody?: { content: { "application/json": Record<string, unknown> } };
  responses: Record<number, { content: { "application/json": Record<string, unknown> } }>;
}

// The runtime calls need no generated types (those are proven above); loose paths keep this file free of them.
type LoosePaths = Record<string, Record<"get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace", LooseOperation>>;

function merchantClient(credentials: Merchant): Client<LoosePaths> {
  const client = createClient<LoosePaths>({ baseUrl: app.gatewayUrl });
  client.use({
    async onRequest({ request }) {
      const url = new URL(request.url);
      // Sign the bytes openapi-fetch sends: method, path with its query, raw body.
      const body = Buffer.from(await request.clone().arrayBuffer());
      for (const [name, value] of Object.entries(signedHeaders(credentials, { method: request.method, path: `${url.pathname}${url.search}`, body }))) request.headers.set(name, value);
      return request;
    },
    onResponse({ request, response }) {
      requestOf.set(response, request);
    },
  });
  return client;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  data: Record<string, unknown>;
  response: Response;
}

/** An openapi-fetch result, checked against the document (the in-process one, and the served one). */
function documented(result: { data?: unknown; error?: unknown; response: Response }): Answer {
  const { response } = result;
  const request = requestOf.get(response)!;
  const url = new URL(request.url);
  const body = (result.data ?? result.error) as Record<string, unknown>;
  const contentType = response.headers.get("content-type") ?? undefined;
  checkOpenApiResponse(request.method, `${url.pathname}${url.search}`, response.status, body, contentType);
  servedChecker.check(request.method, `${url.pathname}${url.search}`, response.status, body, contentType);
  return { status: response.status, body, data: body.data as Record<string, unknown>, response };
}

let client: Client<LoosePaths>;
let depositId = "";

test.serial("through openapi-fetch and a signing middleware: the bank list, a deposit that echoes its returnUrl, read by path and by processId", async (t) => {
  t.truthy(servedChecker, "the document was fetched");
  client = merchantClient(merchant);
  const banks = documented(await client.GET("/v1/available-banks", {}));
  t.is(banks.status, 200, JSON.stringify(banks.body));
  real.banks = banks.data.banks as Array<Record<string, unknown>>;
  t.true(real.banks.length > 0, "a sandbox merchant is offered the seeded sandbox banks");
  real.requestId = banks.response.headers.get("x-request-id") ?? "";

  const created = documented(await client.POST("/v1/deposit", { body: DEPOSIT }));
  t.is(created.status, 201, JSON.stringify(created.body));
  t.like(created.data, { processId: DEPOSIT.processId, amount: DEPOSIT.amount, status: "pending", returnUrl: DEPOSIT.returnUrl, customer: DEPOSIT.customer });
  depositId = created.data.transactionId as string;
  real.deposit = depositId;

  const byId = documented(await client.GET("/v1/deposit/{transactionId}", { params: { path: { transactionId: depositId } } }));
  t.is(byId.status, 200, JSON.stringify(byId.body));
  t.deepEqual(byId.data, created.data);
  const byProcessId = documented(await client.GET("/v1/deposit", { params: { query: { processId: DEPOSIT.processId } } }));
  t.is(byProcessId.status, 200, JSON.stringify(byProcessId.body));
  t.is(new URL(byProcessId.response.url).search, `?processId=${DEPOSIT.processId}`);
  t.is(byProcessId.data.transactionId, depositId);
});

test.serial("a processId of 51 characters is 400 VALIDATION_ERROR in the documented failure envelope", async (t) => {
  const refused = documented(await client.POST("/v1/deposit", { body: { ...DEPOSIT, processId: "p".repeat(51) } }));
  t.is(refused.status, 400);
  t.like(refused.body, { success: false, error: { code: "VALIDATION_ERROR" } });
  t.regex((refused.body.error as { message: string }).message, /processId/);
  const unknown = documented(await client.GET("/v1/deposit", { params: { query: { processId: "never-created" } } }));
  t.is(unknown.status, 404);
  t.like(unknown.body, { success: false, error: { code: "TRANSACTION_NOT_FOUND" } });
});

test.serial("through openapi-fetch: a sandbox payment, the balance, a withdrawal to a listed bank, the statement and the events are answers the document describes", async (t) => {
  t.truthy(depositId, "the deposit was created");
  const paid = documented(await client.POST("/v1/sandbox/deposit/{transactionId}/pay", { params: { path: { transactionId: depositId } } }));
  t.is(paid.status, 200, JSON.stringify(paid.body));
  t.like(paid.data, { status: "completed", amount: DEPOSIT.amount });

  // The credit follows the deposit_completed event through the outbox relay.
  let balance = documented(await client.GET("/v1/balance", {}));
  for (let i = 0; i < 50 && JSON.stringify(balance.data.balances) !== JSON.stringify([{ currency: "TRY", available: DEPOSIT.amount, held: 0 }]); i++) {
    await new Promise((r) => setTimeout(r, 100));
    balance = documented(await client.GET("/v1/balance", {}));
  }
  t.deepEqual(balance.data.balances, [{ currency: "TRY", available: DEPOSIT.amount, held: 0 }]);

  const akbank = real.banks.find((b) => b.code === "0046")!;
  const withdrawal = documented(await client.POST("/v1/withdraw", { body: { ...WITHDRAWAL, bankId: akbank._id } }));
  t.is(withdrawal.status, 201, JSON.stringify(withdrawal.body));
  t.like(withdrawal.data, { processId: WITHDRAWAL.processId, amount: WITHDRAWAL.amount, bankId: akbank._id });
  real.withdrawal = withdrawal.data.transactionId as string;
  // The sandbox connector pays it out after SANDBOX_PAYOUT_DELAY.
  let read = documented(await client.GET("/v1/withdraw/{transactionId}", { params: { path: { transactionId: real.withdrawal } } }));
  for (let i = 0; i < 50 && read.data.status !== "completed"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    read = documented(await client.GET("/v1/withdraw/{transactionId}", { params: { path: { transactionId: real.withdrawal } } }));
  }
  t.is(read.data.status, "completed");

  const statement = documented(await client.GET("/v1/statement", { params: { query: { from: day(-1), to: day(1), currency: "TRY" } } }));
  t.is(statement.status, 200, JSON.stringify(statement.body));
  const movements = statement.data.movements as Array<{ kind: string; transactionId: string }>;
  t.deepEqual(
    movements.map((m) => [m.kind, m.transactionId]),
    [
      ["deposit_credit", depositId],
      ["withdrawal_hold", real.withdrawal],
      ["withdrawal_debit", real.withdrawal],
    ],
  );
  t.like(statement.data, { currency: "TRY", openingBalance: 0, closingBalance: DEPOSIT.amount - WITHDRAWAL.amount });

  const events = documented(await client.GET("/v1/events", { params: { query: { transactionId: depositId } } }));
  t.is(events.status, 200, JSON.stringify(events.body));
  const items = events.data.items as Array<{ id: string; type: string }>;
  t.true(items.some((e) => e.type === "deposit.completed"), JSON.stringify(items.map((e) => e.type)));
  real.event = items[0]!.id;
});

/** Fields whose values are ids the gateway issues. */
const ID_FIELDS = new Set(["transactionId", "bankCode", "_id", "bankId", "eventId", "X-Event-Id", "webhook-id", "X-Request-Id"]);
/** An id with a prefix of the gateway's (the kit's newId and the catalog's seeded bank ids), inside any example text. */
const PREFIXED_ID = /(?<![A-Za-z0-9_-])(?:dep|wdr|evt|req|bnk|adj|mer|acc)_[A-Za-z0-9_-]*/g;

interface ExampleId {
  where: string;
  field: string;
  value: string;
}

/**
 * Every id in the document's examples: values of the id fields (in example objects, and the
 * examples of parameters, headers and schema properties of that name), and every prefixed id
 * in any example text (a CSV statement, a header).
 */
function exampleIds(document: unknown): ExampleId[] {
  const found: ExampleId[] = [];
  const seen = new Set<string>();
  const add = (where: string, field: string, value: string) => {
    if (seen.has(`${where}=${value}`)) return;
    seen.add(`${where}=${value}`);
    found.push({ where, field, value });
  };
  const inExample = (value: unknown, where: string, field: string) => {
    if (typeof value === "string") {
      if (ID_FIELDS.has(field)) add(where, field, value);
      for (const token of value.match(PREFIXED_ID) ?? []) add(where, field, token);
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => inExample(item, `${where}/${i}`, field));
    } else if (value && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) inExample(item, `${where}/${key}`, key);
    }
  };
  const walk = (node: unknown, where: string, field: string) => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}/${i}`, field));
    if (!node || typeof node !== "object") return;
    const record = node as Record<string, unknown>;
    // A parameter ({ name, in, … }) names the field its examples are of.
    const own = typeof record.name === "string" && typeof record.in === "string" ? record.name : field;
    for (const [key, value] of Object.entries(record)) {
      const at = `${where}/${key}`;
      if (key === "example") inExample(value, at, own);
      else if (key === "examples" && Array.isArray(value)) inExample(value, at, own);
      else if (key === "examples" && value && typeof value === "object") {
        for (const [name, example] of Object.entries(value)) inExample((example as { value?: unknown }).value, `${at}/${name}/value`, own);
      } else walk(value, at, key === "properties" || key === "headers" ? "" : where.endsWith("/properties") || where.endsWith("/headers") ? key : own);
    }
  };
  walk(document, "#", "");
  return found;
}

/** The shape of a real id: its prefix and as many URL-safe characters as it has. */
function shapeOf(id: string): RegExp {
  const [, prefix, rest] = /^([a-z]+)_(.*)$/s.exec(id) ?? [];
  if (prefix === undefined || rest === undefined) throw new Error(`not a prefixed id: ${id}`);
  return new RegExp(`^${prefix}_[A-Za-z0-9_-]{${rest.length}}$`);
}

test.serial("every id in the document's examples has the shape of the ids the running gateway issues, and every example bank is a real one", (t) => {
  t.truthy(real.deposit && real.withdrawal && real.event, "the runtime calls ran");
  const bankIds = new Set(real.banks.map((b) => b._id as string));
  const shapes: Record<string, RegExp> = { dep: shapeOf(real.deposit), wdr: shapeOf(real.withdrawal), evt: shapeOf(real.event) };
  // A request id is the gateway's own unless the caller sent a valid one.
  if (/^req_/.test(real.requestId)) shapes.req = shapeOf(real.requestId);
  t.log(`real shapes: ${Object.values(shapes).map(String).join(", ")}; bank ids: ${[...bankIds].join(", ")}`);

  const examples = exampleIds(served);
  t.true(examples.some((e) => e.field === "transactionId") && examples.some((e) => e.field === "_id") && examples.some((e) => e.field === "bankCode") && examples.some((e) => e.field === "bankId"), "the walk finds the documented examples");
  t.log(`${examples.length} example ids checked: ${[...new Set(examples.map((e) => e.value))].join(", ")}`);
  const problems: string[] = [];
  for (const { where, field, value } of examples) {
    const prefix = /^([a-z]+)_/.exec(value)?.[1];
    if (field === "_id" || field === "bankCode" || field === "bankId" || prefix === "bnk") {
      // Bank ids are the catalog's seeded ones, the same on every install: the example must be one the merchant is really offered.
      const allowed = field === "bankId" ? value !== "FAST" && bankIds.has(value) : bankIds.has(value);
      if (!allowed) problems.push(`${where}: ${field} ${JSON.stringify(value)} is not a bank id GET /v1/available-banks offers (${[...bankIds].join(", ")})`);
    } else if (field === "transactionId" && prefix !== "dep" && prefix !== "wdr") {
      problems.push(`${where}: transactionId ${JSON.stringify(value)} is neither a deposit's (${shapes.dep}) nor a withdrawal's (${shapes.wdr})`);
    } else if (prefix !== undefined && shapes[prefix] !== undefined) {
      if (!shapes[prefix].test(value)) problems.push(`${where}: ${field || "text"} ${JSON.stringify(value)} does not have the real shape ${shapes[prefix]}`);
    } else if (ID_FIELDS.has(field) || prefix !== undefined) {
      problems.push(`${where}: ${field || "text"} ${JSON.stringify(value)} has no real id to compare with`);
    }
  }
  t.deepEqual(problems, []);

  // The example bank list is the seeded catalog's, as the gateway lists it (the logo's host aside).
  const listed = (served.paths["/v1/available-banks"]!.get as { responses: Record<string, { content: Record<string, { example: { data: { banks: Array<Record<string, unknown> & { logo?: string }> } } }> }> }).responses["200"]!.content["application/json"]!.example.data.banks;
  for (const { logo, ...example } of listed) {
    const bank = real.banks.find((b) => b._id === example._id);
    if (!bank) continue; // reported above
    const { logo: realLogo, ...rest } = bank;
    t.deepEqual(example, rest, `the example of ${String(example._id)} is what the gateway lists`);
    if (logo !== undefined) t.true(typeof realLogo === "string" && realLogo.endsWith(new URL(logo).pathname), `${logo} names the logo file the gateway links (${String(realLogo)})`);
    else t.is(realLogo, undefined);
  }
});
