import test, { type ExecutionContext } from "ava";
import type { Knex } from "knex";
import type { Browser } from "./harness.js";
import { signedInMerchantUser, newMerchant } from "./merchant-harness.js";
import { signedInAs, startStack, type Stack } from "./service-harness.js";
import { filled, isOperatorPage, servedRoutes, type ServedRoute } from "./fixtures/routes.js";

/*
 * Rules every route of the console keeps, walked over the routes its app really serves (read
 * from its router, so a new page is walked without editing this file): a state-changing request
 * without the session's CSRF token is refused before anything happens, a malformed id is 404,
 * each page is a document in the page's language, and a viewer is offered no form it may not use.
 */

let stack: Stack;
let routes: ServedRoute[];
let admin: Browser;
let owner: Browser;
test.before(async () => {
  stack = await startStack();
  routes = servedRoutes(stack.c);
  admin = await signedInAs(stack.c, "routes-admin@example.com", "admin");
  owner = await signedInMerchantUser(stack, await newMerchant(stack), "routes-owner@example.com", "owner");
});
test.after.always(async () => {
  await (stack as Stack | undefined)?.stop();
});

/** Rows of every table of the console's own database: what a refused request must leave as it was. */
async function rowCounts(db: Knex): Promise<Record<string, number>> {
  const tables = (await db("sqlite_master").where({ type: "table" }).whereNot("name", "like", "sqlite_%").whereNot("name", "like", "knex_%").pluck("name")) as string[];
  const out: Record<string, number> = {};
  for (const name of tables) out[name] = Number(((await db(name).count({ n: "*" }).first()) as { n: number | string }).n);
  return out;
}

const merchantSide = (path: string) => /^\/merchant(\/|$)/.test(path);
const changing = (r: ServedRoute) => !["GET", "HEAD", "OPTIONS"].includes(r.method);
const plainPage = (r: ServedRoute) => r.method === "GET" && !r.path.includes(":") && !/\.(csv|css)$/.test(r.path);

async function send(browser: Browser, method: string, path: string) {
  if (method === "POST") return browser.post(path, { reason: "x", amount: "1", email: "x@example.com", role: "viewer" });
  const res = await fetch(`${stack.c.url}${path}`, { method, redirect: "manual" });
  return { status: res.status, location: res.headers.get("location"), html: await res.text() };
}

test.serial("the walk finds the operators' and the merchant dashboard's state-changing routes", (t) => {
  const operatorPosts = routes.filter((r) => changing(r) && isOperatorPage(r.path));
  const merchantPosts = routes.filter((r) => changing(r) && merchantSide(r.path));
  t.true(operatorPosts.length >= 30, `${operatorPosts.length} operator routes`);
  t.true(merchantPosts.length >= 20, `${merchantPosts.length} merchant routes`);
  for (const path of ["/deposits/:id/confirm", "/transfers/:id/resolve", "/merchants/:id/balance/adjust", "/operators/invite"]) t.true(operatorPosts.some((r) => r.path === path), path);
  for (const path of ["/merchant/money/withdrawals", "/merchant/team/invite", "/merchant/developers/rotate-secret"]) t.true(merchantPosts.some((r) => r.path === path), path);
});

/** Every changing route of a side, posted by `browser` without the CSRF token: 403 each, and no row of the console's own written or removed. */
async function refusedWithoutToken(t: ExecutionContext, browser: Browser, side: (path: string) => boolean): Promise<void> {
  const db = stack.c.console.context.db;
  const before = await rowCounts(db);
  for (const route of routes.filter((r) => changing(r) && side(r.path))) {
    const res = await send(browser, route.method, filled(route.path));
    t.is(res.status, 403, `${route.method} ${route.path}`);
  }
  t.deepEqual(await rowCounts(db), before, "no row of the console's own was written or removed");
}

test.serial("every operator route that changes something refuses a signed-in admin's POST without the CSRF token, and nothing changes", async (t) => {
  await refusedWithoutToken(t, admin, isOperatorPage);
  t.is((await admin.get("/")).status, 200, "still signed in: sign-out did not happen");
});

test.serial("a wrong CSRF token is refused like a missing one", async (t) => {
  for (const path of ["/deposits/dep_x/confirm", "/merchants", "/operators/invite", "/sign-out"]) {
    const res = await admin.post(path, { _csrf: "not-the-token", name: "Shop" });
    t.is(res.status, 403, path);
  }
  const header = await admin.post("/merchants", { name: "Shop" }, { "x-csrf-token": "wrong" });
  t.is(header.status, 403, "a wrong header too");
});

test.serial("every merchant dashboard route that changes something refuses an owner's POST without the CSRF token, and nothing changes", async (t) => {
  await refusedWithoutToken(t, owner, merchantSide);
  t.is((await owner.get("/merchant")).status, 200, "still signed in");
});

test.serial("an operator's token does not open a merchant POST, nor a merchant user's an operator POST", async (t) => {
  const adminPage = await admin.get("/merchants");
  const adminToken = /name="_csrf" value="([^"]*)"/.exec(adminPage.html)?.[1] ?? "";
  t.truthy(adminToken);
  const ownerPage = await owner.get("/merchant/team");
  const ownerToken = /name="_csrf" value="([^"]*)"/.exec(ownerPage.html)?.[1] ?? "";
  t.truthy(ownerToken);
  t.is((await owner.post("/merchant/team/invite", { _csrf: adminToken, email: "x@example.com", role: "viewer", name: "X" })).status, 403);
  const cross = await admin.post("/merchants", { _csrf: ownerToken, name: "Shop" });
  t.is(cross.status, 403);
});

/** Ids no service hands out: a space, a slash's escape, markup, one character too many. */
const MALFORMED = ["bad%20id", "a%2Fb", "%3Cscript%3E", "x".repeat(81), "dep_%C3%BC"];

const OPERATOR_DETAILS = ["/deposits/:id", "/withdrawals/:id", "/transfers/:id", "/transfer-returns/:id", "/merchants/:id/balance", "/merchants/:id/users", "/approvals/console/:id", "/events/:id"];

test.serial("each operator detail page answers a malformed id with 404, as a page in the operator's language", async (t) => {
  for (const pattern of OPERATOR_DETAILS) {
    for (const id of MALFORMED) {
      const path = pattern.replace(":id", id);
      const res = await admin.get(`${path}?lang=en`);
      t.is(res.status, 404, path);
      t.regex(res.html, /<html lang="en">/, path);
      t.false(res.html.includes("<script>"), `${path}: the id is never written back as markup`);
    }
  }
});

test.serial("a withheld credit with a malformed merchant id or credit id is 404", async (t) => {
  for (const id of MALFORMED) {
    t.is((await admin.get(`/withheld-credits/${id}/whc_1`)).status, 404, `merchant ${id}`);
    t.is((await admin.get(`/withheld-credits/mer_1/${id}`)).status, 404, `credit ${id}`);
  }
});

test.serial("an approval of a service the console does not know, or with a malformed id, is 404", async (t) => {
  for (const service of ["ledger", "Deposit", "console-x", "%3Cx%3E"]) t.is((await admin.get(`/approvals/${service}/apr_1`)).status, 404, service);
  for (const id of MALFORMED) t.is((await admin.get(`/approvals/deposit/${id}`)).status, 404, id);
});

test.serial("the merchant's payment pages answer a malformed id with 404 in the dashboard's language", async (t) => {
  for (const pattern of ["/merchant/deposits/:id", "/merchant/withdrawals/:id"]) {
    for (const id of MALFORMED) {
      const path = pattern.replace(":id", id);
      const res = await owner.get(`${path}?lang=tr`);
      t.is(res.status, 404, path);
      t.regex(res.html, /<html lang="tr">/, path);
    }
  }
});

test.serial("a well-formed id nobody has is 404 too, on both sides", async (t) => {
  for (const path of ["/deposits/dep_nobody", "/withdrawals/wdr_nobody", "/transfers/trf_nobody", "/events/evt_nobody", "/merchants/mer_nobody/balance"]) t.is((await admin.get(path)).status, 404, path);
  for (const path of ["/merchant/deposits/dep_nobody", "/merchant/withdrawals/wdr_nobody"]) t.is((await owner.get(path)).status, 404, path);
});

async function languageOf(browser: Browser, path: string, lang: "tr" | "en") {
  const res = await browser.get(`${path}?lang=${lang}`);
  return { status: res.status, lang: /<html lang="(\w+)">/.exec(res.html)?.[1], type: res.headers.get("content-type") ?? "" };
}

/** Each page, asked with lang=tr and with lang=en, is a document in that language (an answer that is no HTML page is passed over). */
async function inBothLanguages(t: ExecutionContext, browser: Browser, pages: ReadonlyArray<{ path: string }>): Promise<void> {
  for (const { path } of pages) {
    for (const lang of ["tr", "en"] as const) {
      const page = await languageOf(browser, path, lang);
      if (!page.type.startsWith("text/html")) continue;
      t.is(page.lang, lang, `${path} ?lang=${lang} (${page.status})`);
    }
  }
}

test.serial("every operator page is a document in Turkish with lang=tr and in English with lang=en", async (t) => {
  const pages = routes.filter((r) => plainPage(r) && isOperatorPage(r.path) && !["/sign-in", "/set-password"].includes(r.path));
  t.true(pages.length >= 15, `${pages.length} pages`);
  await inBothLanguages(t, admin, pages);
});

test.serial("the pages before a session are in the asked language too", async (t) => {
  for (const path of ["/sign-in", "/merchant/sign-in", "/set-password?token=x", "/merchant/set-password?token=x"]) {
    for (const lang of ["tr", "en"] as const) {
      const res = await fetch(`${stack.c.url}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`, { redirect: "manual" });
      t.regex(await res.text(), new RegExp(`<html lang="${lang}">`), `${path} ${lang}`);
    }
  }
});

test.serial("every merchant dashboard page is a document in Turkish with lang=tr and in English with lang=en", async (t) => {
  const pages = routes.filter((r) => plainPage(r) && merchantSide(r.path) && !["/merchant/sign-in", "/merchant/set-password"].includes(r.path));
  t.true(pages.length >= 6, `${pages.length} pages`);
  await inBothLanguages(t, owner, pages);
});

test.serial("the language chosen is remembered: a page asked without ?lang stays in it", async (t) => {
  await admin.get("/deposits?lang=en");
  t.regex((await admin.get("/deposits")).html, /<html lang="en">/);
  await admin.get("/deposits?lang=tr");
  t.regex((await admin.get("/deposits")).html, /<html lang="tr">/);
});

/** The actions of the page's POST forms, the header's sign-out left out. */
function postActions(markup: string): string[] {
  const actions = [...markup.matchAll(/<form\b[^>]*>/gi)].filter((m) => /method="post"/i.test(m[0])).map((m) => /action="([^"]*)"/.exec(m[0])?.[1] ?? "");
  return [...new Set(actions)].filter((a) => a !== "/sign-out");
}

test.serial("a viewer reads every operator page it may open and is offered no form it may not use", async (t) => {
  const viewer = await signedInAs(stack.c, "routes-viewer@example.com", "viewer");
  const pages = routes.filter((r) => plainPage(r) && isOperatorPage(r.path) && !["/sign-in", "/set-password", "/statements"].includes(r.path));
  for (const { path } of pages) {
    const res = await viewer.get(`${path}?lang=en`);
    t.true([200, 403].includes(res.status), `${path}: ${res.status}`);
    const allowed = path === "/totp" ? ["/totp"] : [];
    t.deepEqual(postActions(res.html).filter((a) => !allowed.includes(a)), [], path);
  }
});

test.serial("a viewer is refused the admins' and finance's pages with 403", async (t) => {
  const viewer = await signedInAs(stack.c, "routes-viewer2@example.com", "viewer");
  for (const path of ["/operators", "/reconciliation"]) t.is((await viewer.get(path)).status, 403, path);
  const nav = (html: string) => /<nav class="areas"[\s\S]*?<\/nav>/.exec(html)?.[0] ?? "";
  const viewerNav = nav((await viewer.get("/")).html);
  t.notRegex(viewerNav, /href="\/operators"|href="\/reconciliation"/, "the navigation offers a viewer no page it would be refused");
  t.regex(viewerNav, /href="\/deposits"/);
  const admin = await signedInAs(stack.c, "routes-admin-nav@example.com", "admin");
  const adminNav = nav((await admin.get("/")).html);
  t.regex(adminNav, /href="\/operators"/);
  t.regex(adminNav, /href="\/reconciliation"/);
});

test("a viewer is offered no statement upload (it is finance's), and is told so", async (t) => {
  const viewer = await signedInAs(stack.c, "routes-viewer3@example.com", "viewer");
  const page = await viewer.get("/statements?lang=en");
  t.deepEqual(postActions(page.html), []);
  t.regex(page.html, /Importing a statement is finance&#39;s work/);
});
