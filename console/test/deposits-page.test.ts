import test from "ava";
import { DepositStatus } from "@payments/contracts/deposit";
import { merchantDeposit, postFrom, signedInAs, type Stack, stackForTests, waitingApproval } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const statusOf = async (id: string) => (await stack.deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit!.status;

test.serial("a viewer sees the deposits listed and filtered, finds one by id and by process id, and its page with the timeline and no action", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const viewer = await signedInAs(stack.c, "viewer-dep@example.com", "viewer");
  const list = await viewer.get("/deposits?lang=en&mode=sandbox");
  t.is(list.status, 200);
  t.true(list.html.includes(`href="/deposits/${deposit.id}"`));
  t.regex(list.html, /<caption>Deposits, newest first<\/caption>/);

  const filtered = await viewer.get(`/deposits?merchant=${deposit.merchantId}&status=completed&lang=en`);
  t.false(filtered.html.includes(`href="/deposits/${deposit.id}"`), "a pending deposit is not among the completed ones");
  const pending = await viewer.get(`/deposits?merchant=${deposit.merchantId}&status=pending&from=2020-01-01`);
  t.true(pending.html.includes(`href="/deposits/${deposit.id}"`));
  t.is((await viewer.get("/deposits?from=yesterday")).status, 400);

  // Issue 23's search fields, passed to ListDeposits: shown in the form, each finds the deposit.
  t.true(list.html.includes('name="reference"') && list.html.includes("Customer name") && list.html.includes("Receiving IBAN"));
  const major = `${deposit.amount / 100n},${String(deposit.amount % 100n).padStart(2, "0")}`;
  for (const query of [
    `reference=${deposit.reference.toLowerCase()}`,
    `customer=${encodeURIComponent(deposit.customer!.id)}`,
    `name=${encodeURIComponent(deposit.customer!.name.slice(0, 3))}`,
    `iban=${encodeURIComponent(deposit.assignedAccount!.iban)}`,
    `amount=${major}`,
  ]) {
    const found = await viewer.get(`/deposits?merchant=${deposit.merchantId}&${query}`);
    t.is(found.status, 200, query);
    t.true(found.html.includes(`href="/deposits/${deposit.id}"`), query);
  }
  t.false((await viewer.get(`/deposits?merchant=${deposit.merchantId}&amount=${major}&status=completed`)).html.includes(`href="/deposits/${deposit.id}"`), "the amount combines with the status");
  t.false((await viewer.get(`/deposits?merchant=${deposit.merchantId}&customer=someone-else`)).html.includes(`href="/deposits/${deposit.id}"`));
  const badAmount = await viewer.get("/deposits?amount=lots&lang=en");
  t.is(badAmount.status, 400);
  t.true(badAmount.html.includes("Enter an amount"));
  t.is((await viewer.get("/deposits?iban=TR12")).status, 400, "the deposit service refuses an IBAN that is not one");

  const byId = await viewer.get(`/deposits?q=${deposit.id}`);
  t.true(byId.html.includes(`href="/deposits/${deposit.id}"`));
  const byProcess = await viewer.get(`/deposits?q=${deposit.processId}&merchant=${deposit.merchantId}`);
  t.true(byProcess.html.includes(`href="/deposits/${deposit.id}"`));

  const detail = await viewer.get(`/deposits/${deposit.id}?lang=en`);
  t.is(detail.status, 200);
  t.true(detail.html.includes("Timeline"));
  t.true(detail.html.includes("Callbacks to the merchant"));
  t.false(detail.html.includes(`action="/deposits/${deposit.id}/confirm"`), "no action is offered to a viewer");
  const tr = await viewer.get(`/deposits/${deposit.id}?lang=tr`);
  t.true(tr.html.includes("Zaman çizelgesi"));
  t.true(tr.html.includes("Bekliyor"));
});

const nameOf = async (merchantId: string) => (await stack.merchants.getMerchant({ merchantId })).merchant!.name;

test.serial("names first: the merchant's name beside its id, a select of merchants by name that filters, and live or sandbox deposits by the mode, never both", async (t) => {
  const live = await merchantDeposit(stack);
  const play = await merchantDeposit(stack, { sandbox: true });
  const otherPlay = await merchantDeposit(stack, { sandbox: true });
  const viewer = await signedInAs(stack.c, "viewer-dep-names@example.com", "viewer");
  const has = (html: string, d: { id: string }) => html.includes(`href="/deposits/${d.id}"`);

  const liveList = await viewer.get("/deposits?lang=en&mode=live");
  t.true(has(liveList.html, live));
  t.false(has(liveList.html, play) || has(liveList.html, otherPlay), "live mode shows no sandbox deposit");
  const liveName = await nameOf(live.merchantId);
  t.true(liveList.html.includes(`<a href="/merchants/${live.merchantId}">${liveName}</a> <small><code class="id">${live.merchantId}</code></small>`), "the name, with the id beside it");
  t.regex(liveList.html, /<select[^>]* id="field-merchant" name="merchant"><option value="">Every merchant<\/option>/);
  t.true(liveList.html.includes(`<option value="${play.merchantId}">${await nameOf(play.merchantId)} (${play.merchantId})</option>`));
  t.regex(liveList.html, /<optgroup label="Live merchants">.*<optgroup label="Sandbox merchants">/s, "the mode's merchants first");
  t.true(liveList.html.includes(`Ayşe Yılmaz <small><code class="id">c1</code></small>`), "the customer by name, the id beside it");

  // The cookie remembers the mode: the filter form's own submission (no mode in it) stays in sandbox.
  const sandboxList = await viewer.get("/deposits?mode=sandbox&lang=en");
  t.true(has(sandboxList.html, play) && has(sandboxList.html, otherPlay));
  t.false(has(sandboxList.html, live), "sandbox mode shows no live deposit");
  t.regex(sandboxList.html, /<optgroup label="Sandbox merchants">.*<optgroup label="Live merchants">/s);
  const chosen = await viewer.get(`/deposits?merchant=${play.merchantId}`);
  t.true(has(chosen.html, play));
  t.false(has(chosen.html, otherPlay), "the select filters by the merchant chosen");
  t.true(chosen.html.includes(`<option value="${play.merchantId}" selected>`));
  t.false(has((await viewer.get(`/deposits?merchant=${live.merchantId}`)).html, live), "a live merchant's deposit is not in sandbox mode");

  const tr = await viewer.get("/deposits?lang=tr&mode=live");
  t.true(tr.html.includes("Tüm üye işyerleri") && tr.html.includes("Canlı üye işyerleri"));
  const detail = await viewer.get(`/deposits/${live.id}?lang=en`);
  t.true(detail.html.includes(`<a href="/merchants/${live.merchantId}">${liveName}</a>`), "the deposit's page names its merchant");
  t.true(detail.html.includes(`<code class="id">${live.assignedAccount!.iban}</code>`) && detail.html.includes(live.assignedAccount!.bankName));
});

test.serial("an operator confirms a deposit: 303 to its page, the deposit service has it completed and the timeline shows who did it", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const operator = await signedInAs(stack.c, "ops-dep@example.com", "operator");
  const res = await postFrom(operator, `/deposits/${deposit.id}`, `/deposits/${deposit.id}/confirm`, { amount: "500", transferId: "" });
  t.is(res.status, 303);
  t.is(res.location, `/deposits/${deposit.id}?done=confirm`);
  t.is(await statusOf(deposit.id), DepositStatus.COMPLETED);
  const after = await operator.get(`${res.location!}&lang=en`);
  t.true(after.html.includes("The deposit was confirmed."));
  t.true(after.html.includes("Deposit confirmed") && after.html.includes("ops-dep@example.com"), "the audit's line in the timeline, the action in words");
  t.false(after.html.includes("ConfirmDeposit"), "never the RPC's name");
});

test.serial("an operator rejects a deposit with a reason; without one the field says so and nothing changes", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const operator = await signedInAs(stack.c, "ops-rej@example.com", "operator");
  const empty = await postFrom(operator, `/deposits/${deposit.id}?lang=en`, `/deposits/${deposit.id}/reject`, { reason: " " });
  t.is(empty.status, 400);
  t.true(empty.html.includes('aria-invalid="true"'));
  t.is(await statusOf(deposit.id), DepositStatus.PENDING);
  const res = await postFrom(operator, `/deposits/${deposit.id}`, `/deposits/${deposit.id}/reject`, { reason: "customer called: wrong amount" });
  t.is(res.status, 303);
  t.is(await statusOf(deposit.id), DepositStatus.FAILED);
});

test.serial("a viewer replaying a confirm gets the service's 403 and the deposit stays pending; a post without the CSRF token is refused", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const viewer = await signedInAs(stack.c, "viewer-dep-replay@example.com", "viewer");
  const res = await postFrom(viewer, `/deposits/${deposit.id}?lang=en`, `/deposits/${deposit.id}/confirm`, { amount: "", transferId: "" });
  t.is(res.status, 403);
  t.regex(res.html, /role="alert">The service refused: your role may not do this/);
  const operator = await signedInAs(stack.c, "ops-dep-csrf@example.com", "operator");
  t.is((await operator.post(`/deposits/${deposit.id}/reject`, { reason: "no token" })).status, 403);
  t.is(await statusOf(deposit.id), DepositStatus.PENDING);
});

test.serial("confirming a large live deposit waits for a second operator: the page links the approval and the deposit stays pending", async (t) => {
  const deposit = await merchantDeposit(stack, { amount: 2_000_000n });
  const operator = await signedInAs(stack.c, "ops-dep-live@example.com", "operator");
  const res = await postFrom(operator, `/deposits/${deposit.id}`, `/deposits/${deposit.id}/confirm`, { amount: "", transferId: "" });
  await waitingApproval(t, stack, operator, res, "deposit");
  t.is(await statusOf(deposit.id), DepositStatus.PENDING);
});
