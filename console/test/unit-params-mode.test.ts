import test, { type ExecutionContext } from "ava";
import { Code } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isMode, MODE_COOKIE, modeMiddleware, modeSwitch, sandboxBanner, sandboxFilter } from "../src/shared/mode.js";
import { cursorParam, dayAfter, dayStart, ID_PATTERN, isServiceName, linkTo, minorUnits, money, queryText, refusalDetail, seeOther, SERVICES, timeOf } from "../src/shared/params.js";
import { koaContext, setCookies } from "./fixtures/koa-context.js";

/*
 * What pages read from a request and write into an answer (shared/params.ts), and the live or
 * sandbox choice (shared/mode.ts): run on real Koa contexts, no server.
 */

test("dayStart is a Türkiye day's midnight, 21:00 UTC the day before", (t) => {
  t.is(dayStart("2026-12-08")?.toISOString(), "2026-12-07T21:00:00.000Z");
  t.is(dayStart("2027-01-01")?.toISOString(), "2026-12-31T21:00:00.000Z");
  t.is(dayStart("2028-02-29")?.toISOString(), "2028-02-28T21:00:00.000Z", "a leap day");
});

test("dayStart refuses anything but YYYY-MM-DD", (t) => {
  for (const text of ["", "2026-1-08", "2026/12/08", "08-12-2026", "2026-12-08T00:00", " 2026-12-08", "2026-12-08 ", "20261208", "abcd-ef-gh", "2026-12-8"]) {
    t.is(dayStart(text), undefined, JSON.stringify(text));
  }
});

test("dayStart refuses days no calendar has", (t) => {
  for (const text of ["2026-13-01", "2026-00-10", "2026-12-32", "2026-12-00", "2026-02-30", "2026-02-29", "2026-04-31"]) {
    t.is(dayStart(text), undefined, text);
  }
});

test("dayAfter is the next Türkiye midnight, so a 'to' day is taken whole", (t) => {
  t.is(dayAfter("2026-12-08")?.toISOString(), "2026-12-08T21:00:00.000Z");
  t.is(dayAfter("2026-12-31")?.toISOString(), "2026-12-31T21:00:00.000Z", "into the new year");
  t.is(dayAfter("2026-02-28")?.toISOString(), "2026-02-28T21:00:00.000Z");
  t.is(dayAfter("2026-02-30"), undefined);
  t.is(dayAfter("nonsense"), undefined);
});

test("dayAfter less dayStart is always one day, Türkiye keeping no summer time", (t) => {
  for (const day of ["2026-03-29", "2026-10-25", "2026-06-01", "2027-01-01"]) {
    const start = dayStart(day);
    const after = dayAfter(day);
    t.truthy(start && after);
    if (start && after) t.is(after.getTime() - start.getTime(), 86_400_000, day);
  }
});

test("cursorParam lets through only a service's cursor alphabet", (t) => {
  t.is(cursorParam("eyJpZCI6ImRlcF8xIn0="), "eyJpZCI6ImRlcF8xIn0=");
  t.is(cursorParam("a-b_c.d:e+f/g=h"), "a-b_c.d:e+f/g=h");
  t.is(cursorParam("x".repeat(2000)), "x".repeat(2000));
});

test("cursorParam drops anything else to an empty cursor", (t) => {
  for (const value of ["", "a b", "<script>", "a\"b", "a&b", "a?b", "a#b", "ü", "x".repeat(2001), undefined, null, 5, ["a", "b"], { a: 1 }]) {
    t.is(cursorParam(value), "", JSON.stringify(value));
  }
});

test("queryText trims, cuts at the limit and drops what is not one string", (t) => {
  t.is(queryText("  hello  "), "hello");
  t.is(queryText("x".repeat(300)), "x".repeat(200));
  t.is(queryText("abcdef", 3), "abc");
  t.is(queryText(["a", "b"]), "", "a repeated parameter is no text");
  t.is(queryText(undefined), "");
  t.is(queryText(42), "");
  t.is(queryText("  Çağrı Şen "), "Çağrı Şen", "Turkish letters kept");
});

test("ID_PATTERN takes the services' ids and nothing that could leave a path or a query", (t) => {
  for (const id of ["dep_abc123", "wdr_X-y_z", "mer_1", "a", "A".repeat(80), "01HZY3-K9"]) t.true(ID_PATTERN.test(id), id);
  for (const id of ["", "A".repeat(81), "dep abc", "dep/abc", "dep.abc", "../etc", "dep%2F", "dep_ü", "dep_1\n", "dep;1", "<x>"]) t.false(ID_PATTERN.test(id), JSON.stringify(id));
});

test("linkTo leaves empty values out and encodes the others", (t) => {
  t.is(linkTo("/deposits", {}), "/deposits");
  t.is(linkTo("/deposits", { status: "", cursor: undefined }), "/deposits");
  t.is(linkTo("/deposits", { status: "pending", merchant: "mer_1" }), "/deposits?status=pending&merchant=mer_1");
  t.is(linkTo("/search", { q: "a&b=c d" }), "/search?q=a%26b%3Dc+d");
  t.is(linkTo("/search", { q: "Çiğdem" }), "/search?q=%C3%87i%C4%9Fdem");
});

test("SERVICES names the five services and isServiceName knows them and only them", (t) => {
  t.deepEqual([...SERVICES].sort(), ["bank-catalog", "callback-sender", "deposit", "merchant", "payout"]);
  for (const name of SERVICES) t.true(isServiceName(name));
  for (const name of ["console", "Deposit", "", "ledger", undefined, 3]) t.false(isServiceName(name), String(name));
});

test("refusalDetail keeps the service's sentence on English pages", (t) => {
  t.is(refusalDetail("en", { code: Code.InvalidArgument, reason: "AMOUNT_INVALID", field: "amount", message: "amount must be positive" }), "amount must be positive");
});

test("refusalDetail words the code and field in Turkish and never shows the English sentence", (t) => {
  const withField = refusalDetail("tr", { code: Code.InvalidArgument, reason: "VALIDATION", field: "amount", message: "amount must be positive" });
  t.false(withField.includes("must be positive"));
  t.regex(withField, /\(.+\)$/, "the field in brackets");
  const bare = refusalDetail("tr", { code: Code.PermissionDenied, message: "forbidden" });
  t.false(bare.includes("forbidden"));
  t.false(bare.includes("PermissionDenied"), "the gRPC code name is worded, not shown");
  t.true(bare.length > 0);
});

test("money is formatMoney: the page's form of an amount in kuruş", (t) => {
  t.is(money(125075n, "TRY", "tr"), "₺1.250,75");
  t.is(money(125075, "TRY", "en"), "TRY\u00a01,250.75");
});

test("minorUnits is parseMoney in the page's language", (t) => {
  t.is(minorUnits("1.250", "tr"), 125000n);
  t.is(minorUnits("1.250", "en"), undefined);
  t.is(minorUnits("1,250", "en"), 125000n);
});

test("timeOf writes a <time> with the exact instant, and nothing when there is none", (t) => {
  t.is(timeOf(undefined, "tr"), null);
  const out = timeOf(timestampFromDate(new Date("2026-12-07T21:30:00Z")), "tr")?.text ?? "";
  t.regex(out, /^<time datetime="2026-12-07T21:30:00.000Z">8 Ara 2026 00:30:00<\/time>$/);
});

test("seeOther answers 303 with the page to show", (t) => {
  const ctx = koaContext({ method: "POST", url: "/deposits/dep_1/confirm" });
  seeOther(ctx, "/deposits/dep_1");
  t.is(ctx.status, 303);
  t.is(ctx.response.get("Location"), "/deposits/dep_1");
});

async function runMode(options: Parameters<typeof koaContext>[0], secure = false) {
  const ctx = koaContext(options);
  let ran = false;
  await modeMiddleware({ secure })(ctx, async () => {
    ran = true;
  });
  return { ctx, ran };
}

/** The default: live, not chosen, and nothing remembered. */
function liveNotChosen(t: ExecutionContext, ctx: Awaited<ReturnType<typeof runMode>>["ctx"]): void {
  t.is(ctx.state.mode, "live");
  t.false(ctx.state.modeChosen);
  t.deepEqual(setCookies(ctx), []);
}

test("isMode knows live and sandbox only; sandboxFilter is true for sandbox only", (t) => {
  t.true(isMode("live"));
  t.true(isMode("sandbox"));
  for (const value of ["Live", "test", "", undefined, ["live"]]) t.false(isMode(value), String(value));
  t.true(sandboxFilter("sandbox"));
  t.false(sandboxFilter("live"));
});

test("with nothing asked nor remembered the mode is live, not chosen, and no cookie is set", async (t) => {
  const { ctx, ran } = await runMode({ url: "/deposits" });
  t.true(ran);
  liveNotChosen(t, ctx);
});

test("?mode=sandbox chooses sandbox and remembers it for a year in a strict, HttpOnly cookie", async (t) => {
  const { ctx } = await runMode({ url: "/deposits?mode=sandbox" });
  t.is(ctx.state.mode, "sandbox");
  t.true(ctx.state.modeChosen);
  const [cookie] = setCookies(ctx);
  t.is(cookie, `${MODE_COOKIE}=sandbox; Path=/; SameSite=Strict; HttpOnly; Max-Age=31536000`);
});

test("the mode cookie is Secure when the deployment is", async (t) => {
  const { ctx } = await runMode({ url: "/?mode=live" }, true);
  t.regex(setCookies(ctx)[0] ?? "", /; Secure;/);
});

test("a remembered mode is used when none is asked, and counts as chosen", async (t) => {
  const { ctx } = await runMode({ url: "/", headers: { cookie: `other=1; ${MODE_COOKIE}=sandbox` } });
  t.is(ctx.state.mode, "sandbox");
  t.true(ctx.state.modeChosen);
  t.deepEqual(setCookies(ctx), [], "nothing new to remember");
});

test("the query wins over the cookie", async (t) => {
  const { ctx } = await runMode({ url: "/?mode=live", headers: { cookie: `${MODE_COOKIE}=sandbox` } });
  t.is(ctx.state.mode, "live");
  t.regex(setCookies(ctx)[0] ?? "", /^console_mode=live;/);
});

test("an unknown mode in the query or the cookie is ignored: live, not chosen, nothing remembered", async (t) => {
  const { ctx } = await runMode({ url: "/?mode=test", headers: { cookie: `${MODE_COOKIE}=everything` } });
  liveNotChosen(t, ctx);
});

test("a repeated mode parameter is no choice", async (t) => {
  const { ctx } = await runMode({ url: "/?mode=sandbox&mode=live" });
  t.is(ctx.state.mode, "live");
  t.false(ctx.state.modeChosen);
});

function switchLinks(markup: string): Array<{ href: string; current: boolean; text: string }> {
  return [...markup.matchAll(/<a href="([^"]*)"( aria-current="true")?>([^<]*)<\/a>/g)].map((m) => ({ href: (m[1] ?? "").replace(/&amp;/g, "&"), current: Boolean(m[2]), text: m[3] ?? "" }));
}

test("on a GET the switch leads to the same page and query in each mode, without the cursor", (t) => {
  const ctx = koaContext({ url: "/deposits?status=pending&cursor=abc&mode=live", state: { mode: "live" } });
  const links = switchLinks(modeSwitch(ctx, "en").text);
  t.deepEqual(links, [
    { href: "/deposits?status=pending&mode=live", current: true, text: "Live" },
    { href: "/deposits?status=pending&mode=sandbox", current: false, text: "Sandbox" },
  ]);
});

test("on a HEAD the switch keeps the page too", (t) => {
  const ctx = koaContext({ method: "HEAD", url: "/withdrawals?merchant=mer_1", state: { mode: "sandbox" } });
  const links = switchLinks(modeSwitch(ctx, "en").text);
  t.is(links[0]?.href, "/withdrawals?merchant=mer_1&mode=live");
  t.true(links[1]?.current);
});

test("on a POST's answer the operators' switch leads home, dropping the form's address and query", (t) => {
  const ctx = koaContext({ method: "POST", url: "/deposits/dep_1/confirm?x=1", state: { mode: "live" } });
  t.deepEqual(switchLinks(modeSwitch(ctx, "en").text).map((l) => l.href), ["/?mode=live", "/?mode=sandbox"]);
});

test("on a POST's answer the merchant's switch leads to the dashboard's home", (t) => {
  const ctx = koaContext({ method: "POST", url: "/merchant/money/withdraw", state: { mode: "sandbox" } });
  t.deepEqual(switchLinks(modeSwitch(ctx, "tr").text).map((l) => l.href), ["/merchant?mode=live", "/merchant?mode=sandbox"]);
});

test("the switch is a labelled navigation in the page's language", (t) => {
  const ctx = koaContext({ url: "/", state: { mode: "live" } });
  const tr = modeSwitch(ctx, "tr").text;
  t.regex(tr, /^<nav class="mode-switch" aria-label="Gösterilen veri">/);
  t.deepEqual(switchLinks(tr).map((l) => l.text), ["Canlı", "Test ortamı"]);
  t.regex(modeSwitch(ctx, "en").text, /aria-label="Data shown"/);
});

test("the switch escapes a query's text in its links", (t) => {
  const ctx = koaContext({ url: "/search?q=%22%3E%3Cscript%3E", state: { mode: "live" } });
  const out = modeSwitch(ctx, "en").text;
  t.false(out.includes("<script>"));
  t.false(out.includes('">'.concat("<script")));
});

test("the sandbox band shows in sandbox mode only, in the page's language", (t) => {
  t.is(sandboxBanner(koaContext({ state: { mode: "live" } }), "en"), null);
  t.is(sandboxBanner(koaContext({ state: { mode: "sandbox" } }), "en")?.text, '<p class="sandbox-band" role="note">Sandbox data: made-up money, nothing here is real.</p>');
  t.regex(sandboxBanner(koaContext({ state: { mode: "sandbox" } }), "tr")?.text ?? "", /Test ortamı verisi/);
});
