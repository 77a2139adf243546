import test from "ava";
import { eventually } from "@payments/testing";
import { csrfOf } from "./harness.js";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";

// A merchant's balance page for operators (console/src/operator/balances) on the five real services:
// balances and the latest ledger movements, and a manual adjustment typed, reviewed, then sent;
// a live merchant's waits for a second operator.

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

async function merchant(options: { sandbox: boolean; funded?: bigint }): Promise<{ id: string; name: string }> {
  const deposit = await merchantDeposit(stack, { sandbox: options.sandbox, amount: options.funded ?? 50_000n });
  const id = deposit.merchantId;
  if (options.funded) {
    await reportTo(stack, deposit, options.funded, `odeme ${deposit.reference}`);
    await eventually(async () => (await available(id)) === options.funded, "the deposit credited");
  }
  return { id, name: (await stack.merchants.getMerchant({ merchantId: id })).merchant!.name };
}

const available = async (merchantId: string) => (await stack.payouts.getBalances({ merchantId })).balances.find((b) => b.currency === "TRY")?.available ?? 0n;
const ledgerSize = async (merchantId: string) => (await stack.payouts.listLedgerEntries({ merchantId })).entries.length;

test.serial("the balance page names the merchant and shows its balances in both languages, the latest movements to finance, and is linked from the merchant's page", async (t) => {
  const m = await merchant({ sandbox: false, funded: 125_075n });
  const viewer = await signedInAs(stack.c, "viewer-bal@example.com", "viewer");
  t.true((await viewer.get(`/merchants/${m.id}?lang=en`)).html.includes(`href="/merchants/${m.id}/balance">Balance and adjustments</a>`));
  const en = await viewer.get(`/merchants/${m.id}/balance?lang=en`);
  t.is(en.status, 200);
  t.true(en.html.includes(`<h1>Balance of ${m.name}</h1>`));
  t.true(en.html.includes("TRY\u00a01,250.75"));
  t.true(en.html.includes("<dd>Live</dd>"));
  t.true(en.html.includes("Finance adjusts balances."), "no adjustment form for a viewer");
  t.false(en.html.includes('name="direction"'));
  t.regex(en.html, /role="alert">The service refused: your role may not do this/, "the ledger is finance's: its place says so");
  const tr = await viewer.get(`/merchants/${m.id}/balance?lang=tr`);
  t.true(tr.html.includes(`<h1>${m.name} bakiyesi</h1>`));
  t.true(tr.html.includes("₺1.250,75"));
  t.true(tr.html.includes("Çekimler için bloke"));

  const finance = await signedInAs(stack.c, "fin-bal-view@example.com", "finance");
  const ledger = await finance.get(`/merchants/${m.id}/balance?lang=tr`);
  t.true(ledger.html.includes("Son hareketler, en yeni önce"));
  t.true(ledger.html.includes("Yatırım alacağı"));
  t.true(ledger.html.includes("+₺1.250,75"));
  t.true(ledger.html.includes('name="direction"'), "finance gets the form");
  t.is((await viewer.get("/merchants/bad%20id/balance")).status, 404);
});

test.serial("bad input is a clear error on its field and sends nothing: an amount that is not one, no reason, no direction, a tampered review", async (t) => {
  const m = await merchant({ sandbox: true });
  const finance = await signedInAs(stack.c, "fin-bal-bad@example.com", "finance");
  const page = `/merchants/${m.id}/balance?lang=en`;
  const bad = await postFrom(finance, page, `/merchants/${m.id}/balance/review`, { direction: "credit", amount: "abc", currency: "TRY", reason: "" });
  t.is(bad.status, 400);
  t.true(bad.html.includes("Give an amount above zero, e.g. 1250.75."));
  t.true(bad.html.includes("Give the reason."));
  t.true(bad.html.includes('id="adjust-amount" name="amount" type="text" value="abc"'), "what was typed is kept");
  t.true(bad.html.includes('aria-invalid="true"'));
  const noWay = await postFrom(finance, `/merchants/${m.id}/balance?lang=tr`, `/merchants/${m.id}/balance/review`, { amount: "10", currency: "TRY", reason: "x" });
  t.is(noWay.status, 400);
  t.true(noWay.html.includes("Eklemeyi ya da düşmeyi seçin."));
  t.is((await postFrom(finance, page, `/merchants/${m.id}/balance/review`, { direction: "credit", amount: "0", currency: "TRY", reason: "x" })).status, 400);
  const tampered = await postFrom(finance, page, `/merchants/${m.id}/balance/adjust`, { direction: "credit", amount: "abc", currency: "TRY", reason: "x" });
  t.is(tampered.status, 400);
  t.is(await available(m.id), 0n);
  t.is(await ledgerSize(m.id), 0);
});

test.serial("a sandbox merchant's adjustment is reviewed (before and after), then posted at once; taking out more than is available is the service's refusal and changes nothing", async (t) => {
  const m = await merchant({ sandbox: true });
  const finance = await signedInAs(stack.c, "fin-bal-sandbox@example.com", "finance");
  const review = await postFrom(finance, `/merchants/${m.id}/balance?lang=tr`, `/merchants/${m.id}/balance/review`, { direction: "credit", amount: "1.250,75", currency: "TRY", reason: "bankadan gelen iade" });
  t.is(review.status, 200);
  t.true(review.html.includes(`${m.name} düzeltmesini gözden geçirin`));
  t.true(review.html.includes("Henüz hiçbir şey gönderilmedi."));
  t.true(review.html.includes("<dd>₺0,00</dd>") && review.html.includes("<dd>₺1.250,75</dd>"));
  t.is(await available(m.id), 0n, "the review sends nothing");

  // "Change" brings the form back with what was typed.
  const change = await finance.post(`/merchants/${m.id}/balance/edit`, { _csrf: csrfOf(review.html), direction: "credit", amount: "1.250,75", currency: "TRY", reason: "bankadan gelen iade" });
  t.is(change.status, 200);
  t.true(change.html.includes('value="1.250,75"'));

  const sent = await finance.post(`/merchants/${m.id}/balance/adjust`, { _csrf: csrfOf(review.html), direction: "credit", amount: "125075", currency: "TRY", reason: "bankadan gelen iade" });
  t.is(sent.status, 303);
  t.regex(sent.location!, new RegExp(`^/merchants/${m.id}/balance\\?done=posted&entry=`));
  t.is(await available(m.id), 125_075n);
  const shown = await finance.get(`${sent.location!}&lang=en`);
  t.true(shown.html.includes("The adjustment was posted"));
  t.true(shown.html.includes("Manual adjustment"));
  t.true(shown.html.includes("bankadan gelen iade"));

  const tooMuch = await postFrom(finance, `/merchants/${m.id}/balance?lang=en`, `/merchants/${m.id}/balance/adjust`, { direction: "debit", amount: "999999999", currency: "TRY", reason: "too much" });
  t.is(tooMuch.status, 409);
  t.true(tooMuch.html.includes("The service refused"));
  t.is(await available(m.id), 125_075n);
});

test.serial("a live merchant's adjustment waits for a second operator: the maker is shown the approval, cannot approve it, and a second finance operator's approval posts it", async (t) => {
  const m = await merchant({ sandbox: false });
  const maker = await signedInAs(stack.c, "fin-bal-maker@example.com", "finance");
  const review = await postFrom(maker, `/merchants/${m.id}/balance?lang=en`, `/merchants/${m.id}/balance/review`, { direction: "credit", amount: "1,250.75", currency: "TRY", reason: "bank correction 42" });
  t.true(review.html.includes(`${m.name} is live: the adjustment waits for a second operator`));
  const sent = await maker.post(`/merchants/${m.id}/balance/adjust`, { _csrf: csrfOf(review.html), direction: "credit", amount: "125075", currency: "TRY", reason: "bank correction 42" });
  t.is(sent.status, 303);
  const approvalId = new URL(sent.location!, stack.c.url).searchParams.get("approval");
  t.truthy(approvalId);
  const waiting = await maker.get(`${sent.location!}&lang=en`);
  t.true(waiting.html.includes(`href="/approvals/payout/${approvalId}"`));
  t.is(await available(m.id), 0n, "nothing moves before the approval");

  const own = await postFrom(maker, `/approvals/payout/${approvalId}`, `/approvals/payout/${approvalId}/approve`, { note: "me" });
  t.is(own.status, 403);
  t.is(await available(m.id), 0n);
  const second = await signedInAs(stack.c, "fin-bal-second@example.com", "finance");
  const approved = await postFrom(second, `/approvals/payout/${approvalId}`, `/approvals/payout/${approvalId}/approve`, { note: "checked the bank" });
  t.is(approved.status, 303);
  t.is(await available(m.id), 125_075n);
});

test.serial("an operator (below finance) replaying the review and the send gets the service's 403; without the CSRF token it is refused; nothing changes", async (t) => {
  const m = await merchant({ sandbox: true });
  const operator = await signedInAs(stack.c, "ops-bal@example.com", "operator");
  const page = `/merchants/${m.id}/balance?lang=en`;
  t.false((await operator.get(page)).html.includes('name="direction"'));
  const replay = await postFrom(operator, page, `/merchants/${m.id}/balance/adjust`, { direction: "credit", amount: "5000", currency: "TRY", reason: "replayed" });
  t.is(replay.status, 403);
  t.regex(replay.html, /role="alert">The service refused: your role may not do this/);
  const finance = await signedInAs(stack.c, "fin-bal-csrf@example.com", "finance");
  t.is((await finance.post(`/merchants/${m.id}/balance/adjust`, { direction: "credit", amount: "5000", currency: "TRY", reason: "no token" })).status, 403);
  t.is((await finance.post(`/merchants/${m.id}/balance/review`, { direction: "credit", amount: "50", currency: "TRY", reason: "no token" })).status, 403);
  t.is(await available(m.id), 0n);
  t.is(await ledgerSize(m.id), 0);
});
