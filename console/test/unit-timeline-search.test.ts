import test from "ava";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CallbackEventSchema, DeliveryStatus } from "@payments/contracts/callback";
import { DepositSchema } from "@payments/contracts/deposit";
import { AuditRecordSchema } from "@payments/contracts/operator";
import { WithdrawalSchema } from "@payments/contracts/payout";
import { html } from "../src/shared/html.js";
import { rpcText } from "../src/shared/service-texts.js";
import { answer, depositHit, ID, queryOf, quietly, resultsBody, withdrawalHit, type SearchHit } from "../src/shared/search.js";
import { auditEntries, createdEntry, eventEntries, finishedEntry, timelineSection, timelineText, type TimelineEntry } from "../src/shared/timeline.js";
import { koaContext } from "./fixtures/koa-context.js";

/*
 * The payment timeline both sides show (shared/timeline.ts) and the search box's own rules
 * (shared/search.ts): what an id looks like, how a read that fails stays quiet, the results
 * page and the one-hit redirect.
 */

const at = (iso: string) => timestampFromDate(new Date(iso));
const rows = (markup: string) => [...markup.matchAll(/<tr><td>([\s\S]*?)<\/tr>/g)].map((m) => m[1] ?? "");

test("timelineText fills its placeholders and leaves unknown ones as written", (t) => {
  t.is(timelineText("en", "change", { status: "paid", sequence: "2" }), "Status changed: paid (event 2)");
  t.is(timelineText("tr", "change", { status: "ödendi", sequence: "2" }), "Durum değişti: ödendi (olay 2)");
  t.is(timelineText("en", "finished"), "Finished: {status}");
  t.is(timelineText("tr", "approval", { id: "apr_1" }), "apr_1 onayı");
});

test("the timeline is sorted oldest first, whatever order its entries came in", (t) => {
  const entries: TimelineEntry[] = [
    { at: at("2026-12-08T10:00:00Z"), what: "third" },
    { at: at("2026-12-08T08:00:00Z"), what: "first" },
    { at: at("2026-12-08T09:00:00Z"), what: "second" },
  ];
  const out = timelineSection("en", entries).text;
  const order = ["first", "second", "third"].map((w) => out.indexOf(`<td>${w}</td>`));
  t.true(order.every((i) => i > 0));
  t.deepEqual([...order].sort((a, b) => a - b), order);
});

test("an entry without a time comes first and shows a dash", (t) => {
  const out = timelineSection("en", [{ at: at("2026-12-08T10:00:00Z"), what: "later" }, { at: undefined, what: "unknown time" }]).text;
  const [first] = rows(out);
  t.true(first?.startsWith("—</td><td>unknown time</td>"));
});

test("times are written in Türkiye's time with the exact instant in datetime", (t) => {
  const out = timelineSection("tr", [{ at: at("2026-12-07T21:30:00Z"), what: "x" }]).text;
  t.true(out.includes('<time datetime="2026-12-07T21:30:00.000Z">8 Ara 2026 00:30:00</time>'));
});

test("the operators' timeline has a 'By' column, the merchant's has none", (t) => {
  const entries: TimelineEntry[] = [{ at: at("2026-12-08T10:00:00Z"), what: "x", by: "ayse@example.com" }];
  const withBy = timelineSection("en", entries, { withBy: true }).text;
  t.true(withBy.includes('<th scope="col">By</th>'));
  t.true(withBy.includes("<td>ayse@example.com</td>"));
  const without = timelineSection("en", entries).text;
  t.false(without.includes(">By<"));
  t.false(without.includes("ayse@example.com"), "who acted is never shown to a merchant");
});

test("an empty 'by' and an empty detail are dashes", (t) => {
  const out = timelineSection("en", [{ at: undefined, what: "x" }], { withBy: true }).text;
  t.true(out.includes("<td>x</td><td>—</td><td>—</td>"));
});

test("the timeline is a labelled section with a focusable scrolling table, in the page's language", (t) => {
  const tr = timelineSection("tr", []).text;
  t.regex(tr, /^<section aria-labelledby="h-timeline"><h2 id="h-timeline">Zaman çizelgesi<\/h2>/);
  t.true(tr.includes('role="region" aria-label="Olanlar, en eskisi önce" tabindex="0"'));
  t.true(tr.includes("<caption>Olanlar, en eskisi önce</caption>"));
  t.true(tr.includes('<th scope="col">Ne zaman</th><th scope="col">Ne oldu</th><th scope="col">Ayrıntı</th>'));
});

test("a note is shown between the heading and the table", (t) => {
  const out = timelineSection("en", [], { note: html`<p class="notice">audit unreadable</p>` }).text;
  const note = out.indexOf('<p class="notice">audit unreadable</p>');
  t.true(note > out.indexOf("</h2>"));
  t.true(note < out.indexOf("<table>"));
});

test("an entry's texts are escaped", (t) => {
  const out = timelineSection("en", [{ at: undefined, what: "<b>x</b>", by: "<i>", detail: "<script>" }], { withBy: true }).text;
  t.false(out.includes("<script>"));
  t.true(out.includes("&lt;b&gt;x&lt;/b&gt;"));
  t.true(out.includes("&lt;i&gt;"));
});

test("createdEntry and finishedEntry word the start and the end with the final status", (t) => {
  t.is(createdEntry("tr", undefined).what, "Oluşturuldu");
  t.is(createdEntry("en", undefined, "by API").detail, "by API");
  t.is(finishedEntry("en", undefined, "deposit", "completed").what, "Finished: completed");
  t.is(finishedEntry("tr", undefined, "withdrawal", "FAILED").what, "Sonuçlandı: başarısız");
  t.is(finishedEntry("tr", undefined, "deposit", "odd").what, "Sonuçlandı: bilinmeyen durum (odd)");
});

test("each callback event is a status change with its sequence and how its delivery fared", (t) => {
  const events = [
    create(CallbackEventSchema, { type: "deposit.completed", sequence: 3n, deliveryStatus: DeliveryStatus.DELIVERED, createdAt: at("2026-12-08T10:00:00Z") }),
    create(CallbackEventSchema, { type: "withdrawal.failed", sequence: 7n, deliveryStatus: DeliveryStatus.FAILED }),
    create(CallbackEventSchema, { type: "deposit.expired", sequence: 1n, deliveryStatus: DeliveryStatus.PENDING }),
  ];
  const tr = eventEntries("tr", events);
  t.deepEqual(tr.map((e) => [e.what, e.detail]), [
    ["Durum değişti: yatırım: tamamlandı (olay 3)", "teslim edildi"],
    ["Durum değişti: çekim: başarısız (olay 7)", "başarısız"],
    ["Durum değişti: yatırım: süresi doldu (olay 1)", "bekliyor"],
  ]);
  t.is(tr[0]?.at, events[0]?.createdAt);
  t.is(eventEntries("en", events)[0]?.what, "Status changed: deposit: completed (event 3)");
});

test("an event whose delivery status is unspecified is worded as unknown", (t) => {
  const [entry] = eventEntries("en", [create(CallbackEventSchema, { type: "deposit.completed", sequence: 1n })]);
  t.is(entry?.detail, "unknown status (unknown)");
});

test("an operator's audit line names the action, the actor with the role, and the outcome", (t) => {
  const [entry] = auditEntries("tr", [create(AuditRecordSchema, { rpc: "payments.deposit.v1.DepositService/ConfirmDeposit", actor: "ayse@example.com", role: "operator", outcome: "ok", service: "deposit" })]);
  t.is(entry?.what, rpcText("tr", "ConfirmDeposit"));
  t.false(entry?.what.includes("ConfirmDeposit"));
  t.is(entry?.by, "ayse@example.com (operatör)");
  t.is(String(entry?.detail), '<span class="ok">yapıldı</span>');
});

test("an approved run's audit line names the maker too, and links the approval", (t) => {
  const [entry] = auditEntries("en", [create(AuditRecordSchema, { rpc: "S/ConfirmDeposit", actor: "b@x", role: "admin", maker: "a@x", outcome: "ok", service: "deposit", approvalId: "apr_9" })]);
  t.is(entry?.by, "b@x (admin), asked by a@x");
  t.true(String(entry?.detail).includes('<a href="/approvals/deposit/apr_9">approval apr_9</a>'));
});

test("a refused attempt is marked bad, worded by its code, with the operator's reason", (t) => {
  const [entry] = auditEntries("en", [create(AuditRecordSchema, { rpc: "S/ConfirmDeposit", actor: "c@x", outcome: "PERMISSION_DENIED", reason: "<late>" })]);
  const detail = String(entry?.detail);
  t.regex(detail, /^<span class="bad">/);
  t.false(detail.includes("PERMISSION_DENIED</span>"), "the code is worded");
  t.true(detail.includes(" · &lt;late&gt;"), "the reason, escaped");
  t.is(entry?.by, "c@x", "no role, no brackets");
});

test("the search id pattern takes each known prefix and refuses others and odd characters", (t) => {
  for (const prefix of ["dep", "wdr", "trf", "mer", "apr", "trr", "whc"]) {
    t.true(ID.test(`${prefix}_01HZ-abc_9`), prefix);
    t.false(ID.test(`${prefix}_`), `${prefix} alone`);
  }
  for (const text of ["acc_1", "DEP_1", "dep-1", "dep_1 2", "dep_ü", "xdep_1", `dep_${"a".repeat(77)}`]) t.false(ID.test(text), text);
  t.true(ID.test(`dep_${"a".repeat(76)}`));
});

test("quietly answers what the read answered, and undefined when it threw", async (t) => {
  t.is(await quietly(async () => 5), 5);
  t.is(
    await quietly(async () => {
      throw new Error("refused");
    }),
    undefined,
  );
  t.is(await quietly(() => Promise.reject(new Error("away"))), undefined);
});

test("a deposit's hit names the customer first, else its process id, and links its page on each side", (t) => {
  const deposit = create(DepositSchema, { id: "dep_1", processId: "order-7", requestedAmount: 125075n, currency: "TRY", customer: { name: "Ayşe Yılmaz" } });
  t.deepEqual(depositHit(deposit, "tr", ""), { kind: "deposit", id: "dep_1", href: "/deposits/dep_1", name: "Ayşe Yılmaz", detail: "₺1.250,75" });
  const nameless = create(DepositSchema, { id: "dep_2", processId: "order-8", requestedAmount: 100n, currency: "TRY" });
  t.is(depositHit(nameless, "en", "/merchant").name, "order-8");
  t.is(depositHit(nameless, "en", "/merchant").href, "/merchant/deposits/dep_2");
});

test("a withdrawal's hit names the account holder first, else its process id", (t) => {
  const w = create(WithdrawalSchema, { id: "wdr_1", processId: "pay-1", amount: 5000n, currency: "TRY", accountName: "Ali Veli" });
  t.deepEqual(withdrawalHit(w, "en", "/merchant"), { kind: "withdrawal", id: "wdr_1", href: "/merchant/withdrawals/wdr_1", name: "Ali Veli", detail: "TRY\u00a050.00" });
  t.is(withdrawalHit(create(WithdrawalSchema, { id: "wdr_2", processId: "pay-2" }), "tr", "").name, "pay-2");
});

const hit = (n: number): SearchHit => ({ kind: "deposit", id: `dep_${n}`, href: `/deposits/dep_${n}`, name: `Name ${n}`, detail: "₺1,00" });

test("an empty query shows the form and asks what to look for", (t) => {
  const out = resultsBody("en", "", [], "operators").text;
  t.true(out.includes('<form method="get" action="/search" role="search">'));
  t.true(out.includes("<p>Type what you are looking for.</p>"));
});

test("the merchant's search form posts to the merchant's search", (t) => {
  t.true(resultsBody("tr", "", [], "merchant").text.includes('action="/merchant/search"'));
});

test("no hits says nothing was found for the query, escaped, as a status", (t) => {
  const out = resultsBody("tr", "<x>", [], "operators").text;
  t.true(out.includes('<p role="status">“&lt;x&gt;” için bir şey bulunamadı.</p>'));
  t.true(out.includes('value="&lt;x&gt;"'), "the query kept in the box");
});

test("several hits are listed with what, name linked to the page, id and amount", (t) => {
  const out = resultsBody("en", "ayşe", [hit(1), { ...hit(2), kind: "withheld", name: "" }], "operators").text;
  t.true(out.includes('<tr><td>Deposit</td><th scope="row"><a href="/deposits/dep_1">Name 1</a></th><td><code>dep_1</code></td><td class="num">₺1,00</td></tr>'));
  t.true(out.includes('<td>Withheld credit</td><th scope="row"><a href="/deposits/dep_2">dep_2</a></th>'), "a hit without a name shows its id");
  t.true(out.includes("<caption>What was found for “ayşe”</caption>"));
  t.true(out.includes('aria-label="What was found for “ayşe”"'));
});

test("every kind of hit is worded in Turkish", (t) => {
  const kinds: Array<[SearchHit["kind"], string]> = [
    ["deposit", "Yatırma"],
    ["withdrawal", "Çekim"],
    ["transfer", "Gelen havale"],
    ["merchant", "Üye işyeri"],
    ["approval", "Onay"],
    ["return", "Havale iadesi"],
    ["withheld", "Bekletilen alacak"],
  ];
  const out = resultsBody("tr", "q", kinds.map(([kind], i) => ({ ...hit(i), kind })), "operators").text;
  for (const [, word] of kinds) t.true(out.includes(`<td>${word}</td>`), word);
});

test("one hit answers 303 to its page and renders nothing", (t) => {
  const ctx = koaContext({ url: "/search?q=dep_1" });
  let rendered = false;
  answer(ctx, [hit(1)], () => {
    rendered = true;
  });
  t.is(ctx.status, 303);
  t.is(ctx.response.get("Location"), "/deposits/dep_1");
  t.false(rendered);
});

test("no hit and several hits render the results page", (t) => {
  for (const hits of [[], [hit(1), hit(2)]]) {
    const ctx = koaContext({ url: "/search?q=x" });
    let rendered = false;
    answer(ctx, hits, () => {
      rendered = true;
    });
    t.true(rendered, `${hits.length} hits`);
    t.not(ctx.status, 303);
  }
});

test("queryOf trims the query and cuts it at 120 characters; a repeated q is none", (t) => {
  t.is(queryOf(koaContext({ url: "/search?q=%20%20dep_1%20" })), "dep_1");
  t.is(queryOf(koaContext({ url: `/search?q=${"a".repeat(200)}` })).length, 120);
  t.is(queryOf(koaContext({ url: "/search?q=a&q=b" })), "");
  t.is(queryOf(koaContext({ url: "/search" })), "");
});
