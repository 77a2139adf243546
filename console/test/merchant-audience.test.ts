import test from "ava";
import { startConsole } from "../src/index.js";
import { api, Browser, serviceAdminToken, testConsole } from "./harness.js";

// CONSOLE_AUDIENCE: the side a console does not serve does not exist (404), pages, sign-in and APIs alike.

const OPERATOR_PAGES = ["/", "/sign-in", "/set-password?token=x", "/deposits", "/merchants", "/audit", "/totp"];
const MERCHANT_PAGES = ["/merchant/sign-in", "/merchant/set-password?token=x", "/merchant/team", "/merchant/team/audit"];

async function statuses(browser: Browser, paths: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const path of paths) out[path] = (await browser.get(path)).status;
  return out;
}

test("operators (the split console's default): the merchant dashboard is 404; the operators' side answers", async (t) => {
  const c = await testConsole(t);
  t.is(c.console.config.CONSOLE_AUDIENCE, "operators");
  const browser = new Browser(c);
  for (const [path, status] of Object.entries(await statuses(browser, MERCHANT_PAGES))) t.is(status, 404, path);
  t.is((await browser.post("/merchant/sign-in", { email: "a@b.test", password: "x" })).status, 404);
  t.is((await browser.get("/sign-in")).status, 200);
  t.is((await browser.get("/deposits")).status, 303, "a page of work sends to sign-in");
  t.is((await api(c, "POST", "/api/cli/sessions", { body: { email: "a@b.test", password: "nope" } })).status, 401);
  t.is((await api(c, "GET", "/api/merchants/mer_1/users", { token: await serviceAdminToken(c) })).status, 200);
  t.is((await browser.get("/livez")).status, 200);
});

test("merchants: operator pages, operator sign-in, the CLI's session API and the admin API are 404; / goes to /merchant", async (t) => {
  const c = await testConsole(t, { CONSOLE_AUDIENCE: "merchants" });
  const browser = new Browser(c);
  const root = await browser.get("/");
  t.is(root.status, 303);
  t.is(root.location, "/merchant");
  for (const [path, status] of Object.entries(await statuses(browser, OPERATOR_PAGES.filter((p) => p !== "/")))) t.is(status, 404, path);
  t.is((await browser.post("/sign-in", { email: "a@b.test", password: "x" })).status, 404);
  t.is((await browser.post("/sign-out", {})).status, 404);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: { email: "a@b.test", password: "nope" } })).status, 404);
  const token = await serviceAdminToken(c);
  t.is((await api(c, "GET", "/api/operators", { token })).status, 404);
  t.is((await api(c, "POST", "/api/operators", { token, body: { email: "x@y.test", displayName: "x", role: "admin" } })).status, 404);
  t.is((await api(c, "POST", "/api/merchants/mer_1/users", { token, body: { email: "x@y.test", role: "owner" } })).status, 404);
  t.is((await browser.get("/merchant/sign-in")).status, 200);
  t.is((await browser.get("/merchant/team")).status, 303, "a merchant page sends to the merchant sign-in");
  t.is((await browser.get("/merchant/team")).location, "/merchant/sign-in");
  t.is((await browser.get("/livez")).status, 200);
});

test("both (the all-in-one): each side answers", async (t) => {
  const c = await testConsole(t, { CONSOLE_AUDIENCE: "both" });
  const browser = new Browser(c);
  t.is((await browser.get("/sign-in")).status, 200);
  t.is((await browser.get("/merchant/sign-in")).status, 200);
  t.is((await browser.get("/")).location, "/sign-in", "/ is the operators' home when they are served");
  t.is((await api(c, "GET", "/api/operators", { token: await serviceAdminToken(c) })).status, 200);
});

test("an unknown CONSOLE_AUDIENCE is a configuration error at start", async (t) => {
  const error = await t.throwsAsync(startConsole({ env: { CONSOLE_PORT: "0", LOG_LEVEL: "silent", CONSOLE_AUDIENCE: "everyone", DATA_DIR: "/tmp/never-made" }, assertionPrivateKey: "x" }));
  t.regex(error.message, /CONSOLE_AUDIENCE/);
});
