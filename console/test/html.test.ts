import test from "ava";
import { html } from "../src/shared/html.js";
import { chooseLanguage } from "../src/shared/i18n.js";

test("html escapes every interpolated text and keeps only its own markup", (t) => {
  const name = `<script>alert("x")</script>' & \``;
  const out = html`<p title="${name}">${name}${html`<b>${name}</b>`}${[name, null, undefined, false]}</p>`.text;
  t.false(out.includes("<script>"));
  t.is(out, `<p title="${"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;"}">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;<b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;</b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;</p>`);
});

test("the language is the explicit choice, else Accept-Language by weight, else Turkish", (t) => {
  t.is(chooseLanguage("en", "tr"), "en");
  t.is(chooseLanguage(undefined, "de-DE, en-GB;q=0.8, tr;q=0.5"), "en");
  t.is(chooseLanguage(undefined, "tr-TR;q=0.9, en;q=0.1"), "tr");
  t.is(chooseLanguage("fr", "de"), "tr");
  t.is(chooseLanguage(undefined, undefined), "tr");
});
