import test from "ava";
import { api, Browser, csrfOf, serviceAdminToken, setPasswordThroughLink, signedInBrowser, testConsole } from "./harness.js";

async function newOperator(c: Awaited<ReturnType<typeof testConsole>>, email: string) {
  const res = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email, displayName: "Ayşe", role: "support" } });
  must(res.status === 201, JSON.stringify(res.body));
  return (res.body.link as { url: string; expiresAt: string }).url;
}

function must(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

test("a one-time link sets the password once; the same link then no longer works, and the password signs in", async (t) => {
  const c = await testConsole(t);
  const url = await newOperator(c, "Ayse@Example.com");
  const token = new URL(url).searchParams.get("token") ?? "";
  // Only the SHA-256 of the token is stored.
  const rows = await c.console.context.db("sign_in_links").select<Array<{ token_hash: string }>>("token_hash");
  t.is(rows.length, 1);
  t.not(rows[0]?.token_hash, token);
  t.regex(rows[0]?.token_hash ?? "", /^[0-9a-f]{64}$/);

  const first = await setPasswordThroughLink(c, url, "a long enough password");
  t.is(first.status, 303);
  t.is(first.location, "/sign-in?done=password");
  const again = await setPasswordThroughLink(c, url, "another long password");
  t.is(again.status, 410);

  // The email was stored lower-cased; any case signs in.
  const signedIn = await signedInBrowser(c, "AYSE@example.com", "a long enough password");
  t.is(signedIn.status, 303);
  t.is(signedIn.location, "/");
  t.is((await signedInBrowser(c, "ayse@example.com", "another long password")).status, 401);
});

test("a link is refused after 24 hours, on the page and on submission", async (t) => {
  const c = await testConsole(t);
  const url = await newOperator(c, "mehmet@example.com");
  const browser = new Browser(c);
  const path = new URL(url).pathname + new URL(url).search;
  const page = await browser.get(path);
  t.is(page.status, 200);
  c.clock.advance(24 * 3600 * 1000 + 1);
  t.is((await browser.get(path)).status, 410);
  const late = await browser.post("/set-password", { _csrf: csrfOf(page.html), token: new URL(url).searchParams.get("token") ?? "", password: "a long enough password", confirm: "a long enough password" });
  t.is(late.status, 410);
  const row = (await c.console.context.db("operators").where({ email: "mehmet@example.com" }).first()) as { password_hash: string | null };
  t.is(row.password_hash, null);
});

test("a short password or a mismatched confirmation is refused with the error tied to its field, and the link stays usable", async (t) => {
  const c = await testConsole(t);
  const url = await newOperator(c, "zeynep@example.com");
  const browser = new Browser(c);
  const page = await browser.get(new URL(url).pathname + new URL(url).search);
  const token = new URL(url).searchParams.get("token") ?? "";
  const short = await browser.post("/set-password", { _csrf: csrfOf(page.html), token, password: "too short", confirm: "too short" });
  t.is(short.status, 400);
  t.regex(short.html, /aria-describedby="field-password-error" aria-invalid="true"/);
  t.regex(short.html, /<p class="error" id="field-password-error">/);
  const mismatch = await browser.post("/set-password", { _csrf: csrfOf(page.html), token, password: "a long enough password", confirm: "a long enough passwort" });
  t.is(mismatch.status, 400);
  t.regex(mismatch.html, /id="field-confirm-error"/);
  t.is((await setPasswordThroughLink(c, url, "a long enough password")).status, 303);
});

test("a reset issues a new link, ends the operator's sessions, and makes the earlier link useless", async (t) => {
  const c = await testConsole(t);
  const first = await newOperator(c, "can@example.com");
  const reset = await api(c, "POST", `/api/operators/${encodeURIComponent("can@example.com")}/reset`, { token: await serviceAdminToken(c), body: {} });
  t.is(reset.status, 200);
  t.is((await setPasswordThroughLink(c, first, "a long enough password")).status, 410);
  t.is((await setPasswordThroughLink(c, (reset.body.link as { url: string }).url, "a long enough password")).status, 303);
});
