import test from "ava";
import { LANGUAGE_COOKIE } from "../src/cookies.js";
import { language } from "../src/middleware/language.js";
import { html } from "../src/shared/html.js";
import { chooseLanguage, DEFAULT_LANGUAGE, isLanguage, LANGUAGES } from "../src/shared/i18n.js";
import { alert, field, htmlDocument, notice, styledContent } from "../src/shared/layout.js";
import { primerClasses } from "../src/shared/styles-markup.js";
import { koaContext, setCookies } from "./fixtures/koa-context.js";

/*
 * The page shell both sides share (shared/layout.ts), the language it is written in
 * (shared/i18n.ts, middleware/language.ts) and Primer's classes on plain markup
 * (shared/styles-markup.ts), beyond what test/walk-layout.test.ts and test/html.test.ts check.
 */

test("the console speaks Turkish and English, Turkish by default", (t) => {
  t.deepEqual([...LANGUAGES], ["tr", "en"]);
  t.is(DEFAULT_LANGUAGE, "tr");
  t.true(isLanguage("tr"));
  t.true(isLanguage("en"));
  for (const value of ["TR", "en-GB", "de", "", undefined, ["en"]]) t.false(isLanguage(value), String(value));
});

test("Accept-Language is read by its region-free language, ignoring case", (t) => {
  t.is(chooseLanguage(undefined, "EN-us"), "en");
  t.is(chooseLanguage(undefined, "tr-TR"), "tr");
});

test("a language of weight zero is never chosen", (t) => {
  t.is(chooseLanguage(undefined, "en;q=0, de"), "tr");
  t.is(chooseLanguage(undefined, "en;q=0.0, tr;q=0"), "tr", "both refused: the default");
});

test("equal weights keep the header's order", (t) => {
  t.is(chooseLanguage(undefined, "en;q=0.5, tr;q=0.5"), "en");
  t.is(chooseLanguage(undefined, "tr, en"), "tr");
});

test("a language the console does not speak is passed over for the next it does", (t) => {
  t.is(chooseLanguage(undefined, "fr-FR, de;q=0.9, en;q=0.2"), "en");
  t.is(chooseLanguage(undefined, "*"), "tr");
});

test("a malformed Accept-Language falls back to Turkish without failing", (t) => {
  for (const header of [";;;", ",,,", "q=1", "en;q=abc", "   "]) t.notThrows(() => chooseLanguage(undefined, header), header);
  t.is(chooseLanguage(undefined, ",,,"), "tr");
});

test("an explicit choice wins over Accept-Language; an invalid one does not count", (t) => {
  t.is(chooseLanguage("tr", "en"), "tr");
  t.is(chooseLanguage("xx", "en"), "en");
});

async function runLanguage(options: Parameters<typeof koaContext>[0], secure = false) {
  const ctx = koaContext(options);
  await language({ secure })(ctx, async () => undefined);
  return ctx;
}

test("?lang= chooses the language and remembers it for a year", async (t) => {
  const ctx = await runLanguage({ url: "/deposits?lang=en", headers: { "accept-language": "tr" } });
  t.is(ctx.state.lang, "en");
  t.deepEqual(setCookies(ctx), [`${LANGUAGE_COOKIE}=en; Path=/; SameSite=Strict; HttpOnly; Max-Age=31536000`]);
});

test("the language cookie is Secure when the deployment is", async (t) => {
  const ctx = await runLanguage({ url: "/?lang=tr" }, true);
  t.regex(setCookies(ctx)[0] ?? "", /; Secure;/);
});

test("the remembered language wins over Accept-Language", async (t) => {
  const ctx = await runLanguage({ url: "/", headers: { cookie: `${LANGUAGE_COOKIE}=en`, "accept-language": "tr" } });
  t.is(ctx.state.lang, "en");
  t.deepEqual(setCookies(ctx), []);
});

test("an unknown ?lang= is ignored and not remembered", async (t) => {
  const ctx = await runLanguage({ url: "/?lang=de", headers: { "accept-language": "en" } });
  t.is(ctx.state.lang, "en");
  t.deepEqual(setCookies(ctx), []);
});

test("with nothing said the page is Turkish", async (t) => {
  t.is((await runLanguage({ url: "/" })).state.lang, "tr");
});

test("primerClasses marks each kind of text input and leaves the others", (t) => {
  for (const type of ["text", "email", "password", "search", "date", "datetime-local", "number", "url"]) {
    t.is(primerClasses(`<input type="${type}">`), `<input class="form-control" type="${type}">`, type);
  }
  for (const type of ["hidden", "checkbox", "radio", "file", "submit", "button", "reset", "image", "range", "color"]) {
    t.is(primerClasses(`<input type="${type}">`), `<input type="${type}">`, type);
  }
});

test("primerClasses makes a reset button a plain button and a bare input a text field", (t) => {
  t.is(primerClasses('<button type="reset">x</button>'), '<button class="btn" type="reset">x</button>');
  t.is(primerClasses("<input>"), '<input class="form-control">');
});

test("primerClasses leaves other elements, closing tags and look-alike names alone", (t) => {
  for (const markup of ["<p>x</p>", "</button>", "<buttonx>", "<inputs>", "<a class=\"btn\">x</a>", "<option>x</option>"]) t.is(primerClasses(markup), markup);
});

test("primerClasses does every control of a form", (t) => {
  const out = primerClasses('<form><input name="a"><select name="s"></select><textarea></textarea><button>Go</button></form>');
  t.is(out, '<form><input class="form-control" name="a"><select class="form-select" name="s"></select><textarea class="form-control"></textarea><button class="btn btn-primary">Go</button></form>');
});

test("styledContent labels the cells, keeps words whole and puts Primer's classes on, all at once", (t) => {
  const out = styledContent(html`<table><thead><tr><th>Ref</th></tr></thead><tbody><tr><td>siparis-12</td></tr></tbody></table><button>Go</button>`).text;
  t.is(out, '<table><thead><tr><th>Ref</th></tr></thead><tbody><tr><td data-label="Ref" class="nw">siparis-12</td></tr></tbody></table><button class="btn btn-primary">Go</button>');
});

test("field writes a labelled text input with its id from its name", (t) => {
  const out = field({ name: "email", label: "E-posta", type: "email", value: "a@b", autocomplete: "email", required: true }).text;
  t.true(out.startsWith('<label for="field-email">E-posta</label>'));
  t.true(out.includes('<input class="form-control" id="field-email" name="email" type="email" value="a@b" autocomplete="email" required>'));
  t.false(out.includes("aria-describedby"));
  t.false(out.includes("aria-invalid"));
});

test("field ties its hint and error to the input and marks it invalid", (t) => {
  const out = field({ name: "amount", id: "adj-amount", label: "Tutar", hint: "₺ olarak", error: "Geçersiz", inputmode: "decimal" }).text;
  t.true(out.includes('<p class="hint" id="adj-amount-hint">₺ olarak</p>'));
  t.true(out.includes('<p class="error" id="adj-amount-error">Geçersiz</p>'));
  t.true(out.includes('inputmode="decimal"'));
  t.true(out.includes('aria-describedby="adj-amount-hint adj-amount-error" aria-invalid="true"'));
});

test("field leaves the value out when none is given, and escapes one that is", (t) => {
  t.false(field({ name: "q", label: "Q" }).text.includes("value="));
  t.true(field({ name: "q", label: "Q", value: '"><script>' }).text.includes('value="&quot;&gt;&lt;script&gt;"'));
  t.true(field({ name: "q", label: "Q", value: "" }).text.includes('value=""'), "an empty value is still written");
});

test("alert and notice are announced, and nothing without a message", (t) => {
  t.is(alert("Olmadı <x>")?.text, '<div class="alert" role="alert">Olmadı &lt;x&gt;</div>');
  t.is(notice("Tamam")?.text, '<div class="notice" role="status">Tamam</div>');
  t.is(alert(undefined), null);
  t.is(alert(""), null);
  t.is(notice(undefined), null);
});

const shellText = (key: "app.title" | "nav.skip" | "nav.language") => ({ "app.title": "Ödeme konsolu", "nav.skip": "İçeriğe geç", "nav.language": "Dil" })[key];

function documentFor(url: string, state: Record<string, unknown>, signedIn: boolean, script = false): string {
  const ctx = koaContext({ url, state: { lang: "tr", mode: "live", nonce: "n0nce", ...state } });
  return htmlDocument(ctx, { title: "Yatırımlar <1>", body: html`<p>gövde</p>`, shellText, signedIn: signedIn ? html`<nav>menü</nav>` : null, ...(script ? { script: html`var a = 1;` } : {}) });
}

test("the document is in the page's language, titled by the page and the application, escaped", (t) => {
  const out = documentFor("/deposits", {}, false);
  t.true(out.startsWith("<!doctype html>\n<html lang=\"tr\">"));
  t.true(out.includes("<title>Yatırımlar &lt;1&gt; · Ödeme konsolu</title>"));
  t.true(out.includes("<h1>Yatırımlar &lt;1&gt;</h1>"));
  t.true(out.includes('<a class="skip" href="#main">İçeriğe geç</a>'));
  t.true(out.includes('<main id="main" tabindex="-1">'));
  t.regex(documentFor("/", { lang: "en" }, false), /<html lang="en">/);
});

test("the document links the stylesheet with its integrity and no inline style", (t) => {
  const out = documentFor("/", {}, false);
  t.regex(out, /<link rel="stylesheet" href="\/assets\/console\.[0-9a-f]+\.css" integrity="sha384-[A-Za-z0-9+/=]+">/);
  t.false(out.includes("<style"));
});

test("before sign-in there is no mode switch and no sandbox band, even in sandbox mode", (t) => {
  const out = documentFor("/sign-in", { mode: "sandbox" }, false);
  t.false(out.includes("mode-switch"));
  t.false(out.includes("sandbox-band"));
});

test("signed in, the header has the mode switch, and the sandbox band shows in sandbox mode", (t) => {
  const live = documentFor("/deposits", { mode: "live" }, true);
  t.true(live.includes('<nav class="mode-switch"'));
  t.true(live.includes("<nav>menü</nav>"));
  t.false(live.includes("sandbox-band"));
  t.true(documentFor("/deposits", { mode: "sandbox" }, true).includes('class="sandbox-band"'));
});

test("the language switcher keeps the page and its query, marks the current language and names each in itself", (t) => {
  const out = documentFor("/deposits?status=pending", { lang: "tr" }, false);
  t.true(out.includes('<nav aria-label="Dil"><ul>'));
  t.true(out.includes('<a href="/deposits?status=pending&amp;lang=tr" lang="tr" hreflang="tr" aria-current="true">Türkçe</a>'));
  t.true(out.includes('<a href="/deposits?status=pending&amp;lang=en" lang="en" hreflang="en">English</a>'));
});

test("a page's script carries the request's nonce; a page without one has no script", (t) => {
  t.true(documentFor("/", {}, false, true).includes('<script nonce="n0nce">var a = 1;</script>'));
  t.false(documentFor("/", {}, false).includes("<script"));
});

test("the header takes a side's own class beside Primer's", (t) => {
  const ctx = koaContext({ url: "/merchant", state: { lang: "en", mode: "live" } });
  const out = htmlDocument(ctx, { title: "T", body: html``, shellText, signedIn: null, headerClass: "merchant-header" });
  t.true(out.includes('<header class="Header console-header merchant-header">'));
  const plain = htmlDocument(ctx, { title: "T", body: html``, shellText, signedIn: null });
  t.true(plain.includes('<header class="Header console-header">'));
});
