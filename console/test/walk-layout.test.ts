import { gunzipSync, brotliDecompressSync } from "node:zlib";
import { createHash } from "node:crypto";
import test from "ava";
import { html } from "../src/shared/html.js";
import { primerClasses } from "../src/shared/styles-markup.js";
import { stylesheet, stylesheetText } from "../src/shared/styles.js";
import { declarationsOf, usedTokens } from "../src/shared/styles-primer.js";
import { keepWordsWhole, labelTableCells, responsiveTable } from "../src/shared/table.js";
import { testConsole } from "./harness.js";

/*
 * The pieces of the layout the browser walk (walk.test.ts) proves in a real browser, each on its
 * own: the stylesheet built from Primer and served same-origin with its integrity, the Primer
 * classes put on plain markup, the tables' labels for the phone's cards and words kept whole.
 */

test("the stylesheet is Primer's base, buttons, forms and header with the tokens they read, and no rule breaks a word anywhere", (t) => {
  const css = stylesheetText();
  t.regex(css, /\.btn-primary\{/, "Primer's buttons");
  t.regex(css, /\.form-control\{/, "Primer's forms");
  t.regex(css, /\.Header\{/, "Primer's header");
  t.notRegex(css, /overflow-wrap:\s*anywhere|word-break:\s*break-all/, "no word is broken anywhere");
  t.regex(css, /td code,th code\{white-space:nowrap\}/, "ids in cells stay whole");
  // Every token a rule reads without a fallback is declared (a `, var(--legacy)` inside another's fallback is one).
  const declared = new Set([...css.matchAll(/(--[A-Za-z0-9_-]+):/g)].map((m) => m[1]));
  const unfallbacked = [...css.matchAll(/(?<!,\s*)var\((--[A-Za-z0-9_-]+)\)/g)].map((m) => m[1]).filter((name) => !declared.has(name));
  t.deepEqual([...new Set(unfallbacked)], []);
  t.true(css.length < 120_000, `kept small: ${css.length} characters`);
});

test("only the tokens read are kept, following a token that reads another", (t) => {
  const tokens = declarationsOf(":root { --a: var(--b); /** a comment */ --b: 1px; --c: red; }");
  t.deepEqual([...tokens.keys()], ["--a", "--b", "--c"]);
  t.is(usedTokens(".x{width:var(--a)}", tokens), ":root{--a:var(--b);--b:1px}");
});

test("GET /assets/console.<hash>.css: same origin, a year's cache, the integrity the page names, compressed, 304 on its ETag; another name is 404", async (t) => {
  const c = await testConsole(t);
  const sheet = stylesheet();
  const page = await (await fetch(`${c.url}/sign-in`)).text();
  t.true(page.includes(`<link rel="stylesheet" href="${sheet.path}" integrity="${sheet.integrity}">`));
  const plain = await fetch(`${c.url}${sheet.path}`, { headers: { "accept-encoding": "identity" } });
  t.is(plain.status, 200);
  t.is(plain.headers.get("content-type"), "text/css; charset=utf-8");
  t.is(plain.headers.get("cache-control"), "public, max-age=31536000, immutable");
  const body = Buffer.from(await plain.arrayBuffer());
  t.is(`sha384-${createHash("sha384").update(body).digest("base64")}`, sheet.integrity);
  t.is(body.toString("utf8"), stylesheetText());
  const br = await fetch(`${c.url}${sheet.path}`, { headers: { "accept-encoding": "br" } });
  t.is(br.headers.get("content-encoding"), "br");
  t.true(brotliDecompressSync(sheet.br).equals(body) && gunzipSync(sheet.gzip).equals(body));
  t.is((await fetch(`${c.url}${sheet.path}`, { headers: { "if-none-match": plain.headers.get("etag") ?? "" } })).status, 304);
  t.is((await fetch(`${c.url}/assets/console.0000000000000000.css`)).status, 404);
  t.is((await fetch(`${c.url}/assets/..%2Fpackage.json`)).status, 404);
});

test("Primer's classes go on plain controls; a control with a class of its own, a hidden field and a checkbox are left alone", (t) => {
  // Each control and the class its opening tag is given (null: left as it is).
  const controls: Array<[string, string | null]> = [
    ['<button type="submit">Go</button>', "btn btn-primary"],
    ["<button>Go</button>", "btn btn-primary"],
    ['<input type="hidden" name="_csrf" value="x">', null],
    ['<button type="button">x</button>', "btn"],
    ['<input id="a" name="a">', "form-control"],
    ['<input type="checkbox" name="c">', null],
    ['<select name="s"><option>a</option></select>', "form-select"],
    ['<textarea name="t"></textarea>', "form-control"],
    ['<button class="link">x</button>', null],
  ];
  for (const [markup, added] of controls) t.is(primerClasses(markup), added ? markup.replace(/^<(\w+)/, `<$1 class="${added}"`) : markup, markup);
  t.is(primerClasses("<p>&lt;button&gt;</p>"), "<p>&lt;button&gt;</p>", "escaped text is text");
});

test("every body cell of a table with a header row is labelled with its column's heading (colspan counted; a label already there kept)", (t) => {
  const table = '<table><caption>c</caption><thead><tr><th scope="col">Ad</th><th scope="col" colspan="2">Tutar <small>(₺)</small></th><th>Müşteri &quot;adı&quot;</th></tr></thead><tbody><tr><th scope="row">Ayşe</th><td class="num">1</td><td>2</td><td data-label="kendi">x</td></tr></tbody></table>';
  t.is(
    labelTableCells(table),
    '<table><caption>c</caption><thead><tr><th scope="col">Ad</th><th scope="col" colspan="2">Tutar <small>(₺)</small></th><th>Müşteri &quot;adı&quot;</th></tr></thead><tbody><tr><th data-label="Ad" scope="row">Ayşe</th><td data-label="Tutar (₺)" class="num">1</td><td data-label="Tutar (₺)">2</td><td data-label="kendi">x</td></tr></tbody></table>',
  );
  const noHead = "<table><tbody><tr><th>a</th><td>b</td></tr></tbody></table>";
  t.is(labelTableCells(noHead), noHead, "a table without a header row is left as it is");
});

test("a word of a cell is kept whole: a one-word cell is nowrap, other words in spans, ids in code and amounts left as written", (t) => {
  t.is(keepWordsWhole("<table><tbody><tr><td>walk-owner@shop.test</td></tr></tbody></table>"), '<table><tbody><tr><td class="nw">walk-owner@shop.test</td></tr></tbody></table>');
  t.is(
    keepWordsWhole('<table><tbody><tr><td>Bu e-posta ile <code class="id">mer_a-b</code> <a href="/x">trf_a-b</a> <a href="/y">Ege-Tekstil A.Ş.</a></td></tr></tbody></table>'),
    '<table><tbody><tr><td>Bu <span class="nw">e-posta</span> ile <code class="id">mer_a-b</code> <a href="/x" class="nw">trf_a-b</a> <a href="/y"><span class="nw">Ege-Tekstil</span> A.Ş.</a></td></tr></tbody></table>',
  );
  const kept = '<table><tbody><tr><td class="num">-TRY 5.00</td><td><textarea>a-b</textarea><select><option>c-d</option></select><pre>e-f</pre></td></tr></tbody></table>';
  t.is(keepWordsWhole(kept), kept);
  t.is(keepWordsWhole("<p>a-b</p>"), "<p>a-b</p>", "text outside tables is left alone");
});

test("responsiveTable: labelled cells, amounts as numbers, a row heading, secondary data stacked under its column, in a labelled region when asked", (t) => {
  const rows = [{ name: "Anadolu Kitap", amount: "₺1.250,75", ref: "sipariş-1" }];
  const out = responsiveTable({
    caption: "Ödemeler",
    region: "Ödemeler tablosu",
    rows,
    columns: [
      { label: "Üye işyeri", cell: (r) => r.name, rowHeader: true },
      { label: "Referans", cell: (r) => html`<code>${r.ref}</code>`, under: 0 },
      { label: "Tutar", cell: (r) => r.amount, num: true },
    ],
  }).text;
  t.is(
    out,
    '<div class="table-scroll" role="region" aria-label="Ödemeler tablosu" tabindex="0"><table class="responsive"><caption>Ödemeler</caption><thead><tr><th scope="col">Üye işyeri</th><th scope="col" class="num">Tutar</th></tr></thead><tbody><tr><th scope="row" data-label="Üye işyeri">Anadolu Kitap<span class="cell-sub"><span class="cell-sub-label">Referans:</span> <code>sipariş-1</code></span></th><td data-label="Tutar" class="num">₺1.250,75</td></tr></tbody></table></div>',
  );
});
