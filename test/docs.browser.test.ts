import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type Browser } from "playwright-core";
import { assertChromium, launchChromium } from "./browser.js";
import { startAllInOne, type AllInOne } from "@payments/all-in-one";

/*
 * GET /docs, the API reference, in a real headless Chromium (Debian's, driven by
 * playwright-core) against the whole product started in-process: Scalar renders the
 * gateway's own /openapi.json, every operation of it shows up, and the page asks nothing
 * of any other origin (every request is recorded; a blocked one or a CSP refusal fails too).
 */

const WAIT = { timeout: 30_000 };
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

const dataDir = mkdtempSync(join(tmpdir(), "docs-browser-"));
let app: AllInOne | undefined;
let browser: Browser | undefined;

test.before(async () => {
  assertChromium();
  app = await startAllInOne({
    env: { DATA_DIR: dataDir, PORT: "0", GRPC_PORT: "0", CONSOLE_PORT: "0", LOG_LEVEL: "warn", MASTER_KEY: randomBytes(32).toString("hex") },
  });
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close();
  await app?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const base = () => app!.gateway.config.PUBLIC_BASE_URL ?? app!.gateway.url;

/** The page's script URLs, in order. */
function scriptSources(html: string): string[] {
  return [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!);
}

test("GET /docs answers HTML under a same-origin CSP, and its scripts are cached for good and compressed", async (t) => {
  const res = await fetch(`${base()}/docs`);
  t.is(res.status, 200);
  t.regex(res.headers.get("content-type") ?? "", /^text\/html; charset=utf-8/);
  t.is(res.headers.get("cache-control"), "no-store");
  const csp = res.headers.get("content-security-policy") ?? "";
  const directives = new Map(csp.split(/\s*;\s*/).map((d) => [d.split(/\s+/)[0]!, d.split(/\s+/).slice(1)]));
  t.deepEqual(directives.get("default-src"), ["'none'"]);
  t.deepEqual(directives.get("script-src"), ["'self'"], "no inline or remote script");
  t.deepEqual(directives.get("connect-src"), ["'self'"]);
  t.deepEqual(directives.get("frame-ancestors"), ["'none'"]);
  const style = directives.get("style-src") ?? [];
  t.false(style.includes("'unsafe-inline'"), "style elements need the nonce");
  t.true(style.some((s) => s.startsWith("'nonce-")));
  t.false(/https?:|\*/.test(csp), `no other origin is allowed: ${csp}`);

  const html = await res.text();
  const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
  t.true(html.includes(`<meta property="csp-nonce" content="${nonce}">`));
  const scripts = scriptSources(html);
  t.is(scripts.length, 2);
  for (const src of scripts) {
    t.regex(src, /^\/docs\/assets\/[a-z]+\.[0-9a-f]{16}\.js$/);
    const plain = await fetch(`${base()}${src}`, { headers: { "accept-encoding": "identity" } });
    t.is(plain.status, 200, src);
    t.regex(plain.headers.get("content-type") ?? "", /^application\/javascript/);
    t.is(plain.headers.get("cache-control"), "public, max-age=31536000, immutable");
    const etag = plain.headers.get("etag");
    t.truthy(etag);
    t.is(plain.headers.get("content-encoding"), null);
    const bytes = Buffer.from(await plain.arrayBuffer());

    // fetch decodes what it receives: the brotli answer must decode to the same bytes.
    const br = await fetch(`${base()}${src}`, { headers: { "accept-encoding": "br" } });
    t.is(br.headers.get("content-encoding"), "br");
    t.true(Buffer.from(await br.arrayBuffer()).equals(bytes), "brotli decodes to the same file");

    const notModified = await fetch(`${base()}${src}`, { headers: { "if-none-match": etag! } });
    t.is(notModified.status, 304);
  }
  const scalar = scripts.find((src) => src.includes("/scalar."))!;
  const size = Number((await fetch(`${base()}${scalar}`, { method: "HEAD", headers: { "accept-encoding": "gzip" } })).headers.get("content-length"));
  t.true(size > 0 && size < 2_000_000, `the compressed bundle is ${size} bytes`);

  t.is((await fetch(`${base()}/docs/assets/scalar.0000000000000000.js`)).status, 404);
});

interface Operation {
  method: string;
  path: string;
  summary?: string;
}

async function operationsOf(): Promise<{ operations: Operation[]; description: string }> {
  const res = await fetch(`${base()}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: the page has nothing to render`);
  const doc = (await res.json()) as { info?: { description?: string }; paths?: Record<string, Record<string, { summary?: string }>> };
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) operations.push({ method: method.toUpperCase(), path, ...(op.summary ? { summary: op.summary } : {}) });
    }
  }
  return { operations, description: doc.info?.description ?? "" };
}

test("the page renders every operation of /openapi.json and the getting started, asking nothing of another origin", async (t) => {
  const { operations, description } = await operationsOf();
  t.true(operations.length >= 5, `only ${operations.length} operations in /openapi.json`);
  t.true(description.includes("## Getting started"), "info.description carries the getting started");

  const context = await browser!.newContext({ viewport: { width: 1400, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const origin = new URL(base()).origin;
  const requests: string[] = [];
  const problems: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));

  const response = await page.goto(`${base()}/docs`, { waitUntil: "load", ...WAIT });
  t.is(response?.status(), 200);

  // Scalar gives each operation's section an id ending in "/<METHOD><path>".
  const idSuffixes = operations.map((op) => `/${op.method}${op.path}`);
  await page.waitForFunction(
    `(() => { const ids = [...document.querySelectorAll("[id]")].map((e) => e.id); return ${JSON.stringify(idSuffixes)}.every((s) => ids.some((id) => id.endsWith(s))); })()`,
    undefined,
    WAIT,
  );
  // Every operation is also named on the page: by its summary, and by its method and path.
  const text = await page.evaluate<string>("document.body.innerText");
  for (const op of operations) {
    if (op.summary) t.true(text.includes(op.summary), `"${op.summary}" (${op.method} ${op.path}) is on the page`);
  }
  const heading = page.getByRole("heading", { name: "Getting started", exact: true }).first();
  await heading.waitFor({ state: "visible", ...WAIT });
  t.true(await heading.isVisible(), "the getting started heading shows");
  t.true(text.includes("pnpm cli merchant create"), "the getting started text is rendered");

  // Let late requests (lazy chunks, fonts, telemetry) happen before judging.
  await page.waitForLoadState("networkidle", WAIT);
  await page.waitForTimeout(500);

  t.true(requests.some((url) => new URL(url).pathname === "/openapi.json"), "the page fetched /openapi.json");
  t.deepEqual(
    requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin),
    [],
    "every request stays on the gateway",
  );
  t.deepEqual(problems, [], "nothing was blocked or refused");
});
