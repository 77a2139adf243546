import test from "ava";
import type { Deposit } from "@payments/contracts/deposit";
import { merchantDeposit, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
let deposit: Deposit;
stackForTests(test, async (s) => {
  stack = s;
  deposit = await merchantDeposit(stack, { sandbox: true });
  await reportTo(stack, deposit, 50_000n, `odeme ${deposit.reference}`);
  const other = await merchantDeposit(stack, { sandbox: true });
  await reportTo(stack, other, 1_000n, "stray", "KEMAL SUNAL");
});

test("finance sees every account balanced and the ledger agreeing, for all time and for a period", async (t) => {
  const finance = await signedInAs(stack.c, "fin-rec@example.com", "finance");
  const page = await finance.get("/reconciliation?lang=en&mode=sandbox");
  t.is(page.status, 200);
  t.true(page.html.includes("Every account is balanced."));
  t.true(page.html.includes("<caption>Money received per receiving account, and where it went</caption>"));
  const account = deposit.assignedAccount!;
  t.true(page.html.includes(`${account.accountName} · ${account.bankName} <small><code class="id">${account.iban}</code></small>`), "the receiving account by name and bank, the IBAN beside it");
  t.regex(page.html, /The ledger agrees with the balances of \d+ merchant currencies/);
  const empty = await finance.get("/reconciliation?lang=en&from=2020-01-01&to=2020-01-02");
  t.true(empty.html.includes("No transfer was reported in this period."));
  t.is((await finance.get("/reconciliation?from=tomorrow")).status, 400);
});

test("one mode at a time: live mode leaves the sandbox accounts out and says so", async (t) => {
  const finance = await signedInAs(stack.c, "fin-rec-mode@example.com", "finance");
  const live = await finance.get("/reconciliation?lang=en&mode=live");
  t.is(live.status, 200);
  t.false(live.html.includes(deposit.assignedAccount!.iban), "no sandbox account in live mode");
  t.regex(live.html, /\d+ receiving accounts of the other mode are not shown/);
  const tr = await finance.get("/reconciliation?lang=tr&mode=sandbox");
  t.true(tr.html.includes(deposit.assignedAccount!.iban));
});

test("a viewer and an operator are refused by the deposit service (finance's), shown with 403", async (t) => {
  for (const [email, role] of [["viewer-rec@example.com", "viewer"], ["ops-rec@example.com", "operator"]] as const) {
    const browser = await signedInAs(stack.c, email, role);
    const page = await browser.get("/reconciliation?lang=tr");
    t.is(page.status, 403, role);
    t.true(page.html.includes("Servis reddetti: rolünüz bunu yapmaya yetkili değil"), role);
  }
});
