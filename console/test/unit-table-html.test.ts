import test from "ava";
import { escapeHtml, html, SafeHtml, trusted } from "../src/shared/html.js";
import { keepWordsWhole, labelTableCells, responsiveTable, tableScroll, type TableColumn } from "../src/shared/table.js";
import { defineTexts } from "../src/shared/texts.js";

/*
 * The page kit's markup rules: html escaping (shared/html.ts), tables that become cards on a
 * phone and keep words whole (shared/table.ts), and the texts' placeholders (shared/texts.ts).
 */

test("escapeHtml escapes each character that could end an element's text or a quoted attribute", (t) => {
  t.is(escapeHtml("&"), "&amp;");
  t.is(escapeHtml("<"), "&lt;");
  t.is(escapeHtml(">"), "&gt;");
  t.is(escapeHtml('"'), "&quot;");
  t.is(escapeHtml("'"), "&#39;");
  t.is(escapeHtml("`"), "&#96;");
  t.is(escapeHtml("plain Çağrı ₺"), "plain Çağrı ₺", "other characters stay as they are");
});

test("escapeHtml escapes an ampersand once, so an entity typed by someone is shown as typed", (t) => {
  t.is(escapeHtml("&amp;"), "&amp;amp;");
  t.is(escapeHtml("&lt;b&gt;"), "&amp;lt;b&amp;gt;");
});

test("html writes numbers and true as text, and drops null, undefined and false", (t) => {
  t.is(html`${0}|${12.5}|${-3}`.text, "0|12.5|-3");
  t.is(html`${true}`.text, "true");
  t.is(html`[${null}${undefined}${false}]`.text, "[]");
});

test("html flattens nested lists and escapes every text in them", (t) => {
  t.is(html`${["<a>", ["<b>", html`<i>ok</i>`, [null, "&"]]]}`.text, "&lt;a&gt;&lt;b&gt;<i>ok</i>&amp;");
});

test("html keeps markup made by html or trusted, and nothing else, as markup", (t) => {
  const inner = html`<b>${"<x>"}</b>`;
  t.true(inner instanceof SafeHtml);
  t.is(html`${inner}`.text, "<b>&lt;x&gt;</b>");
  t.is(html`${trusted("<style>a{}</style>")}`.text, "<style>a{}</style>");
  const lookalike = { text: "<script>" } as unknown as string;
  t.is(html`${lookalike}`.text, "[object Object]", "an object shaped like SafeHtml is only text");
});

test("a SafeHtml converts to its markup as a string", (t) => {
  t.is(String(html`<p>${"a&b"}</p>`), "<p>a&amp;b</p>");
  t.is(trusted("<hr>").toString(), "<hr>");
});

test("an attribute value cannot be left by a quote, in either kind", (t) => {
  const evil = `" onmouseover="alert(1)' x='`;
  const out = html`<a title="${evil}" data-x='${evil}'>x</a>`.text;
  t.false(out.includes('" onmouseover'));
  t.false(/'\s*x='/.test(out.replace(/^<a title="[^"]*" data-x='/, "")));
  t.is(out, `<a title="&quot; onmouseover=&quot;alert(1)&#39; x=&#39;" data-x='&quot; onmouseover=&quot;alert(1)&#39; x=&#39;'>x</a>`);
});

test("an empty template and one of text only are themselves", (t) => {
  t.is(html``.text, "");
  t.is(html`<p>only</p>`.text, "<p>only</p>");
});

interface Row {
  name: string;
  id: string;
  amount: string;
  note?: string;
}

const columns: Array<TableColumn<Row>> = [
  { label: "Name", cell: (r) => r.name, rowHeader: true },
  { label: "Id", cell: (r) => html`<code>${r.id}</code>` },
  { label: "Amount", cell: (r) => r.amount, num: true },
  { label: "Note", cell: (r) => r.note, under: 0 },
];

test("responsiveTable writes caption, headings and one row per item, each cell labelled with its column", (t) => {
  const out = responsiveTable({ caption: "Payments", columns: columns.slice(0, 3), rows: [{ name: "Ayşe", id: "dep_1", amount: "₺1,00" }] }).text;
  t.is(
    out,
    '<table class="responsive"><caption>Payments</caption><thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col" class="num">Amount</th></tr></thead>' +
      '<tbody><tr><th scope="row" data-label="Name">Ayşe</th><td data-label="Id"><code>dep_1</code></td><td data-label="Amount" class="num">₺1,00</td></tr></tbody></table>',
  );
});

test("responsiveTable puts a column marked 'under' as a labelled line in another column's cell, not a column", (t) => {
  const out = responsiveTable({ caption: "c", columns, rows: [{ name: "Ayşe", id: "dep_1", amount: "1", note: "late" }] }).text;
  t.is((out.match(/<th scope="col"/g) ?? []).length, 3, "three columns shown");
  t.false(out.includes(">Note</th>"));
  t.regex(out, /<th scope="row" data-label="Name">Ayşe<span class="cell-sub"><span class="cell-sub-label">Note:<\/span> late<\/span><\/th>/);
});

test("an empty 'under' value is written as a dash", (t) => {
  for (const note of ["", undefined]) {
    const out = responsiveTable({ caption: "c", columns, rows: [{ name: "A", id: "x", amount: "1", ...(note === undefined ? {} : { note }) }] }).text;
    t.regex(out, /Note:<\/span> —<\/span>/);
  }
});

test("responsiveTable escapes the texts of cells, headings and caption", (t) => {
  const out = responsiveTable({ caption: "<c>", columns: [{ label: "<h>", cell: (r: Row) => r.name }], rows: [{ name: "<script>", id: "", amount: "" }] }).text;
  t.false(out.includes("<script>"));
  t.true(out.includes("<caption>&lt;c&gt;</caption>"));
  t.true(out.includes('data-label="&lt;h&gt;"'));
});

test("responsiveTable with no rows keeps its headings and an empty body", (t) => {
  const out = responsiveTable({ caption: "c", columns: columns.slice(0, 1), rows: [] }).text;
  t.true(out.includes("<tbody></tbody>"));
  t.true(out.includes('<th scope="col">Name</th>'));
});

test("responsiveTable with a region sits in a labelled, focusable scrolling box", (t) => {
  const out = responsiveTable({ caption: "c", columns: columns.slice(0, 1), rows: [], region: "Deposits & more" }).text;
  t.regex(out, /^<div class="table-scroll" role="region" aria-label="Deposits &amp; more" tabindex="0"><table class="responsive">/);
  t.true(out.endsWith("</table></div>"));
});

test("tableScroll wraps any table in the same labelled region", (t) => {
  t.is(tableScroll("L", html`<table></table>`).text, '<div class="table-scroll" role="region" aria-label="L" tabindex="0"><table></table></div>');
});

test("labelTableCells labels every body cell with the last heading row's text, tags dropped", (t) => {
  const table = '<table><thead><tr><th colspan="2">Group</th></tr><tr><th>A <small>(x)</small></th><th>B</th></tr></thead><tbody><tr><td>1</td><th scope="row">2</th></tr></tbody></table>';
  t.is(labelTableCells(table), '<table><thead><tr><th colspan="2">Group</th></tr><tr><th>A <small>(x)</small></th><th>B</th></tr></thead><tbody><tr><td data-label="A (x)">1</td><th data-label="B" scope="row">2</th></tr></tbody></table>');
});

test("labelTableCells counts a heading's colspan as that many columns", (t) => {
  const table = '<table><thead><tr><th colspan="2">When</th><th>What</th></tr></thead><tbody><tr><td>a</td><td>b</td><td>c</td></tr></tbody></table>';
  t.regex(labelTableCells(table), /<td data-label="When">a<\/td><td data-label="When">b<\/td><td data-label="What">c<\/td>/);
});

test("labelTableCells counts a body cell's colspan when it labels the cells after it", (t) => {
  const table = '<table><thead><tr><th>A</th><th>B</th><th>C</th></tr></thead><tbody><tr><td colspan="2">wide</td><td>c</td></tr></tbody></table>';
  t.regex(labelTableCells(table), /<td data-label="A" colspan="2">wide<\/td><td data-label="C">c<\/td>/);
});

test("labelTableCells keeps a label a cell already has and leaves cells past the headings unlabelled", (t) => {
  const table = '<table><thead><tr><th>A</th></tr></thead><tbody><tr><td data-label="Mine">1</td><td>2</td></tr></tbody></table>';
  t.is(labelTableCells(table), table);
});

test("labelTableCells leaves a table holding another table, and text outside tables, as they are", (t) => {
  const nested = "<table><thead><tr><th>A</th></tr></thead><tbody><tr><td><table><tr><td>x</td></tr></table></td></tr></tbody></table>";
  t.is(labelTableCells(nested), nested);
  t.is(labelTableCells("<p><td>not a table</td></p>"), "<p><td>not a table</td></p>");
});

test("labelTableCells labels each table of a page by its own headings", (t) => {
  const page = "<table><thead><tr><th>One</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table><p>x</p><table><thead><tr><th>Two</th></tr></thead><tbody><tr><td>2</td></tr></tbody></table>";
  const out = labelTableCells(page);
  t.true(out.includes('<td data-label="One">1</td>'));
  t.true(out.includes('<td data-label="Two">2</td>'));
});

test("labelTableCells keeps the tbody's and rows' attributes", (t) => {
  const out = labelTableCells('<table><thead><tr><th>A</th></tr></thead><tbody id="b"><tr class="bad"><td>1</td></tr></tbody></table>');
  t.true(out.includes('<tbody id="b"><tr class="bad"><td data-label="A">1</td></tr></tbody>'));
});

const cell = (content: string, attrs = "") => `<table><tbody><tr><td${attrs}>${content}</td></tr></tbody></table>`;

test("keepWordsWhole marks a one-word cell holding a hyphen, a slash or a dash as not to be wrapped", (t) => {
  for (const word of ["siparis-12", "2026-01-31", "a/b", "x\u2013y", "50%off", "a+b", "k=v"]) {
    t.is(keepWordsWhole(cell(word)), `<table><tbody><tr><td class="nw">${word}</td></tr></tbody></table>`, word);
  }
});

test("keepWordsWhole leaves a one-word cell with no break opportunity as it is", (t) => {
  for (const word of ["plain", "12345", "Çağrı", "dep_abc"]) t.is(keepWordsWhole(cell(word)), cell(word), word);
});

test("keepWordsWhole adds nw to a cell's own classes", (t) => {
  t.is(keepWordsWhole(cell("a-b", ' class="ok"')), cell("a-b", ' class="ok nw"'));
});

test("keepWordsWhole wraps only the breakable words of a longer text, keeping the text itself", (t) => {
  const out = keepWordsWhole(cell("paid on 2026-12-08 by Ege-Tekstil"));
  t.is(out, cell('paid on <span class="nw">2026-12-08</span> by <span class="nw">Ege-Tekstil</span>'));
  t.is(out.replace(/<[^>]+>/g, ""), "paid on 2026-12-08 by Ege-Tekstil", "copying the cell gives the same words");
});

test("keepWordsWhole leaves amount cells alone", (t) => {
  const amount = cell("-₺1.250,75 / 3", ' class="num"');
  t.is(keepWordsWhole(amount), amount);
});

test("keepWordsWhole leaves code, pre, textarea, select and option text alone", (t) => {
  for (const inner of ["<code>mer_a-b</code>", "<pre>a-b c/d</pre>", "<textarea>a-b c</textarea>", "<select><option>a-b c</option></select>"]) {
    t.is(keepWordsWhole(cell(`x ${inner}`)), cell(`x ${inner}`), inner);
  }
});

test("keepWordsWhole gives a one-word link the nw class and wraps words of a longer link's text", (t) => {
  t.is(keepWordsWhole(cell('see <a href="/x">trf_a-b</a>')), cell('see <a href="/x" class="nw">trf_a-b</a>'));
  t.is(keepWordsWhole(cell('see <a href="/y">Ege-Tekstil A.Ş.</a>')), cell('see <a href="/y"><span class="nw">Ege-Tekstil</span> A.Ş.</a>'));
  t.is(keepWordsWhole(cell('<a href="/z">plain name</a> and more')), cell('<a href="/z">plain name</a> and more'), "a link without a break opportunity is kept");
});

test("keepWordsWhole does not touch a link's address, only its text", (t) => {
  const out = keepWordsWhole(cell('go <a href="/deposits/dep_1-2?x=a-b">open</a> now'));
  t.true(out.includes('href="/deposits/dep_1-2?x=a-b"'));
  t.false(out.includes('<span class="nw">/deposits'));
});

test("keepWordsWhole treats heading cells as it treats data cells", (t) => {
  t.is(keepWordsWhole("<table><tbody><tr><th scope=\"row\">e-posta</th></tr></tbody></table>"), '<table><tbody><tr><th scope="row" class="nw">e-posta</th></tr></tbody></table>');
});

test("keepWordsWhole leaves a table holding another table as it is", (t) => {
  const nested = "<table><tbody><tr><td>a-b <table><tr><td>c-d</td></tr></table></td></tr></tbody></table>";
  t.is(keepWordsWhole(nested), nested);
});

test("keepWordsWhole keeps the visible text of every cell it changes", (t) => {
  const before = cell('paid 2026-12-08 to <a href="/x">trf_a-b</a> for a/b');
  t.is(keepWordsWhole(before).replace(/<[^>]+>/g, ""), before.replace(/<[^>]+>/g, ""));
});

const texts = defineTexts({ hello: "Hello {name}, {n} new", plain: "Plain" }, { hello: "Merhaba {name}, {n} yeni", plain: "Düz" });

test("defineTexts fills placeholders from the params, numbers too, in the page's language", (t) => {
  t.is(texts("en", "hello", { name: "Ayşe", n: 3 }), "Hello Ayşe, 3 new");
  t.is(texts("tr", "hello", { name: "Ayşe", n: 0 }), "Merhaba Ayşe, 0 yeni");
  t.is(texts("tr", "plain"), "Düz");
});

test("defineTexts leaves a placeholder it was not given as written", (t) => {
  t.is(texts("en", "hello", { name: "A" }), "Hello A, {n} new");
  t.is(texts("en", "hello"), "Hello {name}, {n} new");
});

test("defineTexts puts a param's text in as it is, without reading placeholders inside it", (t) => {
  t.is(texts("en", "hello", { name: "{n}", n: 1 }), "Hello {n}, 1 new");
});
