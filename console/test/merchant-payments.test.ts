import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import type { CallbackEvent } from "@payments/contracts/callback";
import { bankIban } from "@payments/testing";
import { UnderpaymentRule } from "@payments/contracts/merchant";
import { csrfOf, type Browser } from "./harness.js";
import { newMerchant, signedInMerchantUser as signedInUser } from "./merchant-harness.js";
import { merchantDeposit, startStack, type Stack } from "./service-harness.js";

// The merchant dashboard's Payments (issue 24): the lists and their filters, one payment with its
// timeline and every callback attempt, send again (owner, developer), the CSV (owner, finance),
// another merchant's ids as 404 with nothing changed; TR and EN.
let stack: Stack;
let receiver: Server;
let receiverUrl = "";
/** How many times each event id was posted to the receiver (x-event-id). */
const hitsOf = new Map<string, number>();

test.before(async () => {
  stack = await startStack({ serviceEnv: { CALLBACK_ALLOW_PRIVATE: "1", CALLBACK_RETRY_SCHEDULE: "1h" } });
  receiver = createServer((req, res) => {
    const id = String(req.headers["x-event-id"] ?? "");
    hitsOf.set(id, (hitsOf.get(id) ?? 0) + 1);
    req.resume();
    res.writeHead(500, { "content-type": "text/plain" }).end("shop says <no>");
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
test.after.always(async () => {
  await stack.stop();
  await new Promise((resolve) => receiver.close(resolve));
});

/** A merchant user signed in, looking at sandbox data (the tests' merchants are sandbox ones unless told). */
async function signedInMerchantUser(...args: Parameters<typeof signedInUser>): Promise<Browser> {
  const browser = await signedInUser(...args);
  await browser.get("/merchant?mode=sandbox");
  return browser;
}

let n = 0;
async function deposit(merchantId: string, amount: bigint, name: string, pay = false): Promise<{ id: string; processId: string; reference: string }> {
  const processId = `pay-${++n}`;
  const { deposit } = await stack.deposits.createDeposit({ merchantId, processId, amount, customer: { id: `cust-${n}`, name, username: `u${n}` } });
  if (pay) await stack.deposits.sandboxPayDeposit({ merchantId, depositId: deposit!.id });
  return { id: deposit!.id, processId, reference: deposit!.reference };
}

async function withdrawal(merchantId: string, amount: bigint, holder: string): Promise<string> {
  const { withdrawal } = await stack.payouts.createWithdrawal({ merchantId, processId: `wd-${++n}`, amount, accountName: holder, iban: bankIban("00062", 5000 + n), userId: `user-${n}`, userName: `user${n}`, name: holder });
  return withdrawal!.id;
}

async function eventsWithAttempts(merchantId: string, transactionId: string): Promise<CallbackEvent[]> {
  for (let i = 0; i < 100; i++) {
    const { events } = await stack.callbacks.listEvents({ merchantId, transactionId, limit: 100 });
    if (events.length > 0 && events.every((e) => e.attempts.length > 0)) return events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no attempted callback for ${transactionId}`);
}

test("a viewer lists deposits and withdrawals, filters by customer name and by processId, in TR and EN", async (t) => {
  const shop = await newMerchant(stack);
  const other = await newMerchant(stack);
  const ayse = await deposit(shop, 1500_00n, "Ayşe Yılmaz");
  const mehmet = await deposit(shop, 200_00n, "Mehmet Demir");
  const theirs = await deposit(other, 300_00n, "Ayşe Başka");
  await stack.payouts.adjustBalance({ merchantId: shop, amount: 100_000_00n, reason: "test funding" });
  await withdrawal(shop, 123_45n, "Elif Şahin");
  const viewer = await signedInMerchantUser(stack, shop, "viewer-pay@shop.test", "viewer");

  const all = await viewer.get("/merchant/payments?lang=en");
  t.is(all.status, 200);
  t.true(all.html.includes(ayse.id) && all.html.includes(mehmet.id));
  t.false(all.html.includes(theirs.id), "another merchant's deposit is not listed");
  t.false(all.html.includes("payments.csv"), "a viewer is not offered the CSV");

  const byName = await viewer.get("/merchant/payments?kind=deposits&customerName=Ay%C5%9Fe");
  t.true(byName.html.includes(ayse.id));
  t.false(byName.html.includes(mehmet.id));
  t.false(byName.html.includes(theirs.id));

  const byProcess = await viewer.get(`/merchant/payments?kind=deposits&processId=${mehmet.processId}`);
  t.true(byProcess.html.includes(mehmet.id));
  t.false(byProcess.html.includes(ayse.id));
  const theirProcess = await viewer.get(`/merchant/payments?kind=deposits&processId=${encodeURIComponent(`pay-${n}`)}&lang=en`);
  t.is(theirProcess.status, 200);
  const byReference = await viewer.get(`/merchant/payments?kind=deposits&reference=${ayse.reference.toLowerCase()}`);
  t.true(byReference.html.includes(ayse.id));
  t.false(byReference.html.includes(mehmet.id));
  const byAmount = await viewer.get("/merchant/payments?kind=deposits&amount=200");
  t.true(byAmount.html.includes(mehmet.id));
  t.false(byAmount.html.includes(ayse.id));

  const badDay = await viewer.get("/merchant/payments?kind=deposits&from=yesterday&lang=en");
  t.is(badDay.status, 400);
  t.regex(badDay.html, /A day as YYYY-MM-DD/);

  const withdrawals = await viewer.get("/merchant/payments?kind=withdrawals&holderName=Elif&lang=tr");
  t.is(withdrawals.status, 200);
  t.regex(withdrawals.html, /<html lang="tr">/);
  t.regex(withdrawals.html, /Elif Şahin/);
  t.regex(withdrawals.html, /Hesap sahibi/);
  t.regex(withdrawals.html, /₺123,45/);
});

test("one deposit shows its timeline and every callback attempt with the answer; a developer sends it again, a viewer cannot by page or replay", async (t) => {
  const shop = await newMerchant(stack);
  await stack.merchants.setCallbackUrl({ merchantId: shop, callbackUrl: receiverUrl });
  const paid = await deposit(shop, 250_00n, "Ayşe Yılmaz", true);
  const [event] = await eventsWithAttempts(shop, paid.id);
  const viewer = await signedInMerchantUser(stack, shop, "viewer-cb@shop.test", "viewer");
  const developer = await signedInMerchantUser(stack, shop, "dev-cb@shop.test", "developer");

  const page = await viewer.get(`/merchant/deposits/${paid.id}?lang=en`);
  t.is(page.status, 200);
  t.regex(page.html, /Timeline/);
  t.regex(page.html, /Callbacks to your server/);
  t.regex(page.html, /shop says &lt;no&gt;/, "the receiver's answer, escaped");
  t.true(page.html.includes(receiverUrl));
  t.false(page.html.includes("/redeliver"), "a viewer is offered no send-again");

  const attemptsBefore = event!.attempts.length;
  const replay = await viewer.post(`/merchant/events/${event!.id}/redeliver`, { _csrf: csrfOf(page.html), back: `/merchant/deposits/${paid.id}` });
  t.is(replay.status, 403);

  const devPage = await developer.get(`/merchant/deposits/${paid.id}?lang=tr`);
  t.regex(devPage.html, /Yeniden gönder/);
  const noCsrf = await developer.post(`/merchant/events/${event!.id}/redeliver`, { back: `/merchant/deposits/${paid.id}` });
  t.is(noCsrf.status, 403);
  const sent = await developer.post(`/merchant/events/${event!.id}/redeliver`, { _csrf: csrfOf(devPage.html), back: `/merchant/deposits/${paid.id}` });
  t.is(sent.status, 303);
  t.is(sent.location, `/merchant/deposits/${paid.id}?redelivered=${event!.id}`);
  const after = await eventsWithAttempts(shop, paid.id);
  for (let i = 0; i < 100 && after[0]!.attempts.length === attemptsBefore; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    after.splice(0, after.length, ...(await stack.callbacks.listEvents({ merchantId: shop, transactionId: paid.id, limit: 100 })).events);
  }
  t.true(after[0]!.attempts.length > attemptsBefore, "the event was sent again");
});

test("another merchant's deposit, withdrawal and event id (and garbage) answer 404 and change nothing", async (t) => {
  const shop = await newMerchant(stack);
  const other = await newMerchant(stack);
  await stack.merchants.setCallbackUrl({ merchantId: other, callbackUrl: receiverUrl });
  const theirs = await deposit(other, 400_00n, "Başka Biri", true);
  await stack.payouts.adjustBalance({ merchantId: other, amount: 10_000_00n, reason: "test funding" });
  const theirWithdrawal = await withdrawal(other, 100_00n, "Başka Biri");
  const [theirEvent] = await eventsWithAttempts(other, theirs.id);
  const owner = await signedInMerchantUser(stack, shop, "owner-idor@shop.test", "owner");
  const home = await owner.get("/merchant/payments");
  const csrf = csrfOf(home.html);
  const hitsBefore = hitsOf.get(theirEvent!.id) ?? 0;

  t.is((await owner.get(`/merchant/deposits/${theirs.id}`)).status, 404);
  t.is((await owner.get(`/merchant/withdrawals/${theirWithdrawal}`)).status, 404);
  t.is((await owner.get(`/merchant/withdrawals/${theirs.id}`)).status, 404, "a deposit id on the withdrawal page");
  t.is((await owner.get("/merchant/deposits/..%2F..%2Fetc")).status, 404);
  t.is((await owner.get("/merchant/deposits/dep_nope")).status, 404);
  t.is((await owner.post(`/merchant/events/${theirEvent!.id}/redeliver`, { _csrf: csrf, back: "/merchant/payments" })).status, 404);
  t.is((await owner.post("/merchant/events/x%3Cy/redeliver", { _csrf: csrf })).status, 404);

  const { event } = await stack.callbacks.getEvent({ merchantId: other, eventId: theirEvent!.id });
  t.is(event!.attempts.length, theirEvent!.attempts.length, "their event was not sent again");
  t.is(event!.deliveryStatus, theirEvent!.deliveryStatus);
  await new Promise((resolve) => setTimeout(resolve, 200));
  // Their withdrawal's own events may still arrive; their deposit's event must not have been sent again.
  t.is(hitsOf.get(theirEvent!.id) ?? 0, hitsBefore, "their event was not posted to their receiver again");
});

test("the CSV of a filtered list: owner and finance, every page, header, BOM, lira with two decimals, the right total", async (t) => {
  const shop = await newMerchant(stack);
  let total = 0n;
  // 130 deposits: more than one page of the service's largest (100).
  for (let i = 0; i < 130; i++) {
    const amount = BigInt(100_00 + i * 101);
    total += amount;
    await deposit(shop, amount, i % 2 === 0 ? "Ayşe Yılmaz" : "=cmd|' /C calc'!A0");
  }
  const finance = await signedInMerchantUser(stack, shop, "finance-csv@shop.test", "finance");
  const viewer = await signedInMerchantUser(stack, shop, "viewer-csv@shop.test", "viewer");
  const listPage = await finance.get("/merchant/payments?kind=deposits&lang=en");
  t.regex(listPage.html, /payments\.csv\?kind=deposits/);

  const res = await finance.get("/merchant/payments.csv?kind=deposits");
  t.is(res.status, 200);
  t.regex(res.headers.get("content-type") ?? "", /^text\/csv; charset=utf-8/);
  t.regex(res.headers.get("content-disposition") ?? "", /^attachment; filename="deposits.csv"/);
  // fetch's text() drops the BOM: the bytes show it.
  const raw = await fetch(new URL("/merchant/payments.csv?kind=deposits", stack.c.url), { headers: { cookie: `console_merchant_session=${finance.cookie("console_merchant_session")}` } });
  t.deepEqual([...Buffer.from(await raw.arrayBuffer()).subarray(0, 3)], [0xef, 0xbb, 0xbf], "UTF-8 with a BOM");
  const lines = res.html.trimEnd().split("\r\n");
  t.is(lines[0], "id,process_id,created_at,status,amount,requested_amount,currency,customer_id,customer_name,customer_username,reference,failure_reason,completed_at,sandbox");
  t.is(lines.length, 131);
  const sum = lines.slice(1).reduce((s, line) => s + BigInt(line.split(",")[4]!.replace(".", "")), 0n);
  t.is(sum, total);
  t.regex(lines[1]!.split(",")[4]!, /^\d+\.\d{2}$/);
  t.true(res.html.includes("'=cmd|"), "a formula is defused");

  const filtered = await finance.get("/merchant/payments.csv?kind=deposits&customerName=Ay%C5%9Fe&locale=tr");
  const trLines = filtered.html.trimEnd().split("\r\n");
  t.is(trLines.length, 66);
  // Turkish headers with Turkish letters, Turkish status values; the English file above is as it always was.
  t.is(trLines[0], "Kimlik;İşlem numarası;Oluşturulma zamanı (UTC);Durum;Tutar;İstenen tutar;Para birimi;Müşteri kimliği;Müşteri adı;Müşteri kullanıcı adı;Referans;Başarısızlık nedeni;Sonuçlanma zamanı (UTC);Test");
  t.is(trLines[1]!.split(";")[3], "bekliyor");
  t.regex(trLines[1]!.split(";")[13]!, /^(evet|hayır)$/);
  t.is(lines[1]!.split(",")[3], "pending");
  t.regex(lines[1]!.split(",")[13]!, /^(true|false)$/);
  t.regex(trLines[1]!.split(";")[4]!, /^\d+,\d{2}$/);

  t.is((await viewer.get("/merchant/payments.csv?kind=deposits")).status, 403);
  const bad = await finance.get("/merchant/payments.csv?kind=deposits&amount=abc");
  t.is(bad.status, 400);
});

test("a short payment shows what was asked and what arrived, in the list and on its page; the customer's name comes before the ids", async (t) => {
  const shop = await newMerchant(stack);
  await stack.merchants.setPaymentRules({ merchantId: shop, underpayment: UnderpaymentRule.COMPLETE });
  const short = await deposit(shop, 1000_00n, "Zeynep Kaya");
  await stack.deposits.sandboxPayDeposit({ merchantId: shop, depositId: short.id, amount: 900_00n });
  const exact = await deposit(shop, 50_00n, "Can Öz", true);
  const viewer = await signedInMerchantUser(stack, shop, "viewer-short@shop.test", "viewer");

  const en = await viewer.get("/merchant/payments?kind=deposits&lang=en");
  const row = en.html.split("<tr>").find((r) => r.includes(short.id))!;
  t.regex(row, /TRY(?:<\/span>)?\s900\.00/, "what arrived");
  t.regex(row, /Short payment: TRY(?:<\/span>)?\s1,000\.00 requested/, "and what was asked");
  const at = (text: string) => row.indexOf(text);
  t.true(at("Zeynep Kaya") >= 0 && at("Zeynep Kaya") < at(`>${short.processId}<`) && at(`>${short.processId}<`) < at(`>${short.id}<`), "name, then process id, then id");
  const exactRow = en.html.split("<tr>").find((r) => r.includes(exact.id))!;
  t.notRegex(exactRow, /requested/, "a deposit paid as asked shows one amount");

  const tr = await viewer.get(`/merchant/deposits/${short.id}?lang=tr`);
  t.regex(tr.html, /<dt>İstenen tutar<\/dt><dd>₺(?:<\/span>)?1\.000,00<\/dd>/);
  t.regex(tr.html, /<dt>Gelen tutar<\/dt><dd>₺(?:<\/span>)?900,00<br><small>Eksik ödeme: istenen ₺(?:<\/span>)?1\.000,00<\/small><\/dd>/);
  t.true(tr.html.indexOf("Zeynep Kaya") < tr.html.indexOf(`<dd>${short.processId}</dd>`), "the customer before the process id");
});

test("live and sandbox apart: each mode lists, finds and downloads its own payments only", async (t) => {
  const sandboxShop = await newMerchant(stack);
  const sandboxDeposit = await deposit(sandboxShop, 77_00n, "Test Kişi");
  const live = await merchantDeposit(stack, { amount: 88_00n });
  const sandboxUser = await signedInUser(stack, sandboxShop, "mode-sandbox-pay@shop.test", "finance");
  const liveUser = await signedInUser(stack, live.merchantId, "mode-live-pay@shop.test", "finance");

  const liveInLive = await liveUser.get("/merchant/payments?kind=deposits&mode=live&lang=en");
  t.true(liveInLive.html.includes(live.id));
  t.regex(liveInLive.html, /Live payments only/);
  const liveInSandbox = await liveUser.get("/merchant/payments?kind=deposits&mode=sandbox&lang=en");
  t.false(liveInSandbox.html.includes(live.id), "a live deposit is not in the sandbox list");
  t.regex(liveInSandbox.html, /Sandbox payments only/);
  t.false((await liveUser.get(`/merchant/payments?kind=deposits&processId=${live.processId}&mode=sandbox`)).html.includes(live.id), "nor found by its process id there");
  const liveCsv = await liveUser.get("/merchant/payments.csv?kind=deposits&mode=sandbox");
  t.is(liveCsv.html.trimEnd().split("\r\n").length, 1, "the sandbox file of a live account: the header only");
  t.is((await liveUser.get("/merchant/payments.csv?kind=deposits&mode=live")).html.trimEnd().split("\r\n").length, 2);

  const sandboxInLive = await sandboxUser.get("/merchant/payments?kind=deposits&mode=live");
  t.false(sandboxInLive.html.includes(sandboxDeposit.id), "a sandbox deposit is not in the live list");
  t.true((await sandboxUser.get("/merchant/payments?kind=deposits&mode=sandbox")).html.includes(sandboxDeposit.id));
  await stack.payouts.adjustBalance({ merchantId: sandboxShop, amount: 1000_00n, reason: "test funding" });
  const w = await withdrawal(sandboxShop, 10_00n, "Test Alıcı");
  t.false((await sandboxUser.get("/merchant/payments?kind=withdrawals&mode=live")).html.includes(w));
  t.true((await sandboxUser.get("/merchant/payments?kind=withdrawals&mode=sandbox")).html.includes(w));
});
