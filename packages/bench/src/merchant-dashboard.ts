import type { Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DepositService, DepositStatus } from "@payments/contracts/deposit";
import { openDatabase } from "@payments/kit";
import type { Knex } from "knex";
import { operatorClient } from "./identities.js";
import type { ListTiming } from "./operator-lists.js";
import type { RunningProduct } from "./product.js";

/**
 * Issue 24: with 100,000 payments for one merchant in MySQL, the merchant dashboard's payments
 * list stays within 200 ms p95 and a filtered CSV export of 10,000 rows within 2 s. This scenario
 * fills the deposit service's database with one merchant's 100,000 deposits (cloned from one the
 * service made itself, so every column is as it writes them; over 60 days, statuses, customers
 * and amounts mixed), invites a merchant owner through the console's admin API, signs them in
 * through the page (one-time link, password, the sign-in form with its CSRF token) and then, as
 * that browser, one request after another, times over HTTP:
 * - `GET /merchant/payments`: the first page, pages deep by the page's own "next" link, and the
 *   filters (status, customer name prefix, amount, date range);
 * - `GET /merchant/payments.csv?<filter>` of exactly 10,000 rows, to the last byte, with its
 *   data rows counted.
 * The same ListDeposits calls are timed straight at the deposit service too (as the bench's
 * operator), so the report says how much of a page is the service and how much the console.
 */
export interface MerchantDashboardOptions {
  deposits: number;
  /** Pages timed per list. */
  samples: number;
  /** Exports timed per filter. */
  exports: number;
}

export interface ExportTiming {
  export: string;
  query: string;
  runs: number;
  /** Data rows of the last run's CSV (every run's must equal `expectedRows`). */
  rows: number;
  expectedRows: number;
  bytes: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Request → status and headers (the first page of rows fetched and written): the median. */
  headersP50Ms: number;
  /** The same rows walked through ListDeposits at the service, page after page (100 a page): what the console waits for. */
  serviceWalkMs: number;
}

export interface MerchantDashboardFigures {
  seeded: { deposits: number; days: number; seedSeconds: number };
  /** The pages over HTTP, as the signed-in merchant user's browser asks for them. */
  pages: ListTiming[];
  /** The ListDeposits call behind each page, straight at the deposit service (same filters and page size). */
  service: ListTiming[];
  exports: ExportTiming[];
  targetListP95Ms: number;
  targetExportMs: number;
  /** Problems seen on the way (a page not 200, a CSV of the wrong size): each one fails the run. */
  problems: string[];
}

export const MERCHANT_DASHBOARD_TARGETS = { listP95Ms: 200, exportMs: 2_000 } as const;

const DAY = 24 * 3600 * 1000;
const DAYS = 60;
/** Europe/Istanbul is UTC+3 all year: days are cut there. */
const ISTANBUL_OFFSET = 3 * 3600 * 1000;
const CHUNK = 2_000;
const STATUSES = ["completed", "completed", "completed", "pending", "failed", "expired", "cancelled"] as const;
/** Ten first names, none the start of another (so each prefix selects exactly a tenth). */
const FIRST_NAMES = ["Ayşe", "Mehmet", "Fatma", "Ali", "Zeynep", "Mustafa", "Elif", "Ahmet", "Emine", "Hasan"] as const;
const LAST_NAMES = ["Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Yıldırım", "Öztürk", "Aydın", "Özdemir", "Arslan", "Doğan", "Kılıç", "Aslan", "Çetin", "Kara", "Koç", "Kurt", "Özkan", "Şimşek"] as const;
/** 37 amounts (coprime with the 7 statuses and 10 names): 250.00 to 9,250.00 TRY. */
const AMOUNTS = Array.from({ length: 37 }, (_, k) => (k + 1) * 25_000);
const PASSWORD = "bench merchant dashboard password";
const SERVICE_PAGE = 100;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const round = (v: number) => Math.round(v * 10) / 10;

function timing(list: string, samples: Array<{ ms: number; rows: number }>): ListTiming {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return { list, pages: samples.length, rows: samples.reduce((n, s) => n + s.rows, 0), p50Ms: round(percentile(ms, 50)), p95Ms: round(percentile(ms, 95)), maxMs: round(ms.at(-1) ?? 0) };
}

/** A browser's cookies and nothing else: no redirects followed (the bench looks at them). */
class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const index = pair.indexOf("=");
      const name = pair.slice(0, index);
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(index + 1));
    }
  }

  private headers(): Record<string, string> {
    return this.cookies.size > 0 ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {};
  }

  /** GET to the last byte; `headersAt` is when the status and headers had come (performance.now()). */
  async get(path: string): Promise<{ status: number; location: string | null; body: string; headers: Headers; headersAt: number }> {
    const res = await fetch(`${this.base}${path}`, { redirect: "manual", headers: { ...this.headers(), "accept-language": "tr" } });
    const headersAt = performance.now();
    this.remember(res);
    return { status: res.status, location: res.headers.get("location"), body: await res.text(), headers: res.headers, headersAt };
  }

  async post(path: string, form: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
    const res = await fetch(`${this.base}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { ...this.headers(), "content-type": "application/x-www-form-urlencoded", origin: this.base },
      body: new URLSearchParams(form).toString(),
    });
    this.remember(res);
    return { status: res.status, location: res.headers.get("location"), body: await res.text() };
  }
}

function csrfOf(html: string, what: string): string {
  const match = /name="_csrf" value="([^"]*)"/.exec(html);
  if (!match?.[1]) throw new Error(`${what}: no _csrf field on the page`);
  return match[1];
}

/** The merchant's owner, invited through the admin API (the bench's operator as a service admin), signed in through the pages. */
async function signInMerchantOwner(product: RunningProduct, consoleUrl: string, merchantId: string): Promise<Browser> {
  // Inviting is a change: an assertion of its own, never one used before.
  const token = await product.identities.operator.assertionFor("console", { fresh: true });
  const email = `owner-${merchantId.slice(-8).toLowerCase()}@bench.example`;
  const invited = await fetch(`${consoleUrl}/api/merchants/${encodeURIComponent(merchantId)}/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ email, displayName: "Bench Owner", role: "owner" }),
  });
  const answer = (await invited.json()) as { link?: { url: string } };
  if (invited.status !== 201 || !answer.link) throw new Error(`inviting the merchant owner: ${invited.status} ${JSON.stringify(answer)}`);
  const link = new URL(answer.link.url);
  const setter = new Browser(consoleUrl);
  const page = await setter.get(link.pathname + link.search);
  if (page.status !== 200) throw new Error(`the set-password link: ${page.status}`);
  const set = await setter.post("/merchant/set-password", { _csrf: csrfOf(page.body, "set-password"), token: link.searchParams.get("token") ?? "", password: PASSWORD, confirm: PASSWORD });
  if (set.status !== 303) throw new Error(`setting the owner's password: ${set.status}`);
  const browser = new Browser(consoleUrl);
  const signIn = await browser.get("/merchant/sign-in");
  const signedIn = await browser.post("/merchant/sign-in", { _csrf: csrfOf(signIn.body, "sign-in"), email, password: PASSWORD });
  if (signedIn.status !== 303) throw new Error(`the owner's sign-in: ${signedIn.status}`);
  return browser;
}

/** The first instant of an Istanbul day, `days` before today's (0: today). */
function istanbulMidnight(now: number, daysBack: number): number {
  return Math.floor((now + ISTANBUL_OFFSET) / DAY) * DAY - ISTANBUL_OFFSET - daysBack * DAY;
}
/** YYYY-MM-DD of an Istanbul instant. */
function istanbulDate(ms: number): string {
  return new Date(ms + ISTANBUL_OFFSET).toISOString().slice(0, 10);
}

interface Seeded {
  merchantId: string;
  idPrefix: string;
  /** The first instant of the 60 days the deposits are spread over (an Istanbul midnight). */
  start: number;
}

/** The merchant and its deposits: clones of one the service made, `deposits` of them evenly over the 60 days before today. */
async function seed(db: Knex, product: RunningProduct, count: number): Promise<Seeded> {
  const { merchant } = await product.clients.merchants.createMerchant({ name: "Dashboard Bench Shop", sandbox: true });
  const merchantId = merchant!.id;
  const { deposit } = await product.clients.deposits.createDeposit({ merchantId, processId: "dashboard-template", amount: 10_000n, customer: { id: "c", name: "Template Customer", username: "template" } });
  const template = (await db("deposits").where({ id: deposit!.id }).first()) as Record<string, unknown>;
  const idPrefix = `${String(template.id).split("_")[0]}_md`;
  const start = istanbulMidnight(Date.now(), DAYS);
  const span = DAYS * DAY;
  const rows: Array<Record<string, unknown>> = [];
  for (let i = 0; i < count; i++) {
    const createdAt = start + Math.floor((i * span) / count);
    const status = STATUSES[i % STATUSES.length]!;
    const amount = AMOUNTS[i % AMOUNTS.length]!;
    rows.push({
      ...template,
      id: `${idPrefix}${i.toString(36).padStart(8, "0")}`,
      process_id: `dash-${i}`,
      status,
      amount,
      requested_amount: amount,
      reference: `D${i.toString(36).toUpperCase().padStart(10, "0")}`,
      checkout_token: `dash_${i}_${start}`,
      customer_id: `cus_${i % 20_000}`,
      customer_name: `${FIRST_NAMES[i % FIRST_NAMES.length]} ${LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]}`,
      customer_username: `user${i % 20_000}`,
      created_at: createdAt,
      updated_at: createdAt + 240_000,
      expires_at: createdAt + 1_800_000,
      completed_at: status === "completed" ? createdAt + 240_000 : null,
      failure_reason: status === "failed" ? "rejected by an operator" : null,
    });
    if (rows.length === CHUNK) await db("deposits").insert(rows.splice(0));
  }
  if (rows.length > 0) await db("deposits").insert(rows);
  // The template itself is a 100,001st: out of the 60 days (made now), it is left as it is.
  return { merchantId, idPrefix, start };
}

/** The dashboard's filters (console/src/merchant/payments/index.ts: kind, status, customerName, amount in TRY, from and to as Istanbul days). */
export interface PaymentsFilter {
  status?: "pending" | "completed" | "failed" | "expired" | "cancelled";
  customer?: string;
  /** In kuruş; the page's field takes TRY. */
  amount?: number;
  /** Istanbul days, inclusive. */
  from?: string;
  to?: string;
}

function pageQuery(filter: PaymentsFilter): string {
  const q = new URLSearchParams();
  q.set("kind", "deposits");
  if (filter.status) q.set("status", filter.status);
  if (filter.customer) q.set("customerName", filter.customer);
  if (filter.amount !== undefined) q.set("amount", (filter.amount / 100).toFixed(2));
  if (filter.from) q.set("from", filter.from);
  if (filter.to) q.set("to", filter.to);
  return q.toString();
}

const STATUS_PROTO: Record<NonNullable<PaymentsFilter["status"]>, DepositStatus> = {
  pending: DepositStatus.PENDING,
  completed: DepositStatus.COMPLETED,
  failed: DepositStatus.FAILED,
  expired: DepositStatus.EXPIRED,
  cancelled: DepositStatus.CANCELLED,
};

/** The ListDeposits request a filter means (the days as Istanbul days, `to` inclusive). */
function serviceRequest(merchantId: string, filter: PaymentsFilter) {
  const day = (d: string) => Date.parse(`${d}T00:00:00+03:00`);
  return {
    merchantId,
    ...(filter.status ? { status: STATUS_PROTO[filter.status] } : {}),
    ...(filter.customer ? { customerName: filter.customer } : {}),
    ...(filter.amount !== undefined ? { amount: BigInt(filter.amount) } : {}),
    ...(filter.from ? { createdFrom: timestampFromDate(new Date(day(filter.from))) } : {}),
    ...(filter.to ? { createdTo: timestampFromDate(new Date(day(filter.to) + DAY)) } : {}),
  };
}

/** The "next page" link of a payments page, when it has one. */
function nextLink(html: string): string | undefined {
  for (const tag of html.match(/<a\s[^>]*>/g) ?? []) {
    if (!/\brel="next"/.test(tag)) continue;
    return /\bhref="([^"]*)"/.exec(tag)?.[1]?.replace(/&amp;/g, "&");
  }
  return undefined;
}

/** Deposits shown on a page: the distinct ids of the seeded deposits it links to. */
function rowsOn(html: string, idPrefix: string): number {
  return new Set(html.match(new RegExp(`${idPrefix}[0-9a-z]{8}`, "g")) ?? []).size;
}

/** Records of a CSV (newlines inside quotes do not end one), the header left out. */
function csvDataRows(text: string): number {
  let records = 0;
  let quoted = false;
  let empty = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    if (c === 10 && !quoted) {
      if (!empty) records++;
      empty = true;
    } else if (c !== 13) empty = false;
  }
  if (!empty) records++;
  return Math.max(0, records - 1);
}

export async function runMerchantDashboard(db: Knex, product: RunningProduct, consoleUrl: string, deposits: Client<typeof DepositService>, options: MerchantDashboardOptions): Promise<MerchantDashboardFigures> {
  const problems: string[] = [];
  const seedStarted = performance.now();
  const seeded = await seed(db, product, options.deposits);
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  const browser = await signInMerchantOwner(product, consoleUrl, seeded.merchantId);
  const day = (k: number) => istanbulDate(seeded.start + k * DAY);

  const pages: ListTiming[] = [];
  const service: ListTiming[] = [];
  const pageOf = async (path: string, what: string): Promise<{ ms: number; rows: number; html: string }> => {
    const started = performance.now();
    const res = await browser.get(path);
    const ms = performance.now() - started;
    if (res.status !== 200 && problems.length < 20) problems.push(`${what}: ${path} answered ${res.status}${res.location ? ` → ${res.location}` : ""}`);
    return { ms, rows: rowsOn(res.body, seeded.idPrefix), html: res.body };
  };
  const serviceCall = async (filter: PaymentsFilter, limit: number, cursor = "") => {
    const started = performance.now();
    const res = await deposits.listDeposits({ ...serviceRequest(seeded.merchantId, filter), limit, cursor });
    return { ms: performance.now() - started, rows: res.deposits.length, next: res.nextCursor };
  };

  // Each list: `samples` first pages over HTTP, then the same call at the service.
  const lists: Array<{ name: string; filter: (i: number) => PaymentsFilter }> = [
    { name: "payments, first page", filter: () => ({}) },
    { name: "by status (completed / pending by turns)", filter: (i) => ({ status: i % 2 === 0 ? "completed" : "pending" }) },
    { name: "by customer name prefix (10,000 each)", filter: (i) => ({ customer: FIRST_NAMES[i % FIRST_NAMES.length]! }) },
    { name: "by amount (about 2,700 each)", filter: (i) => ({ amount: AMOUNTS[(i * 7) % AMOUNTS.length]! }) },
    { name: "by date range (one day, about 1,667)", filter: (i) => ({ from: day(i % DAYS), to: day(i % DAYS) }) },
    { name: "by date range (7 days) and status completed", filter: (i) => ({ from: day(i % 50), to: day((i % 50) + 6), status: "completed" }) },
    { name: "by customer prefix and date range (7 days)", filter: (i) => ({ customer: FIRST_NAMES[i % FIRST_NAMES.length]!, from: day(i % 50), to: day((i % 50) + 6) }) },
  ];
  let pageSize = 0;
  for (const list of lists) {
    const http: Array<{ ms: number; rows: number }> = [];
    for (let i = 0; i < options.samples; i++) {
      const page = await pageOf(`/merchant/payments?${pageQuery(list.filter(i))}`, list.name);
      http.push(page);
      pageSize = Math.max(pageSize, page.rows);
    }
    pages.push(timing(list.name, http));
    const rpc: Array<{ ms: number; rows: number }> = [];
    for (let i = 0; i < options.samples; i++) rpc.push(await serviceCall(list.filter(i), pageSize || 50));
    service.push(timing(list.name, rpc));
  }

  // Deep pages: the page's own "next" link, 20 pages at a time from the first, until `samples`.
  const deep: Array<{ ms: number; rows: number }> = [];
  const deepFilters: PaymentsFilter[] = [{}, { customer: "Mehmet" }, { status: "completed" }];
  for (let round = 0; deep.length < options.samples; round++) {
    let path: string | undefined = `/merchant/payments?${pageQuery(deepFilters[round % deepFilters.length]!)}`;
    for (let page = 0; page < 20 && path && deep.length < options.samples; page++) {
      const res = await pageOf(path, "deep pages");
      deep.push(res);
      path = nextLink(res.html);
      if (!path && page === 0 && problems.length < 20) problems.push("the first payments page has no next-page link (cursor)");
    }
    if (round > options.samples) break;
  }
  pages.push(timing("pages 1-20 by the next link (all, by name, by status)", deep));
  const deepRpc: Array<{ ms: number; rows: number }> = [];
  for (let round = 0; deepRpc.length < options.samples; round++) {
    let cursor = "";
    for (let page = 0; page < 20 && deepRpc.length < options.samples; page++) {
      const res = await serviceCall(deepFilters[round % deepFilters.length]!, pageSize || 50, cursor);
      deepRpc.push(res);
      if (!res.next) break;
      cursor = res.next;
    }
  }
  service.push(timing("pages 1-20 by the next link (all, by name, by status)", deepRpc));

  // Exports of exactly 10,000 rows: one first name (a tenth of all), and six days (a tenth of 60) from day 30.
  const exports: ExportTiming[] = [];
  const exportFilters: Array<{ name: string; filter: PaymentsFilter; expected: number }> = [
    { name: "customer name prefix \"Ayşe\"", filter: { customer: "Ayşe" }, expected: options.deposits / FIRST_NAMES.length },
    { name: `date range ${day(30)} to ${day(35)} (6 days)`, filter: { from: day(30), to: day(35) }, expected: options.deposits / 10 },
  ];
  for (const { name, filter, expected } of exportFilters) {
    const query = pageQuery(filter);
    const runs: number[] = [];
    const heads: number[] = [];
    let rows = 0;
    let bytes = 0;
    for (let i = 0; i < options.exports; i++) {
      const started = performance.now();
      const res = await browser.get(`/merchant/payments.csv?${query}`);
      runs.push(performance.now() - started);
      heads.push(res.headersAt - started);
      rows = csvDataRows(res.body);
      bytes = Buffer.byteLength(res.body);
      if (res.status !== 200) problems.push(`export ${name}: answered ${res.status}`);
      else if (!/text\/csv/.test(res.headers.get("content-type") ?? "")) problems.push(`export ${name}: content-type ${res.headers.get("content-type")}`);
      if (rows !== expected) problems.push(`export ${name}: ${rows} data rows, expected ${expected}`);
    }
    const walkStarted = performance.now();
    let walked = 0;
    for (let cursor = "", first = true; first || cursor; first = false) {
      const res = await deposits.listDeposits({ ...serviceRequest(seeded.merchantId, filter), limit: SERVICE_PAGE, cursor });
      walked += res.deposits.length;
      cursor = res.nextCursor;
    }
    const serviceWalkMs = round(performance.now() - walkStarted);
    if (walked !== expected) problems.push(`export ${name}: the service lists ${walked} deposits, expected ${expected}`);
    const sorted = [...runs].sort((a, b) => a - b);
    exports.push({ export: name, query, runs: runs.length, rows, expectedRows: expected, bytes, p50Ms: round(percentile(sorted, 50)), p95Ms: round(percentile(sorted, 95)), maxMs: round(sorted.at(-1) ?? 0), headersP50Ms: round(percentile(heads.sort((a, b) => a - b), 50)), serviceWalkMs });
  }

  return {
    seeded: { deposits: options.deposits, days: DAYS, seedSeconds },
    pages,
    service,
    exports,
    targetListP95Ms: MERCHANT_DASHBOARD_TARGETS.listP95Ms,
    targetExportMs: MERCHANT_DASHBOARD_TARGETS.exportMs,
    problems,
  };
}

/** The scenario on a running product with its console (the all-in-one started with `console`). */
export async function merchantDashboardOn(product: RunningProduct, options: MerchantDashboardOptions): Promise<MerchantDashboardFigures> {
  if (!product.consoleUrl) throw new Error(`the ${product.target} target serves no console`);
  const db = openDatabase({ url: product.databaseUrl("deposit"), poolMax: 2 });
  try {
    const deposits = operatorClient(DepositService, product.serviceUrl("deposit"), product.transport, product.identities);
    return await runMerchantDashboard(db, product, product.consoleUrl, deposits, options);
  } finally {
    await db.destroy();
  }
}
