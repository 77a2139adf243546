import test from "ava";
import { merchantDeposit, postFrom, reportTo, signedInAs, startStack, type Stack } from "./service-harness.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
  const paid = await merchantDeposit(stack, { sandbox: true, amount: 12_345n });
  await reportTo(stack, paid, 12_345n, `odeme ${paid.reference}`);
  const short = await merchantDeposit(stack, { sandbox: true });
  await reportTo(stack, short, 1_000n, `odeme ${short.reference}`);
  const live = await merchantDeposit(stack);
  const stray = await reportTo(stack, live, 999n, "stray", "");
  const finance = await signedInAs(stack.c, "fin-home@example.com", "finance");
  await postFrom(finance, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "unknown", iban: "", recipientName: "Someone" });
});
test.after.always(async () => {
  await (stack as Stack | undefined)?.stop();
});

test("a viewer's dashboard shows the queues with their oldest age and today's deposits per merchant with a chart", async (t) => {
  const viewer = await signedInAs(stack.c, "viewer-home@example.com", "viewer");
  const page = await viewer.get("/?lang=en");
  t.is(page.status, 200);
  t.regex(page.html, /<a href="\/transfers">Transfers in review<\/a><\/th>\s*<td class="num">1<\/td>/);
  t.regex(page.html, /Unmatched transfers<\/a><\/th>\s*<td class="num">1<\/td>/);
  t.regex(page.html, /Approvals waiting<\/a><\/th>\s*<td class="num">1<\/td>/);
  t.regex(page.html, /min ago/);
  t.true(page.html.includes("<caption>Today&#39;s deposits per merchant</caption>"));
  t.true(page.html.includes("TRY\u00a0123.45"));
  t.regex(page.html, /<svg role="img" aria-labelledby="deposit-chart-title"/);
  const tr = await viewer.get("/?lang=tr");
  t.true(tr.html.includes("İncelemedeki havaleler"));
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
