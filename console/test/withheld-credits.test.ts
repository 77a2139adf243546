import test from "ava";
import { DepositStatus } from "@payments/contracts/deposit";
import { WithheldCreditStatus, type WithheldCredit } from "@payments/contracts/payout";
import { eventually } from "@payments/testing";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests, waitingApproval } from "./service-harness.js";
import type { Browser } from "./harness.js";

// The operators' withheld credits (console/src/operator/withheld-credits) on the five real services:
// a sandbox merchant's deposit paid after the merchant went live (its row changed in the merchant
// service's database: the race SetSandbox itself refuses) is withheld by the payout service, and
// waits for finance to credit it (a second operator approves) or dismiss it.

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

async function withheld(amount = 25_075n): Promise<WithheldCredit & { name: string }> {
  const deposit = await merchantDeposit(stack, { sandbox: true, amount });
  const merchantId = deposit.merchantId;
  const name = (await stack.merchants.getMerchant({ merchantId })).merchant!.name;
  await stack.services.contexts.get("merchant")!.db("merchants").where({ id: merchantId }).update({ sandbox: false });
  const transfer = await reportTo(stack, deposit, amount, `odeme ${deposit.reference}`);
  const paid = (await stack.deposits.getDeposit({ merchantId, key: { case: "depositId", value: deposit.id } })).deposit!;
  if (paid.status !== DepositStatus.COMPLETED) throw new Error(`deposit ${deposit.id} not completed by ${transfer.id}`);
  let found: WithheldCredit | undefined;
  await eventually(async () => {
    found = (await stack.payouts.listWithheldCredits({ merchantId })).credits[0];
    return found !== undefined;
  }, "the payout service withheld the credit");
  return { ...found!, name };
}

/** A credit's page (in English) and the action its decision is posted to. */
const pathsOf = (c: WithheldCredit) => ({ page: `/withheld-credits/${c.merchantId}/${c.id}?lang=en`, action: `/withheld-credits/${c.merchantId}/${c.id}/resolve` });
/** A decision on the credit, posted from its page with the page's CSRF token. */
const decide = (browser: Browser, c: WithheldCredit, form: Record<string, string>) => postFrom(browser, pathsOf(c).page, pathsOf(c).action, form);
const creditOf = async (c: WithheldCredit) => (await stack.payouts.listWithheldCredits({ merchantId: c.merchantId })).credits.find((x) => x.id === c.id)!;
const available = async (merchantId: string) => (await stack.payouts.getBalances({ merchantId })).balances.find((b) => b.currency === "TRY")?.available ?? 0n;

test.serial("an open withheld credit is listed with its merchant's name and amount in English and Turkish, counted on home; a viewer sees it without a decision", async (t) => {
  const c = await withheld();
  const viewer = await signedInAs(stack.c, "viewer-whc@example.com", "viewer");
  const en = await viewer.get("/withheld-credits?lang=en");
  t.is(en.status, 200);
  t.true(en.html.includes(`<a href="/merchants/${c.merchantId}">${c.name}</a>`));
  t.true(en.html.includes("TRY\u00a0250.75"));
  t.true(en.html.includes("Waiting for a decision"));
  t.true(en.html.includes(`href="/withheld-credits/${c.merchantId}/${c.id}"`));
  const tr = await viewer.get("/withheld-credits?lang=tr");
  t.true(tr.html.includes("₺250,75"));
  t.true(tr.html.includes("Karar bekliyor"));
  t.true(tr.html.includes("Bekletilen alacaklar, en yeni önce"));
  t.false((await viewer.get("/withheld-credits?status=credited")).html.includes(c.id), "the status filter is the service's");
  t.true((await viewer.get(`/withheld-credits?status=all&merchant=${c.merchantId}`)).html.includes(c.id));
  const bad = await viewer.get("/withheld-credits?merchant=%3Cscript%3E&lang=en");
  t.is(bad.status, 400);
  t.true(bad.html.includes("A merchant ID has only letters, digits, _ and -."));

  const detail = await viewer.get(`/withheld-credits/${c.merchantId}/${c.id}?lang=en`);
  t.is(detail.status, 200);
  t.true(detail.html.includes("No: it waits for a decision."));
  t.true(detail.html.includes("Finance decides a withheld credit."));
  t.false(detail.html.includes('name="decision"'));
  t.true((await viewer.get(`/withheld-credits/${c.merchantId}/${c.id}?lang=tr`)).html.includes("Hayır: karar bekliyor."));
  t.is((await viewer.get(`/withheld-credits/${c.merchantId}/whc_nothing`)).status, 404);

  const home = await viewer.get("/?lang=en");
  t.regex(home.html, /<a href="\/withheld-credits">Withheld credits to decide<\/a><\/th>\s*<td[^>]*class="num">[1-9]\d*\+?<\/td>/);
});

test.serial("finance dismisses one with a reason; a missing reason or decision is a clear error that changes nothing", async (t) => {
  const c = await withheld(4_000n);
  const finance = await signedInAs(stack.c, "fin-whc@example.com", "finance");
  const noReason = await decide(finance, c, { decision: "dismiss", reason: " " });
  t.is(noReason.status, 400);
  t.true(noReason.html.includes("Say why."));
  t.true(noReason.html.includes('aria-invalid="true"'));
  const { page, action } = pathsOf(c);
  const noDecision = await postFrom(finance, `/withheld-credits/${c.merchantId}/${c.id}?lang=tr`, action, { reason: "test money" });
  t.is(noDecision.status, 400);
  t.true(noDecision.html.includes("Alacak kaydetmeyi ya da kapatmayı seçin."));
  t.is((await creditOf(c)).status, WithheldCreditStatus.OPEN);

  const res = await postFrom(finance, page, action, { decision: "dismiss", reason: "it was test money" });
  t.is(res.status, 303);
  t.is(res.location, `/withheld-credits/${c.merchantId}/${c.id}?done=dismiss`);
  t.like(await creditOf(c), { status: WithheldCreditStatus.DISMISSED, resolvedBy: "fin-whc@example.com", resolution: "it was test money" });
  const after = await finance.get(`${res.location!}&lang=tr`);
  t.true(after.html.includes("Kapatıldı: hiçbir alacak kaydedilmedi."));
  t.true(after.html.includes("it was test money"));
  t.true(after.html.includes('fin-whc <small><code class="id">fin-whc@example.com</code></small>'), "who decided, by name first");
  t.is(await available(c.merchantId), 0n);
});

test.serial("crediting a live merchant's waits for a second operator: the link is shown, the maker cannot approve it, another finance operator does and the money is credited", async (t) => {
  const c = await withheld(9_900n);
  const maker = await signedInAs(stack.c, "fin-whc-maker@example.com", "finance");
  const res = await postFrom(maker, `/withheld-credits/${c.merchantId}/${c.id}`, `/withheld-credits/${c.merchantId}/${c.id}/resolve`, { decision: "credit", reason: "the bank shows the money" });
  const approvalId = await waitingApproval(t, stack, maker, res, "payout");
  t.is((await creditOf(c)).status, WithheldCreditStatus.OPEN, "nothing moves before the approval");

  const own = await postFrom(maker, `/approvals/payout/${approvalId}`, `/approvals/payout/${approvalId}/approve`, { note: "me again" });
  t.is(own.status, 403);
  t.is((await creditOf(c)).status, WithheldCreditStatus.OPEN);

  const second = await signedInAs(stack.c, "fin-whc-second@example.com", "finance");
  const approved = await postFrom(second, `/approvals/payout/${approvalId}`, `/approvals/payout/${approvalId}/approve`, { note: "checked" });
  t.is(approved.status, 303);
  t.is((await creditOf(c)).status, WithheldCreditStatus.CREDITED);
  t.is(await available(c.merchantId), 9_900n);
  t.true((await second.get(`/withheld-credits/${c.merchantId}/${c.id}?lang=en`)).html.includes("Yes: credited to the merchant&#39;s available balance."));
});

test.serial("an operator (below finance) replaying a decision gets the service's 403; without the CSRF token it is refused; nothing changes", async (t) => {
  const c = await withheld(3_000n);
  const operator = await signedInAs(stack.c, "ops-whc@example.com", "operator");
  const replay = await decide(operator, c, { decision: "dismiss", reason: "replayed" });
  t.is(replay.status, 403);
  t.regex(replay.html, /role="alert">The service refused: your role may not do this/);
  const finance = await signedInAs(stack.c, "fin-whc-csrf@example.com", "finance");
  t.is((await finance.post(pathsOf(c).action, { decision: "dismiss", reason: "no token" })).status, 403);
  t.is((await creditOf(c)).status, WithheldCreditStatus.OPEN);
});
