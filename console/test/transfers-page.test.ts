import test from "ava";
import { TransferStatus } from "@payments/contracts/deposit";
import { merchantDeposit, postFrom, reportTo, shortTransfer, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const statusOf = async (id: string) => (await stack.deposits.getTransfer({ transferId: id })).transfer!.status;

test.serial("a viewer sees the open transfers oldest first with the reason, score and candidates, and a transfer's page without any action", async (t) => {
  const deposit = await merchantDeposit(stack);
  const short = await reportTo(stack, deposit, 49_000n, `odeme ${deposit.reference}`);
  t.is(short.status, TransferStatus.REVIEW);
  const viewer = await signedInAs(stack.c, "viewer-q@example.com", "viewer");
  const page = await viewer.get("/transfers?lang=en");
  t.is(page.status, 200);
  t.regex(page.html, /<caption>Open transfers, oldest first<\/caption>/);
  t.true(page.html.includes(`href="/transfers/${short.id}"`));
  t.true(page.html.includes("TRY\u00a0490.00"));
  t.true(page.html.includes("In review"));

  const detail = await viewer.get(`/transfers/${short.id}`);
  t.is(detail.status, 200);
  t.true(detail.html.includes(deposit.id), "the deposit in review is named");
  t.false(detail.html.includes('name="decision"'), "no action is offered to a viewer");
  const tr = await viewer.get(`/transfers/${short.id}?lang=tr`);
  t.true(tr.html.includes("İncelemede"));
});

test.serial("names first: the queue shows each transfer's merchant, receiving account and bank by name, and only the mode's transfers", async (t) => {
  const live = await merchantDeposit(stack);
  const liveShort = await reportTo(stack, live, 40_000n, `odeme ${live.reference}`);
  const play = await merchantDeposit(stack, { sandbox: true });
  const playShort = await reportTo(stack, play, 30_000n, `odeme ${play.reference}`);
  const merchantName = (await stack.merchants.getMerchant({ merchantId: live.merchantId })).merchant!.name;
  const account = live.assignedAccount!;
  const viewer = await signedInAs(stack.c, "viewer-q-names@example.com", "viewer");
  const has = (html: string, id: string) => html.includes(`href="/transfers/${id}"`);

  const liveQueue = await viewer.get("/transfers?lang=en&mode=live");
  t.true(has(liveQueue.html, liveShort.id));
  t.false(has(liveQueue.html, playShort.id), "a sandbox transfer is not in live mode");
  t.regex(liveQueue.html, /<th scope="col">Merchant<\/th><th scope="col">Receiving account<\/th><th scope="col">Bank<\/th>/);
  t.true(liveQueue.html.includes(`<a href="/merchants/${live.merchantId}">${merchantName}</a> <small><code class="id">${live.merchantId}</code></small>`), "the merchant of the deposit in review, by name");
  t.true(liveQueue.html.includes(`${account.accountName} · ${account.bankName} <small><code class="id">${account.iban}</code></small>`), "the receiving account by name and bank");
  t.true(liveQueue.html.includes(`${account.bankName} <small><code class="id">${account.bankId}</code></small>`), "the bank by name");
  t.regex(liveQueue.html, /\d+ transfers of this page are sandbox money/);

  const sandboxQueue = await viewer.get("/transfers?mode=sandbox&lang=tr");
  t.true(has(sandboxQueue.html, playShort.id));
  t.false(has(sandboxQueue.html, liveShort.id), "a live transfer is not in sandbox mode");
  t.regex(sandboxQueue.html, /havale canlı para ve burada gösterilmiyor/);

  const detail = await viewer.get(`/transfers/${liveShort.id}?lang=en`);
  t.true(detail.html.includes(`<a href="/merchants/${live.merchantId}">${merchantName}</a>`), "the transfer's page names its merchant");
  t.true(detail.html.includes(`<dt>Receiving account</dt><dd>${account.accountName} · ${account.bankName}`));
});

test.serial("an operator completes a short payment in review: the page says so and the deposit service has it matched", async (t) => {
  const { short } = await shortTransfer(stack);
  const operator = await signedInAs(stack.c, "ops-complete@example.com", "operator");
  const res = await postFrom(operator, `/transfers/${short.id}`, `/transfers/${short.id}/resolve`, { decision: "complete", reason: "bank fee, accepted" });
  t.is(res.status, 303);
  t.is(res.location, `/transfers/${short.id}?done=complete`);
  t.is(await statusOf(short.id), TransferStatus.MATCHED);
  const after = await operator.get(res.location + "&lang=en");
  t.true(after.html.includes("The deposit was completed."));
  t.regex(after.html, /ops-complete(<\/span>)? <small><code class="id">ops-complete@example.com<\/code><\/small>/, "the history names who decided, by name with the email beside it");
});

test.serial("a viewer replaying a decision gets the service's PERMISSION_DENIED with 403 and nothing changes", async (t) => {
  const { short } = await shortTransfer(stack, 48_000n);
  const viewer = await signedInAs(stack.c, "viewer-replay@example.com", "viewer");
  const res = await postFrom(viewer, `/transfers/${short.id}?lang=en`, `/transfers/${short.id}/resolve`, { decision: "complete", reason: "replayed" });
  t.is(res.status, 403);
  t.regex(res.html, /role="alert">The service refused: your role may not do this/);
  t.is(await statusOf(short.id), TransferStatus.REVIEW);
});

test.serial("an operator's return (finance's decision) is refused by the service, shown, and changes nothing", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const stray = await reportTo(stack, deposit, 777n, "no reference at all", "KEMAL SUNAL");
  t.is(stray.status, TransferStatus.UNMATCHED);
  const operator = await signedInAs(stack.c, "ops-return@example.com", "operator");
  const detail = await operator.get(`/transfers/${stray.id}`);
  t.false(detail.html.includes('value="return"'), "the return form is hidden from an operator");
  const res = await postFrom(operator, `/transfers/${stray.id}?lang=tr`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "no such order", iban: "", recipientName: "" });
  t.is(res.status, 403);
  t.true(res.html.includes("Servis reddetti: rolünüz bunu yapmaya yetkili değil"));
  t.is(await statusOf(stray.id), TransferStatus.UNMATCHED);
});

test.serial("a decision without the CSRF token is refused before the service is asked", async (t) => {
  const deposit = await merchantDeposit(stack, { sandbox: true });
  const short = await reportTo(stack, deposit, 47_000n, `odeme ${deposit.reference}`);
  const operator = await signedInAs(stack.c, "ops-csrf@example.com", "operator");
  const res = await operator.post(`/transfers/${short.id}/resolve`, { decision: "complete", reason: "no token" });
  t.is(res.status, 403);
  t.is(await statusOf(short.id), TransferStatus.REVIEW);
});

test.serial("finance returning a live transfer is told it waits for a second operator, with a link to the approval; a missing reason is shown on its field", async (t) => {
  const deposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, 1_234n, "no reference", "");
  const finance = await signedInAs(stack.c, "fin-return@example.com", "finance");
  const detail = await finance.get(`/transfers/${stray.id}?lang=en`);
  t.regex(detail.html, /Required: the bank named no sender/);

  const noReason = await postFrom(finance, `/transfers/${stray.id}?lang=en`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "", iban: "", recipientName: "Kemal Sunal" });
  t.is(noReason.status, 400);
  t.true(noReason.html.includes('aria-invalid="true"'));

  const res = await postFrom(finance, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "no such order", iban: "", recipientName: "Kemal Sunal" });
  t.is(res.status, 303);
  const approvalId = new URL(res.location!, stack.c.url).searchParams.get("approval");
  t.truthy(approvalId);
  const shown = await finance.get(res.location! + "&lang=en");
  t.true(shown.html.includes("Waiting for a second operator"));
  t.true(shown.html.includes(`href="/approvals/deposit/${approvalId}"`));
  t.is(await statusOf(stray.id), TransferStatus.UNMATCHED, "nothing moves before the approval");
});
