import test from "ava";
import { WithdrawalStatus, type Withdrawal } from "@payments/contracts/payout";
import { eventually } from "@payments/testing";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests, viewerSees } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

let n = 0;
/** A live merchant paid 500.00 TRY by a matching transfer, and a live withdrawal of `amount` it asked for, left to an operator by the manual connector. */
async function awaitingWithdrawal(amount = 12_345n, accountName = "Ayşe Yılmaz"): Promise<Withdrawal> {
  const deposit = await merchantDeposit(stack);
  await reportTo(stack, deposit, deposit.requestedAmount, `odeme ${deposit.reference}`);
  const merchantId = deposit.merchantId;
  await eventually(async () => (await stack.payouts.getBalances({ merchantId })).balances.some((b) => b.available >= amount), "the deposit credited");
  const { withdrawal } = await stack.payouts.createWithdrawal({ merchantId, processId: `wd-${++n}`, amount, accountName, iban: "TR330006100519786457841326", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" });
  let found: Withdrawal | undefined;
  await eventually(async () => {
    found = (await stack.payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: withdrawal!.id } })).withdrawal;
    return found?.awaitingOperator === true;
  }, "the withdrawal awaits an operator");
  return found!;
}

const statusOf = async (id: string) => (await stack.payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } })).withdrawal!.status;

test.serial("a viewer sees the withdrawals, the queue awaiting an operator and one withdrawal's page, without any action", async (t) => {
  const w = await awaitingWithdrawal();
  const { viewer, list } = await viewerSees(t, stack, "viewer-wd@example.com", `/withdrawals?merchant=${w.merchantId}&lang=en`, `/withdrawals/${w.id}`);
  t.true(list.html.includes("awaiting an operator"));
  t.true((await viewer.get(`/withdrawals?q=${w.processId}&merchant=${w.merchantId}`)).html.includes(`href="/withdrawals/${w.id}"`));
  // Issue 23's search fields, passed to ListWithdrawals: each finds the withdrawal, and they combine.
  t.true(list.html.includes("Account holder") && list.html.includes("Recipient IBAN"));
  for (const query of ["iban=tr33%200006%201005%201978%206457%208413%2026", `name=${encodeURIComponent("Ayşe Y")}`, "amount=123,45", "amount=123.45&status=processing&name=Ay"]) {
    const found = await viewer.get(`/withdrawals?merchant=${w.merchantId}&${query}`);
    t.is(found.status, 200, query);
    t.true(found.html.includes(`href="/withdrawals/${w.id}"`), query);
  }
  for (const query of ["amount=123", `name=${encodeURIComponent("ayşe")}`, "amount=123,45&status=completed"]) {
    t.false((await viewer.get(`/withdrawals?merchant=${w.merchantId}&${query}`)).html.includes(`href="/withdrawals/${w.id}"`), query);
  }
  t.is((await viewer.get("/withdrawals?amount=-5")).status, 400);
  const queue = await viewer.get("/withdrawals/awaiting?lang=en");
  t.is(queue.status, 200);
  t.true(queue.html.includes(`href="/withdrawals/${w.id}"`));
  t.false(queue.html.includes(`action="/withdrawals/${w.id}/complete"`));
  const detail = await viewer.get(`/withdrawals/${w.id}?lang=tr`);
  t.is(detail.status, 200);
  t.true(detail.html.includes("İşlemde"));
  t.true(detail.html.includes("Zaman çizelgesi"));
});

/** A sandbox merchant paid by the sandbox helper, and a withdrawal it asked for (the sandbox connector pays it). */
async function sandboxWithdrawal(): Promise<Withdrawal> {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  await stack.deposits.sandboxPayDeposit({ allMerchants: true, depositId: deposit.id });
  const merchantId = deposit.merchantId;
  await eventually(async () => (await stack.payouts.getBalances({ merchantId })).balances.some((b) => b.available >= 10_000n), "the sandbox deposit credited");
  const { withdrawal } = await stack.payouts.createWithdrawal({ merchantId, processId: `wd-${++n}`, amount: 10_000n, accountName: "Deniz Ak", iban: "TR330006100519786457841326", userId: "u2", userName: "deniz", name: "Deniz Ak" });
  return withdrawal!;
}

test.serial("names first: the merchant's name beside its id, a select of merchants by name that filters, and live or sandbox withdrawals by the mode, never both", async (t) => {
  const live = await awaitingWithdrawal();
  const play = await sandboxWithdrawal();
  const name = (await stack.merchants.getMerchant({ merchantId: live.merchantId })).merchant!.name;
  const viewer = await signedInAs(stack.c, "viewer-wd-names@example.com", "viewer");
  const has = (html: string, w: Withdrawal) => html.includes(`href="/withdrawals/${w.id}"`);

  const liveList = await viewer.get("/withdrawals?lang=en&mode=live");
  t.true(has(liveList.html, live));
  t.false(has(liveList.html, play), "live mode shows no sandbox withdrawal");
  t.true(liveList.html.includes(`<a href="/merchants/${live.merchantId}">${name}</a> <small><code class="id">${live.merchantId}</code></small>`));
  t.regex(liveList.html, /<select[^>]* id="field-merchant" name="merchant"><option value="">Every merchant<\/option>/);
  t.true(liveList.html.includes(`<option value="${live.merchantId}">${name} (${live.merchantId})</option>`));
  const liveQueue = await viewer.get("/withdrawals/awaiting?lang=en");
  t.true(has(liveQueue.html, live) && liveQueue.html.includes(`<a href="/merchants/${live.merchantId}">${name}</a>`), "the queue names the merchant");

  const sandboxList = await viewer.get("/withdrawals?mode=sandbox");
  t.true(has(sandboxList.html, play));
  t.false(has(sandboxList.html, live), "sandbox mode shows no live withdrawal");
  t.false(has((await viewer.get("/withdrawals/awaiting")).html, live), "nor the live queue");
  const chosen = await viewer.get(`/withdrawals?merchant=${play.merchantId}&lang=tr`);
  t.true(has(chosen.html, play));
  t.true(chosen.html.includes(`<option value="${play.merchantId}" selected>`));
  t.true(chosen.html.includes("Tüm üye işyerleri"));
  t.false(has((await viewer.get(`/withdrawals?merchant=${live.merchantId}`)).html, live), "the live merchant's withdrawal stays out of sandbox mode");
  const detail = await viewer.get(`/withdrawals/${live.id}?lang=en`);
  t.true(detail.html.includes(`<a href="/merchants/${live.merchantId}">${name}</a>`), "the withdrawal's page names its merchant");
  t.true(detail.html.includes(`Ayşe Yılmaz <small><code class="id">u1</code></small>`), "the customer by name, the id beside it");
});

test.serial("the queue's bank file is the CLI's bulk-payment CSV of the live ones, in English or Turkish, formula-looking names kept as text", async (t) => {
  const w = await awaitingWithdrawal(20_050n, "=HYPERLINK(1)");
  const viewer = await signedInAs(stack.c, "viewer-csv@example.com", "viewer");
  const en = await viewer.get("/withdrawals/awaiting.csv?lang=en");
  t.is(en.status, 200);
  t.regex(en.headers.get("content-type") ?? "", /text\/csv/);
  // (fetch's text() drops the byte-order mark the file starts with, for Excel)
  t.true(en.html.startsWith("Recipient name,IBAN,Amount,Description\r\n"), JSON.stringify(en.html.slice(0, 80)));
  t.true(en.html.includes(`'=HYPERLINK(1),TR330006100519786457841326,200.50,${w.id}\r\n`));
  const tr = await viewer.get("/withdrawals/awaiting.csv?lang=tr");
  t.true(tr.html.includes("Alıcı adı;IBAN;Tutar;Açıklama\r\n"));
  t.true(tr.html.includes(`;200,50;${w.id}\r\n`));
});

test.serial("an operator completes one from the queue with the bank's reference and fails another with a reason code", async (t) => {
  const done = await awaitingWithdrawal();
  const failed = await awaitingWithdrawal();
  const operator = await signedInAs(stack.c, "ops-wd@example.com", "operator");
  const res = await postFrom(operator, "/withdrawals/awaiting", `/withdrawals/${done.id}/complete`, { bankReference: "AKB-2026-0001", back: "/withdrawals/awaiting" });
  t.is(res.status, 303);
  t.true(res.location!.startsWith("/withdrawals/awaiting?done=complete"));
  t.is(await statusOf(done.id), WithdrawalStatus.COMPLETED);
  const noReason = await postFrom(operator, `/withdrawals/${failed.id}?lang=en`, `/withdrawals/${failed.id}/fail`, { reason: "" });
  t.is(noReason.status, 400);
  t.true(noReason.html.includes("Give a reason code."));
  const res2 = await postFrom(operator, `/withdrawals/${failed.id}`, `/withdrawals/${failed.id}/fail`, { reason: "ACCOUNT_CLOSED" });
  t.is(res2.status, 303);
  t.is(await statusOf(failed.id), WithdrawalStatus.FAILED);
  const shown = await operator.get(`/withdrawals/${done.id}?lang=en`);
  t.true(shown.html.includes("AKB-2026-0001"));
  t.true(shown.html.includes("Withdrawal completed"), "the timeline has the operator's action, in words");
  t.false(shown.html.includes("CompleteWithdrawal"), "never the RPC's name");
});

test.serial("a viewer replaying a completion gets the service's 403 and the withdrawal stays processing; a post without the CSRF token is refused", async (t) => {
  const w = await awaitingWithdrawal();
  const viewer = await signedInAs(stack.c, "viewer-wd-replay@example.com", "viewer");
  const res = await postFrom(viewer, "/withdrawals/awaiting?lang=en", `/withdrawals/${w.id}/complete`, { bankReference: "X-1", back: "/withdrawals/awaiting" });
  t.is(res.status, 403);
  t.regex(res.html, /role="alert">The service refused: your role may not do this/);
  const operator = await signedInAs(stack.c, "ops-wd-csrf@example.com", "operator");
  t.is((await operator.post(`/withdrawals/${w.id}/fail`, { reason: "ACCOUNT_CLOSED" })).status, 403);
  t.is(await statusOf(w.id), WithdrawalStatus.PROCESSING);
});
