import test from "ava";
import type { Deposit } from "@payments/contracts/deposit";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
let paid: Deposit;
let paidName: string;
let liveDeposit: Deposit;
stackForTests(test, async (s) => {
  stack = s;
  paid = await merchantDeposit(stack, { sandbox: true, amount: 12_345n });
  paidName = (await stack.merchants.getMerchant({ merchantId: paid.merchantId })).merchant!.name;
  await reportTo(stack, paid, 12_345n, `odeme ${paid.reference}`);
  const short = await merchantDeposit(stack, { sandbox: true });
  await reportTo(stack, short, 1_000n, `odeme ${short.reference}`);
  liveDeposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, liveDeposit, 999n, "stray", "");
  const finance = await signedInAs(stack.c, "fin-home@example.com", "finance");
  await postFrom(finance, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "unknown", iban: "", recipientName: "Someone" });
});

/** The count in a queue's row (the cell may carry a label for small screens). */
const queueCount = (html: string, label: string) => new RegExp(`${label}</a></th>\\s*<td[^>]*class="num"[^>]*>(\\d+)\\+?</td>`).exec(html)?.[1];

test("a viewer's dashboard shows the queues with their oldest age and today's deposits per merchant by name with a chart, for one mode at a time", async (t) => {
  const viewer = await signedInAs(stack.c, "viewer-home@example.com", "viewer");
  const sandbox = await viewer.get("/?lang=en&mode=sandbox");
  t.is(sandbox.status, 200);
  t.is(queueCount(sandbox.html, "Transfers in review"), "1", "the sandbox short payment");
  t.is(queueCount(sandbox.html, "Unmatched transfers"), "0", "the live stray is not sandbox's");
  t.is(queueCount(sandbox.html, "Approvals waiting"), "1");
  t.regex(sandbox.html, /min ago/);
  t.true(sandbox.html.includes("<caption>Today&#39;s deposits per merchant</caption>"));
  t.true(sandbox.html.includes("Today&#39;s deposits per merchant · Sandbox"), "the heading says which mode");
  t.true(sandbox.html.includes("TRY\u00a0123.45"));
  t.regex(sandbox.html, /<svg role="img" aria-labelledby="deposit-chart-title"/);
  t.true(sandbox.html.includes(`<a href="/merchants/${paid.merchantId}">${paidName}</a> <small><code class="id">${paid.merchantId}</code></small>`), "the merchant by name, its id beside it");
  t.regex(sandbox.html, new RegExp(`<text[^>]*>${paidName}</text>`), "the chart's bar is named too");

  const live = await viewer.get("/?lang=en&mode=live");
  t.is(queueCount(live.html, "Transfers in review"), "0");
  t.is(queueCount(live.html, "Unmatched transfers"), "1", "the live stray");
  t.false(live.html.includes("TRY\u00a0123.45"), "live figures never add the sandbox volume");
  t.false(live.html.includes(paid.merchantId), "nor name the sandbox merchant");
  t.true(live.html.includes(`<a href="/merchants/${liveDeposit.merchantId}">`), "today's live deposit is counted");
  t.true(live.html.includes("Today&#39;s deposits per merchant · Live"));
  const tr = await viewer.get("/?lang=tr");
  t.true(tr.html.includes("İncelemedeki havaleler"));
  t.true(tr.html.includes("Üye işyeri başına bugünkü yatırımlar · Canlı"), "the mode is remembered");
});

test("a dashboard without the services shows each part as not answering instead of failing", async (t) => {
  const { testConsole, operatorWithPassword, signedInBrowser } = await import("./harness.js");
  const c = await testConsole(t);
  const { email, password } = await operatorWithPassword(c, { email: "alone@example.com", role: "viewer" });
  const { browser } = await signedInBrowser(c, email, password);
  const page = await browser.get("/?lang=en");
  t.is(page.status, 200);
  t.true(page.html.includes("The service does not answer just now."));
});
