import test from "ava";
import { eventually } from "@payments/testing";
import { formatDay } from "../src/shared/format.js";
import { merchantUserAccount, merchantSignIn, newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { merchantDeposit, reportTo, type Stack, stackForTests } from "./service-harness.js";

// The merchant dashboard's Home (issue 24): the balance, today and the last 30 days of one
// merchant's own payments, charts drawn on the server with their tables; TR and EN.
let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

let n = 0;
async function paidDeposit(merchantId: string, amount: bigint): Promise<string> {
  const { deposit } = await stack.deposits.createDeposit({ merchantId, processId: `home-${++n}`, amount, customer: { id: `c${n}`, name: "Ayşe Yılmaz", username: "ayse" } });
  await stack.deposits.sandboxPayDeposit({ merchantId, depositId: deposit!.id });
  return deposit!.id;
}

test("a viewer sees the balance, today's and the month's numbers and two charts with their tables, only of its own merchant", async (t) => {
  const shop = await newMerchant(stack);
  const other = await newMerchant(stack);
  await paidDeposit(shop, 1500_00n);
  await paidDeposit(shop, 250_50n);
  await stack.deposits.createDeposit({ merchantId: shop, processId: `home-${++n}`, amount: 99_00n, customer: { id: "p", name: "Pending Person", username: "p" } });
  await paidDeposit(other, 7777_00n);
  const browser = await signedInMerchantUser(stack, shop, "viewer-home@shop.test", "viewer");

  const en = await browser.get("/merchant?lang=en&mode=sandbox");
  t.is(en.status, 200);
  t.regex(en.html, /<h1>Home<\/h1>/);
  t.regex(en.html, /Available/);
  t.regex(en.html, /TRY(?:<\/span>)?\s1,750\.50/, "completed volume of the two paid deposits, as formatMoney writes it");
  t.notRegex(en.html, /7777/, "another merchant's deposit is not counted");
  t.regex(en.html, /100%/, "both finished deposits succeeded");
  t.is((en.html.match(/<svg class="chart"/g) ?? []).length, 2);
  t.regex(en.html, /role="img" aria-labelledby="chart-deposits-title chart-deposits-desc"/);
  t.regex(en.html, /<details><summary>The chart as a table<\/summary>/);
  t.notRegex(en.html, /<script/, "no script: the charts are drawn on the server");
  t.notRegex(en.html, /style="/, "no style attribute (the CSP allows none)");
  t.regex(en.headers.get("content-security-policy") ?? "", /script-src 'nonce-/);

  const tr = await browser.get("/merchant?lang=tr");
  t.is(tr.status, 200);
  t.regex(tr.html, /<html lang="tr">/);
  t.regex(tr.html, /Kullanılabilir/);
  t.regex(tr.html, /Son 30 gün/);
  t.regex(tr.html, /Grafik tablo olarak/);
  t.regex(tr.html, /₺(?:<\/span>)?1\.750,50/, "as Türkiye writes money");
  t.regex(tr.html, new RegExp(`<time datetime="\\d{4}-\\d{2}-\\d{2}">${formatDay(new Date(), "tr")}</time>`), "days as Türkiye writes them");
});

test("on a phone: the held balance stands under the available one (no table to scroll), the charts scale with their box and their day labels are Türkiye's", async (t) => {
  const shop = await newMerchant(stack);
  await stack.payouts.adjustBalance({ merchantId: shop, amount: 500_000n, currency: "TRY", reason: "funds" });
  const browser = await signedInMerchantUser(stack, shop, "phone-home@shop.test", "finance");
  const tr = await browser.get("/merchant?lang=tr&mode=sandbox");
  t.regex(tr.html, /<dl class="facts card balance" aria-label="TRY"><dt>Kullanılabilir<\/dt><dd class="num">[^<]*(?:<[^>]+>[^<]*)*?5\.000,00<\/dd><dt>Çekimler için bloke<\/dt><dd class="num">/, "available, then held, as a list");
  t.notRegex(tr.html, /<caption>Para birimine göre bakiye<\/caption>/, "no wide table for the balance");
  t.regex(tr.html, /<svg class="chart" viewBox="0 0 440 300" width="100%"[^>]*font-size="13"/, "a phone-sized drawing scaled to the box");
  const label = new Intl.DateTimeFormat("tr-TR", { day: "numeric", month: "short", timeZone: "Europe/Istanbul" }).format(new Date());
  t.regex(tr.html, new RegExp(`fill="#344054">${label}</text>`), "the last day labelled as Türkiye writes it");
  t.notRegex(tr.html, />\d{2}-\d{2}<\/text>/, "no MM-DD labels");
});

test("live and sandbox apart: each mode counts its own payments only, and the balance shows in the account's own mode", async (t) => {
  const sandboxShop = await newMerchant(stack);
  await paidDeposit(sandboxShop, 321_00n);
  const live = await merchantDeposit(stack, { amount: 654_00n });
  await reportTo(stack, live, 654_00n, live.reference);
  const sandboxUser = await signedInMerchantUser(stack, sandboxShop, "mode-sandbox@shop.test", "viewer");
  const liveUser = await signedInMerchantUser(stack, live.merchantId, "mode-live@shop.test", "viewer");
  const amount = (n: string) => new RegExp(`TRY(?:</span>)?\\s${n}`);

  const sandboxInSandbox = await sandboxUser.get("/merchant?lang=en&mode=sandbox");
  t.regex(sandboxInSandbox.html, amount("321\\.00"));
  t.regex(sandboxInSandbox.html, /Sandbox data: only sandbox payments are counted/);
  t.regex(sandboxInSandbox.html, /<dt>Held for withdrawals<\/dt>/);
  const sandboxInLive = await sandboxUser.get("/merchant?lang=en&mode=live");
  t.notRegex(sandboxInLive.html, amount("321\\.00"), "a sandbox payment is not counted as live");
  t.regex(sandboxInLive.html, /This is a sandbox account: its balance is sandbox money/);
  t.notRegex(sandboxInLive.html, /<dt>Held for withdrawals<\/dt>/);

  await eventually(async () => amount("654\\.00").test((await liveUser.get("/merchant?lang=en&mode=live")).html), "the live deposit counted in live mode");
  const liveInLive = await liveUser.get("/merchant?lang=en&mode=live");
  t.regex(liveInLive.html, /<dt>Held for withdrawals<\/dt>/);
  const liveInSandbox = await liveUser.get("/merchant?lang=en&mode=sandbox");
  t.notRegex(liveInSandbox.html, amount("654\\.00"), "a live payment is not counted in sandbox");
  t.regex(liveInSandbox.html, /This is a live account: its balance is real money/);
});

test("every role opens Home; a user signed out is sent to sign in", async (t) => {
  const shop = await newMerchant(stack);
  for (const role of ["owner", "developer", "finance"] as const) {
    await merchantUserAccount(stack, shop, `${role}-home@shop.test`, role);
    const { browser } = await merchantSignIn(stack, `${role}-home@shop.test`);
    t.is((await browser.get("/merchant")).status, 200, role);
  }
  const { browser: anonymous } = await merchantSignIn(stack, "nobody@shop.test");
  const page = await anonymous.get("/merchant");
  t.true(page.status === 302 || page.status === 303);
});

test("with no mode chosen the dashboard opens on the merchant's own kind: a sandbox merchant's payments show at once; a chosen mode is kept", async (t) => {
  const shop = await newMerchant(stack, { name: "Kum Havuzu Dükkanı" });
  await paidDeposit(shop, 321_00n);
  const browser = await signedInMerchantUser(stack, shop, "viewer-mode@shop.test", "viewer");

  const first = await browser.get("/merchant?lang=en");
  t.is(first.status, 200);
  t.regex(first.html, /TRY(?:<\/span>)?\s321\.00/, "the sandbox merchant's paid deposit, without choosing sandbox");
  t.regex(first.html, /<a href="[^"]*mode=sandbox[^"]*" aria-current="true">Sandbox<\/a>/, "the switch says which mode is shown");

  const live = await browser.get("/merchant?lang=en&mode=live");
  t.notRegex(live.html, /321\.00/, "live chosen: no sandbox money");
  const again = await browser.get("/merchant?lang=en");
  t.notRegex(again.html, /321\.00/, "the choice is remembered over the merchant's kind");
});
