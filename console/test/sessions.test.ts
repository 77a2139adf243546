import test from "ava";
import { csrfOf, operatorWithPassword, signedInBrowser, testConsole } from "./harness.js";

const MINUTE = 60_000;

test("the session cookie is HttpOnly, SameSite=Strict, Path=/ and only a hash of its id is stored", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const res = await fetch(`${c.url}/sign-in`);
  const preCookie = res.headers.getSetCookie()[0] ?? "";
  const csrf = csrfOf(await res.text());
  const signIn = await fetch(`${c.url}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: preCookie.split(";")[0] ?? "" },
    body: new URLSearchParams({ _csrf: csrf, email, password }).toString(),
  });
  const cookie = signIn.headers.getSetCookie().find((line) => line.startsWith("console_session=")) ?? "";
  t.regex(cookie, /; Path=\/; SameSite=Strict; HttpOnly$/);
  t.notRegex(cookie, /Secure/);
  const id = decodeURIComponent(/^console_session=([^;]+)/.exec(cookie)?.[1] ?? "");
  const rows = await c.console.context.db("sessions").select<Array<{ id_hash: string }>>("id_hash");
  t.is(rows.length, 1);
  t.not(rows[0]?.id_hash, id);
});

test("with an https CONSOLE_PUBLIC_URL the session cookie is Secure and __Host- prefixed", async (t) => {
  const c = await testConsole(t, { CONSOLE_PUBLIC_URL: "https://console.example.com" });
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const page = await fetch(`${c.url}/sign-in`);
  const pre = page.headers.getSetCookie()[0] ?? "";
  t.regex(pre, /^__Host-console_csrf=.*; Secure/);
  const res = await fetch(`${c.url}/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pre.split(";")[0] ?? "" },
    body: new URLSearchParams({ _csrf: csrfOf(await page.text()), email, password }).toString(),
  });
  t.regex(res.headers.getSetCookie().find((l) => l.startsWith("__Host-console_session=")) ?? "", /Path=\/; SameSite=Strict; HttpOnly; Secure/);
});

test("a browser session ends after 30 minutes without a request, and is deleted", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const { browser } = await signedInBrowser(c, email, password);
  c.clock.advance(29 * MINUTE);
  t.is((await browser.get("/")).status, 200);
  c.clock.advance(29 * MINUTE);
  t.is((await browser.get("/")).status, 200, "each request restarts the idle time");
  c.clock.advance(30 * MINUTE);
  const idle = await browser.get("/");
  t.is(idle.status, 303);
  t.is(idle.location, "/sign-in");
  t.is(((await c.console.context.db("sessions").count({ n: "*" }).first()) as { n: number }).n, 0);
});

test("a browser session ends 12 hours after sign-in however busy", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const { browser } = await signedInBrowser(c, email, password);
  for (let minutes = 0; minutes < 12 * 60 - 20; minutes += 20) {
    c.clock.advance(20 * MINUTE);
    if ((await browser.get("/")).status !== 200) return t.fail(`ended early, at ${minutes + 20} min`);
  }
  c.clock.advance(20 * MINUTE);
  t.is((await browser.get("/")).location, "/sign-in");
});

test("sign-out deletes the session and records it; the old cookie no longer signs in", async (t) => {
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "a@example.com", role: "viewer" });
  const { browser } = await signedInBrowser(c, email, password);
  const home = await browser.get("/");
  const cookie = browser.cookie("console_session");
  const out = await browser.post("/sign-out", { _csrf: csrfOf(home.html) });
  t.is(out.status, 303);
  t.is(((await c.console.context.db("sessions").count({ n: "*" }).first()) as { n: number }).n, 0);
  const replay = await fetch(`${c.url}/`, { redirect: "manual", headers: { cookie: `console_session=${encodeURIComponent(cookie ?? "")}` } });
  t.is(replay.status, 303);
  const events = await c.console.context.db("sign_in_events").orderBy("id").select<Array<{ event: string }>>("event", "channel");
  t.deepEqual(events.map((e) => e.event).slice(-2), ["sign_in", "sign_out"]);
});

test("every page carries a strict CSP with a fresh nonce, nosniff and no-referrer, and <html lang> follows the language", async (t) => {
  const c = await testConsole(t);
  const first = await fetch(`${c.url}/sign-in`);
  const html = await first.text();
  const csp = first.headers.get("content-security-policy") ?? "";
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1] ?? "";
  t.is(csp, `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'self' 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
  // The one stylesheet is a same-origin file with its integrity hash (shared/styles.ts); no inline style.
  t.regex(html, /<link rel="stylesheet" href="\/assets\/console\.[0-9a-f]{16}\.css" integrity="sha384-[A-Za-z0-9+/=]+">/);
  t.notRegex(html, /<style\b|\sstyle="/);
  t.is(first.headers.get("x-content-type-options"), "nosniff");
  t.is(first.headers.get("referrer-policy"), "no-referrer");
  t.regex(html, /<html lang="tr">/);
  t.notRegex(html, /(src|href)="(https?:)?\/\//, "nothing from another origin");
  const second = await fetch(`${c.url}/sign-in`);
  t.not(/nonce-([^']+)/.exec(second.headers.get("content-security-policy") ?? "")?.[1], nonce);
  const english = await fetch(`${c.url}/sign-in?lang=en`);
  t.regex(await english.text(), /<html lang="en">/);
  t.regex(english.headers.getSetCookie().join("\n"), /console_lang=en/);
  t.regex(await (await fetch(`${c.url}/sign-in`, { headers: { "accept-language": "en-US,en;q=0.9" } })).text(), /<html lang="en">/);
  t.regex(await (await fetch(`${c.url}/sign-in`, { headers: { cookie: "console_lang=en", "accept-language": "tr" } })).text(), /<html lang="en">/);
});
