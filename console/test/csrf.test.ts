import test from "ava";
import { Browser, csrfOf, operatorWithPassword, signedInBrowser, testConsole } from "./harness.js";

test("a signed-in POST without the session's CSRF token, or with a wrong one, is refused with 403 and changes nothing", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const { browser } = await signedInBrowser(c, email, password);
  const home = await browser.get("/");
  t.is(home.status, 200);

  t.is((await browser.post("/sign-out", {})).status, 403);
  t.is((await browser.post("/sign-out", { _csrf: "not-the-token" })).status, 403);
  t.is((await browser.get("/")).status, 200, "still signed in: sign-out did not happen");
  t.is(((await c.console.context.db("sessions").count({ n: "*" }).first()) as { n: number }).n, 1);

  // The enrolment confirmation is refused the same way: no TOTP secret is stored.
  await browser.get("/totp");
  t.is((await browser.post("/totp", { code: "123456" })).status, 403);
  const row = (await c.console.context.db("operators").where({ email }).first()) as { totp_secret: string | null };
  t.is(row.totp_secret, null);

  // The header works as well as the field.
  const res = await fetch(`${c.url}/sign-out`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: `console_session=${encodeURIComponent(browser.cookie("console_session") ?? "")}`, "x-csrf-token": csrfOf(home.html) },
  });
  t.is(res.status, 303);
});

test("the sign-in form needs its pre-session CSRF cookie and field to match: a cross-site post is refused and not even recorded", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const noCookie = await fetch(`${c.url}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: "forged", email, password }).toString(),
  });
  t.is(noCookie.status, 403);
  t.falsy(noCookie.headers.getSetCookie().find((l) => l.startsWith("console_session=")));
  const browser = new Browser(c);
  await browser.get("/sign-in");
  t.is((await browser.post("/sign-in", { _csrf: "forged", email, password })).status, 403);
  t.is(((await c.console.context.db("sign_in_events").whereIn("event", ["sign_in", "sign_in_failed"]).count({ n: "*" }).first()) as { n: number }).n, 0);
});
