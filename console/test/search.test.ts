import test from "ava";
import type { Browser } from "./harness.js";
import { newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { merchantDeposit, postFrom, reportTo, signedInAs, type Stack, stackForTests } from "./service-harness.js";

// One search box on both sides (issue 33): an id, a reference, a process id, an IBAN or a name
// leads to the thing — one exact hit is a 303 to its page, several a list with names, none says
// so — and a merchant's user finds only their merchant's things: another merchant's id is the
// same "nothing found" as an id that does not exist.

let stack: Stack;
let operator: Browser;
stackForTests(test, async (s) => {
  stack = s;
  operator = await signedInAs(stack.c, "seda@example.com", "finance");
});

const search = (browser: Browser, path: string, q: string) => browser.get(`${path}?q=${encodeURIComponent(q)}&lang=en`);

test.serial("an operator's id, reference or approval is one hit: a 303 to its page; a name shared by several is a list with names; nothing is said so", async (t) => {
  const deposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, 2_500n, "unknown payment", "KEMAL SUNAL");
  t.is((await search(operator, "/search", deposit.id)).location, `/deposits/${deposit.id}`);
  t.is((await search(operator, "/search", stray.id)).location, `/transfers/${stray.id}`);
  t.is((await search(operator, "/search", deposit.merchantId)).location, `/merchants/${deposit.merchantId}`);
  t.is((await search(operator, "/search", `  ${deposit.reference} `)).location, `/deposits/${deposit.id}`);
  const asked = await postFrom(operator, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "no such order", iban: "", recipientName: "" });
  const approvalId = new URL(asked.location!, stack.c.url).searchParams.get("approval")!;
  t.is((await search(operator, "/search", approvalId)).location, `/approvals/deposit/${approvalId}`);

  // An IBAN: the deposits paid to it (with spaces, as people copy it).
  const iban = deposit.assignedAccount!.iban;
  const byIban = await search(operator, "/search", iban.replace(/(.{4})/g, "$1 "));
  t.true(byIban.location === `/deposits/${deposit.id}` || byIban.html.includes(`href="/deposits/${deposit.id}"`));

  await merchantDeposit(stack);
  const several = await search(operator, "/search", "Ayşe Yıl");
  t.is(several.status, 200);
  t.regex(several.html, /<caption>What was found for “Ayşe Yıl”<\/caption>/);
  t.true(several.html.includes(`href="/deposits/${deposit.id}">Ayşe Yılmaz</a>`), "names before ids");
  const none = await search(operator, "/search", "dep_doesnotexist");
  t.is(none.status, 200);
  t.true(none.html.includes("Nothing found for “dep_doesnotexist”."));
  t.true((await operator.get("/search?q=zzqq-nothing&lang=tr")).html.includes("“zzqq-nothing” için bir şey bulunamadı."));
  t.regex(none.html, /<form method="get" action="\/search" role="search" class="search-box">/, "the box is in the header");
});

test.serial("a merchant's user finds their own payments by id, process id or reference; another merchant's ids are 'nothing found', as an unknown id is", async (t) => {
  const mine = await newMerchant(stack, { name: "Benim Dükkânım" });
  const theirs = await newMerchant(stack, { name: "Onların Dükkânı" });
  const { deposit } = await stack.deposits.createDeposit({ merchantId: mine, processId: "order-mine-1", amount: 12_345n, customer: { id: "c9", name: "Zeynep Kaya", username: "zeynep" } });
  const { deposit: other } = await stack.deposits.createDeposit({ merchantId: theirs, processId: "order-theirs-1", amount: 9_999n, customer: { id: "c8", name: "Zeynep Başka", username: "zb" } });
  const user = await signedInMerchantUser(stack, mine, "owner@benim.example.com", "viewer");

  t.is((await search(user, "/merchant/search", deposit!.id)).location, `/merchant/deposits/${deposit!.id}`);
  t.is((await search(user, "/merchant/search", "order-mine-1")).location, `/merchant/deposits/${deposit!.id}`);
  t.is((await search(user, "/merchant/search", deposit!.reference)).location, `/merchant/deposits/${deposit!.id}`);
  t.is((await search(user, "/merchant/search", "Zeynep")).location, `/merchant/deposits/${deposit!.id}`, "only their own Zeynep");

  for (const q of [other!.id, "order-theirs-1", other!.reference, theirs]) {
    const res = await search(user, "/merchant/search", q);
    t.is(res.status, 200, q);
    t.true(res.html.includes(`Nothing found for “${q}”.`), q);
    t.false(res.html.includes("Onların"), q);
  }
  const unknown = await search(user, "/merchant/search", "dep_doesnotexist");
  t.is(unknown.status, 200);
  t.true(unknown.html.includes("Nothing found for “dep_doesnotexist”."));
  t.regex(unknown.html, /<form method="get" action="\/merchant\/search" role="search" class="search-box">/, "the box is in the header");
  // The operators' search is not theirs, nor theirs an operator's.
  t.not((await user.get(`/search?q=${deposit!.id}`)).location, `/deposits/${deposit!.id}`);
  t.not((await operator.get(`/merchant/search?q=${deposit!.id}`)).location, `/merchant/deposits/${deposit!.id}`);
});
