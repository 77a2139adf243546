import test from "ava";
import { totpCode } from "../src/identity/totp.js";
import { api, csrfOf, operatorWithPassword, signedInBrowser, testConsole } from "./harness.js";

/** The base32 key the enrolment page shows (grouped by four). */
function keyOf(html: string): string {
  const match = /<dt>[^<]+<\/dt><dd><code>([A-Z2-7 ]+)<\/code><\/dd>/.exec(html);
  if (!match?.[1]) throw new Error("no key on the page");
  return match[1].replace(/ /g, "");
}

test("with CONSOLE_REQUIRE_TOTP=1 an admin must enrol TOTP before anything else; then sign-in needs the code, once per code", async (t) => {
  const c = await testConsole(t, { CONSOLE_REQUIRE_TOTP: "1", CONSOLE_TOTP_KEY: "11".repeat(32) });
  const { email, password } = await operatorWithPassword(c, { email: "admin@example.com", role: "admin" });

  const first = await signedInBrowser(c, email, password);
  t.is(first.status, 303);
  t.is(first.location, "/totp");
  const { browser } = first;
  t.is((await browser.get("/")).location, "/totp", "every other page sends the admin to enrolment");
  const enrol = await browser.get("/totp");
  t.is(enrol.status, 200);
  const key = keyOf(enrol.html);
  t.regex(enrol.html, /otpauth:\/\/totp\//);

  t.is((await browser.post("/totp", { _csrf: csrfOf(enrol.html), code: "000000" })).status, 400);
  const code = totpCode(key, c.clock.now());
  const confirmed = await browser.post("/totp", { _csrf: csrfOf(enrol.html), code });
  t.is(confirmed.status, 303);
  t.is((await browser.get("/")).status, 200, "enrolled: the console opens");
  const stored = (await c.console.context.db("operators").where({ email }).first()) as { totp_secret: string };
  t.true(stored.totp_secret.startsWith("v1."), "sealed at rest with CONSOLE_TOTP_KEY");
  t.false(stored.totp_secret.includes(key));

  // The next sign-in needs the code: without it, asked for; the code used at enrolment is not accepted again.
  const noCode = await signedInBrowser(c, email, password);
  t.is(noCode.status, 401);
  t.is((await signedInBrowser(c, email, password, code)).status, 401, "a code is accepted once");
  c.clock.advance(30_000);
  const withCode = await signedInBrowser(c, email, password, totpCode(key, c.clock.now()));
  t.is(withCode.status, 303);
  t.is(withCode.location, "/");

  // The CLI takes the code too.
  c.clock.advance(30_000);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: { email, password } })).status, 401);
  t.is((await api(c, "POST", "/api/cli/sessions", { body: { email, password, totp: totpCode(key, c.clock.now()) } })).status, 201);
});

test("with CONSOLE_REQUIRE_TOTP=1 a finance account without TOTP cannot get a CLI session; a viewer needs none", async (t) => {
  const c = await testConsole(t, { CONSOLE_REQUIRE_TOTP: "1" });
  const finance = await operatorWithPassword(c, { email: "fin@example.com", role: "finance" });
  const refused = await api(c, "POST", "/api/cli/sessions", { body: finance });
  t.is(refused.status, 403);
  t.is((refused.body.error as { code: string }).code, "TOTP_ENROLMENT_REQUIRED");
  const viewer = await operatorWithPassword(c, { email: "view@example.com", role: "viewer" });
  t.is((await api(c, "POST", "/api/cli/sessions", { body: viewer })).status, 201);
  const page = await signedInBrowser(c, viewer.email, viewer.password);
  t.is(page.location, "/");
});

test("without CONSOLE_REQUIRE_TOTP an admin is not sent to enrolment, and may enrol by choice", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "admin@example.com", role: "admin" });
  const { browser, location } = await signedInBrowser(c, email, password);
  t.is(location, "/");
  t.is((await browser.get("/")).status, 200);
  t.is((await browser.get("/totp")).status, 200);
});
