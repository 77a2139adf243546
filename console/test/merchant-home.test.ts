import test from "ava";
import { merchantUserAccount, merchantSignIn, newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { startStack, type Stack } from "./service-harness.js";

// The merchant dashboard's Home (issue 24): the balance, today and the last 30 days of one
// merchant's own payments, charts drawn on the server with their tables; TR and EN.
let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack.stop();
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

  const en = await browser.get("/merchant?lang=en");
  t.is(en.status, 200);
  t.regex(en.html, /<h1>Home<\/h1>/);
  t.regex(en.html, /Available/);
  t.regex(en.html, /1750\.50 TRY/, "completed volume of the two paid deposits");
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
