import test from "ava";
import { NO_ADMIN_CHECK_MS } from "../src/operator/sign-in/index.js";
import { api, Browser, csrfOf, serviceAdminToken, testConsole } from "./harness.js";

// The operators' sign-in page of a console nobody can sign in to yet says, in the page's
// language, how the first admin is made (`pnpm cli operator create … --role admin`, which prints
// the set-password link); once an admin exists it says nothing of it. What it knows of the admins
// is counted at most every NO_ADMIN_CHECK_MS, not on every view.

const hintOf = (html: string) => /<p class="hint" id="first-admin">([\s\S]*?)<\/p>/.exec(html)?.[1];

test("with no admin yet, the sign-in page says how the first is made, in English and in Turkish, also after a failed sign-in", async (t) => {
  const c = await testConsole(t);
  const browser = new Browser(c);

  const en = await browser.get("/sign-in?lang=en");
  t.is(en.status, 200);
  t.is(
    hintOf(en.html),
    "No admin account exists yet. The first is made on the command line, where the console keeps its data: <code>pnpm cli operator create --email you@example.com --name &quot;Your Name&quot; --role admin</code> prints a one-time link where its password is set.",
  );
  // Under the form, not inside it.
  t.true(en.html.indexOf('id="first-admin"') > en.html.indexOf("</form>"));

  const tr = await browser.get("/sign-in?lang=tr");
  t.is(
    hintOf(tr.html),
    "Henüz yönetici hesabı yok. İlki, konsolun verilerini tuttuğu makinede komut satırından açılır: <code>pnpm cli operator create --email siz@ornek.com.tr --name &quot;Adınız Soyadınız&quot; --role admin</code> komutu, parolanın belirleneceği tek kullanımlık bir bağlantı yazdırır.",
  );

  const refused = await browser.post("/sign-in", { _csrf: csrfOf(tr.html), email: "nobody@example.com", password: "not a password at all" });
  t.is(refused.status, 401);
  t.truthy(hintOf(refused.html), "the page that says the sign-in failed says how to make the first account too");
});

test("once an admin exists the hint goes, within NO_ADMIN_CHECK_MS: the count is kept that long, not made per view", async (t) => {
  const c = await testConsole(t);
  const browser = new Browser(c);
  t.truthy(hintOf((await browser.get("/sign-in?lang=en")).html));

  // The first admin, made at once by the key holder (what `pnpm cli operator create --role admin` does at bootstrap).
  const created = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "ayse@example.com", displayName: "Ayşe Yılmaz", role: "admin" } });
  t.is(created.status, 201, JSON.stringify(created.body));

  // Still the count of a moment ago: no query per page view.
  t.truthy(hintOf((await browser.get("/sign-in?lang=en")).html));
  c.clock.advance(NO_ADMIN_CHECK_MS);
  const later = await browser.get("/sign-in?lang=en");
  t.is(later.status, 200);
  t.is(hintOf(later.html), undefined);
  t.notRegex(later.html, /operator create/);
  t.is(hintOf((await browser.get("/sign-in?lang=tr")).html), undefined);
});

test("the merchant dashboard's sign-in never shows the operators' hint", async (t) => {
  const c = await testConsole(t, { CONSOLE_AUDIENCE: "both" });
  const page = await new Browser(c).get("/merchant/sign-in?lang=en");
  t.is(page.status, 200);
  t.is(hintOf(page.html), undefined);
  t.notRegex(page.html, /operator create/);
});
