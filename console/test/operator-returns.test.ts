import test from "ava";
import { TransferReturnStatus, type TransferReturn } from "@payments/contracts/payout";
import { eventually } from "@payments/testing";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";

// The operators' transfer returns (console/src/operator/transfer-returns): the queue of live returns
// the manual connector leaves to people, one transfer's attempts, and finance's decisions on them,
// on the five real services (the payout worker and its live `manual` connector included).

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

/**
 * A live merchant's stray transfer (no reference) returned to its sender by an operator's decision,
 * approved by a second operator (the test approver): the payout service's return, left by the live
 * connector to an operator.
 */
async function awaitingReturn(amount = 123_450n, sender = "KEMAL ŞAHİN"): Promise<TransferReturn> {
  const deposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, amount, "no reference at all", sender);
  await stack.deposits.resolveTransfer({ transferId: stray.id, actor: "test-admin@example.com", reason: "no such order", decision: { case: "return", value: { iban: "", recipientName: "" } } });
  let found: TransferReturn | undefined;
  await eventually(async () => {
    found = (await stack.payouts.listTransferReturns({ transferId: stray.id })).transferReturns[0];
    return found?.awaitingOperator === true;
  }, "the return awaits an operator");
  return found!;
}

const returnOf = async (r: TransferReturn) => (await stack.payouts.listTransferReturns({ transferId: r.transferId })).transferReturns.find((x) => x.id === r.id)!;

test.serial("an approved live return waiting for an operator is in the queue and counted on home, named and in lira, in English and Turkish; a viewer gets no decision", async (t) => {
  const r = await awaitingReturn();
  const viewer = await signedInAs(stack.c, "viewer-trr@example.com", "viewer");
  const en = await viewer.get("/transfer-returns?lang=en");
  t.is(en.status, 200);
  t.true(en.html.includes("Returns waiting for an operator, newest first"));
  t.true(en.html.includes(`href="/transfer-returns/${r.transferId}"`));
  t.true(en.html.includes("KEMAL ŞAHİN"));
  t.true(en.html.includes("TRY\u00a01,234.50"));
  t.true(en.html.includes("Being paid (waiting for an operator)"));
  const tr = await viewer.get("/transfer-returns?lang=tr");
  t.true(tr.html.includes("Operatör bekleyen iadeler, en yeni önce"));
  t.true(tr.html.includes("₺1.234,50"));
  t.true(tr.html.includes("Ödeniyor (operatör bekliyor)"));
  t.true(tr.html.includes('href="/transfer-returns"'), "the navigation links the area");

  const detail = await viewer.get(`/transfer-returns/${r.transferId}?lang=en`);
  t.is(detail.status, 200);
  t.true(detail.html.includes("Attempt 1: TRY\u00a01,234.50 to KEMAL ŞAHİN"));
  t.true(detail.html.includes("Finance decides this return."));
  t.false(detail.html.includes(`/${r.id}/complete"`), "no form for a viewer");
  t.true((await viewer.get(`/transfer-returns/${r.transferId}?lang=tr`)).html.includes("1. deneme: ₺1.234,50, alıcı KEMAL ŞAHİN"));

  const home = await viewer.get("/?lang=en");
  t.regex(home.html, /<a href="\/transfer-returns">Transfer returns awaiting an operator<\/a><\/th>\s*<td[^>]*class="num">[1-9]\d*\+?<\/td>/);
  const homeTr = await viewer.get("/?lang=tr");
  t.true(homeTr.html.includes("Operatör bekleyen havale iadeleri"));

  const all = await viewer.get("/transfer-returns?status=processing&lang=en");
  t.true(all.html.includes(`href="/transfer-returns/${r.transferId}"`));
  t.false((await viewer.get("/transfer-returns?status=completed")).html.includes(`href="/transfer-returns/${r.transferId}"`));
});

test.serial("finance marks one as paid with the bank's reference and another as failed with a reason code; an empty one is a clear error that changes nothing", async (t) => {
  const paid = await awaitingReturn(5_000n);
  const failed = await awaitingReturn(6_000n);
  const finance = await signedInAs(stack.c, "fin-trr@example.com", "finance");
  const page = `/transfer-returns/${paid.transferId}?lang=en`;
  const detail = await finance.get(page);
  t.true(detail.html.includes(`action="/transfer-returns/${paid.transferId}/${paid.id}/complete"`));

  const empty = await postFrom(finance, page, `/transfer-returns/${paid.transferId}/${paid.id}/complete`, { bankReference: "  " });
  t.is(empty.status, 400);
  t.true(empty.html.includes("Give the bank&#39;s reference."));
  t.true(empty.html.includes('aria-invalid="true"'));
  t.is((await returnOf(paid)).status, TransferReturnStatus.PROCESSING);

  const done = await postFrom(finance, page, `/transfer-returns/${paid.transferId}/${paid.id}/complete`, { bankReference: "EFT-RET-0001" });
  t.is(done.status, 303);
  t.is(done.location, `/transfer-returns/${paid.transferId}?done=complete&id=${paid.id}`);
  t.like(await returnOf(paid), { status: TransferReturnStatus.COMPLETED, bankReference: "EFT-RET-0001", awaitingOperator: false });
  const after = await finance.get(`${done.location!}&lang=tr`);
  t.true(after.html.includes(`${paid.id} iadesi ödendi olarak işaretlendi.`));
  t.true(after.html.includes("EFT-RET-0001"));
  t.false((await finance.get("/transfer-returns")).html.includes(`href="/transfer-returns/${paid.transferId}"`), "no longer in the queue");

  const noReason = await postFrom(finance, `/transfer-returns/${failed.transferId}?lang=tr`, `/transfer-returns/${failed.transferId}/${failed.id}/fail`, { reason: "" });
  t.is(noReason.status, 400);
  t.true(noReason.html.includes("Bir neden kodu girin."));
  t.is((await returnOf(failed)).status, TransferReturnStatus.PROCESSING);
  const res = await postFrom(finance, `/transfer-returns/${failed.transferId}`, `/transfer-returns/${failed.transferId}/${failed.id}/fail`, { reason: "ACCOUNT_CLOSED" });
  t.is(res.status, 303);
  t.like(await returnOf(failed), { status: TransferReturnStatus.FAILED, failureReason: "ACCOUNT_CLOSED" });
  t.true((await finance.get(`/transfer-returns/${failed.transferId}?lang=en`)).html.includes("Failed (ACCOUNT_CLOSED)"));
});

test.serial("an operator (below finance) sees no form, and a replayed decision gets the service's 403 and changes nothing; without the CSRF token it is refused", async (t) => {
  const r = await awaitingReturn(7_000n);
  const operator = await signedInAs(stack.c, "ops-trr@example.com", "operator");
  const page = `/transfer-returns/${r.transferId}?lang=en`;
  t.false((await operator.get(page)).html.includes(`/${r.id}/complete"`));
  const replay = await postFrom(operator, page, `/transfer-returns/${r.transferId}/${r.id}/complete`, { bankReference: "EFT-X" });
  t.is(replay.status, 403);
  t.regex(replay.html, /role="alert">The service refused: your role may not do this/);
  const failReplay = await postFrom(operator, page, `/transfer-returns/${r.transferId}/${r.id}/fail`, { reason: "ACCOUNT_CLOSED" });
  t.is(failReplay.status, 403);
  const finance = await signedInAs(stack.c, "fin-trr-csrf@example.com", "finance");
  t.is((await finance.post(`/transfer-returns/${r.transferId}/${r.id}/complete`, { bankReference: "EFT-X" })).status, 403);
  t.like(await returnOf(r), { status: TransferReturnStatus.PROCESSING, awaitingOperator: true, bankReference: "" });
});

test.serial("a transfer without returns, or an id that cannot be one, is not found", async (t) => {
  const viewer = await signedInAs(stack.c, "viewer-trr-404@example.com", "viewer");
  t.is((await viewer.get("/transfer-returns/trf_nothing_here")).status, 404);
  t.is((await viewer.get("/transfer-returns/bad%20id")).status, 404);
});

