import test from "ava";
import { UnderpaymentRule } from "@payments/contracts/merchant";
import { PayoutService, WithdrawalApprovalState, WithdrawalStatus } from "@payments/contracts/payout";
import { statementCsv, statementRecord } from "@payments/records";
import { createServiceClient, eventually, testMerchantVoice } from "@payments/testing";
import { formatTime, turkeyDay } from "../src/shared/format.js";
import { csrfOf, type Browser } from "./harness.js";
import { newMerchant, signedInMerchantUser as signedInUser } from "./merchant-harness.js";
import { type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const IBAN = "TR330006100519786457841326";
/** Today as Türkiye counts it: the statement's days are Türkiye's. */
const today = () => turkeyDay(new Date());
const DAY_MS = 86_400_000;
/** 00:00 of a day in Türkiye (UTC+3 all year). */
const turkeyMidnight = (day: string) => Date.parse(`${day}T00:00:00+03:00`);

/** A merchant user signed in, looking at the mode of the merchant's money (the tests' merchants are sandbox ones unless told). */
async function signedInMerchantUser(...args: Parameters<typeof signedInUser>): Promise<Browser> {
  const browser = await signedInUser(...args);
  await browser.get("/merchant?mode=sandbox");
  return browser;
}

/** A sandbox merchant with `lira` in its balance (an admin's adjustment). */
async function fundedMerchant(lira: number): Promise<string> {
  const merchantId = await newMerchant(stack, { sandbox: true });
  await stack.payouts.adjustBalance({ merchantId, amount: BigInt(lira * 100), currency: "TRY", reason: "test funds" });
  return merchantId;
}

/** The withdrawal form's fields as the page rendered them (its CSRF token and one-time form token). */
async function withdrawForm(browser: Browser): Promise<{ _csrf: string; formToken: string }> {
  const page = await browser.get("/merchant/money");
  const token = /name="formToken" value="([^"]+)"/.exec(page.html)?.[1];
  if (!token) throw new Error(`no form token on the money page (${page.status})`);
  return { _csrf: csrfOf(page.html), formToken: token };
}

/** The form sent, then its review confirmed: the two steps a person takes. */
async function withdraw(browser: Browser, fields: Record<string, string>, form?: { _csrf: string; formToken: string }) {
  const review = await browser.post("/merchant/money/withdrawals", { ...(form ?? (await withdrawForm(browser))), ...fields });
  if (review.status !== 200) return review;
  return browser.post("/merchant/money/withdrawals", { ...hiddenOf(review.html), step: "confirm" });
}

/** The hidden fields of the review's confirmation form. */
function hiddenOf(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!.replace(/&amp;/g, "&").replace(/&#39;/g, "'").replace(/&quot;/g, '"');
  return fields;
}

async function withdrawals(merchantId: string) {
  return (await stack.payouts.listWithdrawals({ merchantId, limit: 100 })).withdrawals;
}

test("the statement page and its CSV give the payout service's numbers, through the same record and CSV as GET /v1/statement", async (t) => {
  const merchantId = await fundedMerchant(1500);
  await stack.payouts.adjustBalance({ merchantId, amount: -25_050n, currency: "TRY", reason: "a fee" });
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-statement.test", "finance");

  const day = today();
  const page = await finance.get(`/merchant/money?from=${day}&to=${day}&lang=en`);
  t.is(page.status, 200, page.html);
  t.regex(page.html, /1\.249,50|1249\.50|1,249\.50/, "the closing balance, 1500 - 250.50");
  t.regex(page.html, /adjustment/);

  // The default period (this month) answers too.
  t.is((await finance.get("/merchant/money")).status, 200);

  const csv = await finance.get(`/merchant/statement.csv?from=${day}&to=${day}`);
  t.is(csv.status, 200);
  t.regex(csv.headers.get("content-type") ?? "", /text\/csv/);
  t.regex(csv.headers.get("content-disposition") ?? "", /attachment; filename="statement-TRY-/);
  // Türkiye's day: from its 00:00 (21:00 UTC the day before) to its 24:00.
  const startMs = turkeyMidnight(day);
  const res = await stack.payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(startMs), toMs: BigInt(startMs + DAY_MS), limit: 10_000 });
  const record = statementRecord(res, day, day);
  t.is(record.openingBalance, 0);
  t.is(record.closingBalance, 124_950);
  t.is(record.movements.length, 2);
  // The whole file is what the API's statement CSV is for the same answer (the text decoder drops the BOM).
  t.is(csv.html, statementCsv(record, startMs, startMs + DAY_MS, "en"));
  t.regex(csv.html, /closing_balance,,,124950,1249\.50/);
  t.regex(csv.html, new RegExp(`\n${new Date(startMs).toISOString().replace(/\./g, "\\.")},opening_balance`), "the opening row at Türkiye's midnight");

  // Turkish Excel: `;` and decimal commas.
  const tr = await finance.get(`/merchant/statement.csv?from=${day}&to=${day}&locale=tr`);
  t.regex(tr.html, /closing_balance;/);
  t.regex(tr.html, /124950;1249,50/);

  // A bad period is a 400 naming the date, nothing asked.
  const bad = await finance.get(`/merchant/money?from=2026-02-30&to=${day}`);
  t.is(bad.status, 400);
  t.regex(bad.html, /aria-invalid="true"/);
  t.is((await finance.get(`/merchant/statement.csv?from=2020-01-01&to=2022-01-01`)).status, 400);
});

test("finance creates a withdrawal to a TR IBAN after its review; the same confirmation sent twice is the same withdrawal", async (t) => {
  const merchantId = await fundedMerchant(1000);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-withdraw.test", "finance");
  const form = await withdrawForm(finance);
  const review = await finance.post("/merchant/money/withdrawals", { ...form, amount: "250,50", iban: "TR33 0006 1005 1978 6457 8413 26", accountName: "Örnek Mağaza A.Ş." });
  t.is(review.status, 200, review.html);
  t.is((await withdrawals(merchantId)).length, 0, "the review creates nothing");
  const fields = { ...hiddenOf(review.html), step: "confirm" };
  t.is(hiddenOf(review.html).formToken, form.formToken);
  const res = await finance.post("/merchant/money/withdrawals", fields);
  t.is(res.status, 303, res.html);
  const id = /created=([A-Za-z0-9_-]+)/.exec(res.location ?? "")?.[1];
  t.truthy(id);
  const [w] = await withdrawals(merchantId);
  t.is(w?.id, id);
  t.is(w?.amount, 25_050n);
  t.is(w?.processId, `dashboard-${form.formToken}`);
  t.is(w?.iban, IBAN);
  t.is(w?.accountName, "Örnek Mağaza A.Ş.");
  t.is(w?.userName, "finance@money-withdraw.test");

  const again = await finance.post("/merchant/money/withdrawals", fields);
  t.is(again.status, 303);
  t.is(again.location, res.location, "the double confirmation lands on the first withdrawal");
  t.is((await withdrawals(merchantId)).length, 1);

  const shown = await finance.get(res.location!);
  t.regex(shown.html, new RegExp(`/merchant/withdrawals/${id}`));
});

test("the form's rules, in the page's words: a bad amount, an IBAN of another country or with wrong check digits, a long name; nothing is created", async (t) => {
  const merchantId = await fundedMerchant(1000);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-rules.test", "finance");
  const bad = async (fields: Record<string, string>) => finance.post("/merchant/money/withdrawals?lang=en", { ...(await withdrawForm(finance)), amount: "10", iban: IBAN, accountName: "Ayşe", ...fields });
  const amount = await bad({ amount: "0" });
  t.is(amount.status, 400);
  t.regex(amount.html, /id="withdraw-amount-error"/);
  const tooLong = await bad({ accountName: "x".repeat(201) });
  t.is(tooLong.status, 400);
  t.regex(tooLong.html, /id="withdraw-holder-error">At most 200 characters/);
  const german = await bad({ iban: "DE89370400440532013000" });
  t.is(german.status, 400);
  t.regex(german.html, /id="withdraw-iban-error">Only Turkish IBANs \(starting with TR\) can be paid/);
  const typo = await bad({ iban: "TR33 0006 1005 1978 6457 8413 27" });
  t.is(typo.status, 400);
  t.regex(typo.html, /id="withdraw-iban-error">This is not a valid IBAN: its check digits do not match/);
  t.regex(typo.html, /value="TR33 0006 1005 1978 6457 8413 27"/, "what was typed stays in the form");
  const turkish = await finance.post("/merchant/money/withdrawals?lang=tr", { ...(await withdrawForm(finance)), amount: "10", iban: "TR12", accountName: "Ayşe" });
  t.regex(turkish.html, /Türk IBAN&#39;ı 26 karakterdir/);
  const broke = await withdraw(finance, { amount: "5000", iban: IBAN, accountName: "Ayşe" });
  t.true(broke.status === 400 || broke.status === 409);
  t.regex(broke.html, /INSUFFICIENT_BALANCE/);
  t.is((await withdrawals(merchantId)).length, 0);
});

test("a viewer and a developer get 403 on the page; a viewer's replayed POST is refused and creates nothing; a POST without the CSRF token is 403", async (t) => {
  const merchantId = await fundedMerchant(1000);
  const viewer = await signedInMerchantUser(stack, merchantId, "viewer@money-roles.test", "viewer");
  const developer = await signedInMerchantUser(stack, merchantId, "dev@money-roles.test", "developer");
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-roles.test", "finance");
  t.is((await viewer.get("/merchant/money")).status, 403);
  t.is((await developer.get("/merchant/money")).status, 403);
  t.is((await viewer.get(`/merchant/statement.csv?from=${today()}&to=${today()}`)).status, 403);

  // The viewer replays the finance user's form with their own session's CSRF token (from a page they may see).
  const { formToken } = await withdrawForm(finance);
  const viewerCsrf = csrfOf((await viewer.get("/merchant/developers")).html);
  const replay = await viewer.post("/merchant/money/withdrawals", { _csrf: viewerCsrf, formToken, step: "confirm", amountMinor: "1000", iban: IBAN, accountName: "Ayşe" });
  t.is(replay.status, 403);
  t.is((await viewer.post("/merchant/money/threshold", { _csrf: viewerCsrf, threshold: "1" })).status, 403);
  // Finance may not set the threshold: the owner does.
  const financeCsrf = csrfOf((await finance.get("/merchant/money")).html);
  t.is((await finance.post("/merchant/money/threshold", { _csrf: financeCsrf, threshold: "1" })).status, 403);

  const noCsrf = await finance.post("/merchant/money/withdrawals", { formToken, step: "confirm", amountMinor: "1000", iban: IBAN, accountName: "Ayşe" });
  t.is(noCsrf.status, 403);
  t.is((await withdrawals(merchantId)).length, 0);
  t.is((await stack.merchants.getMerchant({ merchantId })).merchant?.withdrawalApprovalThreshold, undefined);
});

test("above the owner's threshold a withdrawal waits; its maker cannot approve it, a second finance user does", async (t) => {
  const merchantId = await fundedMerchant(2000);
  const owner = await signedInMerchantUser(stack, merchantId, "owner@money-four-eyes.test", "owner");
  const maker = await signedInMerchantUser(stack, merchantId, "maker@money-four-eyes.test", "finance");
  const checker = await signedInMerchantUser(stack, merchantId, "checker@money-four-eyes.test", "finance");

  const ownerPage = await owner.get("/merchant/money");
  const set = await owner.post("/merchant/money/threshold", { _csrf: csrfOf(ownerPage.html), threshold: "100" });
  t.is(set.status, 303, set.html);
  t.is((await stack.merchants.getMerchant({ merchantId })).merchant?.withdrawalApprovalThreshold, 10_000n);
  t.regex((await owner.get("/merchant/money")).html, /100[.,]00/);

  // Below the threshold: at once.
  const small = await withdraw(maker, { amount: "50", iban: IBAN, accountName: "Ayşe Yılmaz" });
  t.regex(small.location ?? "", /created=/);
  // Above: waits for a second user.
  const big = await withdraw(maker, { amount: "500", iban: IBAN, accountName: "Ayşe Yılmaz" });
  t.is(big.status, 303, big.html);
  const approvalId = /approval=([A-Za-z0-9_-]+)/.exec(big.location ?? "")?.[1];
  t.truthy(approvalId, big.location ?? "");
  t.is((await withdrawals(merchantId)).length, 1, "only the small one exists");
  const waiting = await maker.get(`${big.location!.replace(/#.*$/, "")}&lang=en`);
  t.regex(waiting.html, /waits for a second user/);
  // Nobody is offered Approve on their own request: the maker sees that a second user must.
  t.notRegex(waiting.html, new RegExp(`/merchant/money/approvals/${approvalId}/approve`));
  t.regex(waiting.html, /You asked for this: a second user of your company must approve it/);

  // The maker's own approval: the service refuses, and the page says so.
  const own = await maker.post(`/merchant/money/approvals/${approvalId}/approve`, { _csrf: csrfOf(waiting.html) });
  t.is(own.status, 403, own.html);
  t.is((await withdrawals(merchantId)).length, 1);

  const checkerPage = await checker.get("/merchant/money");
  t.regex(checkerPage.html, new RegExp(`/merchant/money/approvals/${approvalId}/approve`));
  const approved = await checker.post(`/merchant/money/approvals/${approvalId}/approve`, { _csrf: csrfOf(checkerPage.html) });
  t.is(approved.status, 303, approved.html);
  t.regex(approved.location ?? "", /outcome=ok/);
  const all = await withdrawals(merchantId);
  t.is(all.length, 2);
  t.true(all.some((w) => w.amount === 50_000n));
});

test("another merchant's approval id is not found, and nothing is decided", async (t) => {
  const merchantA = await fundedMerchant(2000);
  const merchantB = await fundedMerchant(10);
  await stack.merchants.setWithdrawalApproval({ merchantId: merchantA, threshold: 100n });
  const makerA = await signedInMerchantUser(stack, merchantA, "maker@money-idor.test", "finance");
  const big = await withdraw(makerA, { amount: "500", iban: IBAN, accountName: "Ayşe Yılmaz" });
  const approvalId = /approval=([A-Za-z0-9_-]+)/.exec(big.location ?? "")?.[1];
  t.truthy(approvalId, big.location ?? big.html);
  const financeB = await signedInMerchantUser(stack, merchantB, "finance@money-idor.test", "finance");
  const pageB = await financeB.get("/merchant/money");
  t.notRegex(pageB.html, new RegExp(approvalId!));
  const res = await financeB.post(`/merchant/money/approvals/${approvalId}/approve`, { _csrf: csrfOf(pageB.html) });
  t.is(res.status, 404, res.html);
  t.is((await withdrawals(merchantA)).length, 0);
});

test("an API key's withdrawal above the threshold waits on the Money page for owner or finance: holder, IBAN, key and the amount as the language writes it; approve sends it, reject cancels it and releases the amount", async (t) => {
  const merchantId = await fundedMerchant(60_000);
  await stack.merchants.setWithdrawalApproval({ merchantId, threshold: 10_000n });
  // The gateway speaking for an API key that is not trusted for automatic payouts.
  const key = createServiceClient(PayoutService, stack.services.server.url, { operator: null, merchant: testMerchantVoice(merchantId, { keyId: "pk_test_money" }) });
  const create = async (processId: string, amount: bigint) =>
    (await key.createWithdrawal({ merchantId, processId, amount, iban: IBAN, accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })).withdrawal!;
  const first = await create("api-money-1", 2_257_450n);
  const second = await create("api-money-2", 500_000n);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-api.test", "finance");

  const tr = await finance.get("/merchant/money?lang=tr");
  t.is(tr.status, 200, tr.html);
  t.regex(tr.html, /Onay bekleyen API çekimleri/);
  t.regex(tr.html, /₺22\.574,50/, "the amount as Türkiye writes it");
  const en = await finance.get("/merchant/money?lang=en");
  t.regex(en.html, /TRY\s22,574\.50/, "and as the English page writes it");
  t.regex(en.html, /Ayşe Yılmaz<br><small>TR330006100519786457841326<\/small>/, "the holder's name before the IBAN");
  t.regex(en.html, /<code>pk_test_money<\/code>/, "the key that asked");
  t.regex(en.html, new RegExp(`/merchant/money/api-withdrawals/${first.id}/approve`));
  t.regex(en.html, new RegExp(`/merchant/money/api-withdrawals/${second.id}/reject`));

  const approved = await finance.post(`/merchant/money/api-withdrawals/${first.id}/approve`, { _csrf: csrfOf(en.html) });
  t.is(approved.status, 303, approved.html);
  t.regex(approved.location ?? "", new RegExp(`apiDecided=${first.id}&apiOutcome=approved#api-approvals`));
  t.regex((await finance.get(`${approved.location!.replace(/#.*$/, "")}&lang=en`)).html, /Approved: the withdrawal .* will be sent/);
  await eventually(async () => (await withdrawals(merchantId)).find((w) => w.id === first.id)?.status === WithdrawalStatus.COMPLETED, "the approved withdrawal is sent and completed");

  const owner = await signedInMerchantUser(stack, merchantId, "owner@money-api.test", "owner");
  const rejected = await owner.post(`/merchant/money/api-withdrawals/${second.id}/reject`, { _csrf: csrfOf((await owner.get("/merchant/money")).html), reason: "not our customer" });
  t.is(rejected.status, 303, rejected.html);
  const cancelled = (await withdrawals(merchantId)).find((w) => w.id === second.id)!;
  t.like(cancelled, { status: WithdrawalStatus.CANCELLED, failureReason: "APPROVAL_REJECTED" });
  t.like(cancelled.approval, { note: "not our customer" });
  const balance = (await stack.payouts.getBalances({ merchantId })).balances.find((b) => b.currency === "TRY");
  t.like(balance, { held: 0n, available: 6_000_000n - 2_257_450n }, "the rejected amount is back, the approved one paid");
  t.regex((await owner.get("/merchant/money?lang=en")).html, /No API withdrawal waits for approval/);
});

test("who cannot decide an API withdrawal on the Money page: a developer or a viewer (403, nothing changes), another merchant's finance user (404), a made-up decision (404)", async (t) => {
  const merchantId = await fundedMerchant(1000);
  const other = await fundedMerchant(10);
  await stack.merchants.setWithdrawalApproval({ merchantId, threshold: 100n });
  const key = createServiceClient(PayoutService, stack.services.server.url, { operator: null, merchant: testMerchantVoice(merchantId) });
  const { withdrawal } = await key.createWithdrawal({ merchantId, processId: "api-guard-1", amount: 50_000n, iban: IBAN, accountName: "Ayşe Yılmaz", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" });
  const id = withdrawal!.id;
  for (const role of ["developer", "viewer"] as const) {
    const user = await signedInMerchantUser(stack, merchantId, `${role}@money-api-guard.test`, role);
    const csrf = csrfOf((await user.get("/merchant/developers")).html);
    t.is((await user.post(`/merchant/money/api-withdrawals/${id}/approve`, { _csrf: csrf })).status, 403, role);
    t.is((await user.post(`/merchant/money/api-withdrawals/${id}/reject`, { _csrf: csrf })).status, 403, role);
  }
  const stranger = await signedInMerchantUser(stack, other, "finance@money-api-other.test", "finance");
  const strangerPage = await stranger.get("/merchant/money");
  t.notRegex(strangerPage.html, new RegExp(id));
  t.is((await stranger.post(`/merchant/money/api-withdrawals/${id}/approve`, { _csrf: csrfOf(strangerPage.html) })).status, 404);
  t.is((await stranger.post(`/merchant/money/api-withdrawals/${id}/send`, { _csrf: csrfOf(strangerPage.html) })).status, 404);
  const still = (await withdrawals(merchantId)).find((w) => w.id === id)!;
  t.like(still, { status: WithdrawalStatus.PENDING });
  t.like(still.approval, { state: WithdrawalApprovalState.AWAITING });
});

test("the review: the bank read from the IBAN, the IBAN in groups of four, the amount as typed the Turkish way; nothing before the confirmation, one withdrawal however often it is confirmed", async (t) => {
  const merchantId = await fundedMerchant(5000);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-review.test", "finance");
  const garanti = (await stack.bankCatalog.listBanks({})).banks.find((b) => b.code === "0062")!;
  t.truthy(garanti, "the seeded bank list has Garanti (EFT code 0062)");
  // TR40 00062 …: the five digits after the check digits are Garanti's code.
  const review = await finance.post("/merchant/money/withdrawals?lang=tr", { ...(await withdrawForm(finance)), amount: "1.250,75", iban: "tr40 0006 2000 0000 0000 0000 01", accountName: "Örnek Mağaza A.Ş." });
  t.is(review.status, 200, review.html);
  t.regex(review.html, /Çekimi kontrol edin/);
  t.regex(review.html, /₺1\.250,75/, "the amount as Türkiye writes it");
  t.regex(review.html, /<code>TR40 0006 2000 0000 0000 0000 01<\/code>/, "the IBAN in groups of four");
  t.regex(review.html, /Örnek Mağaza A\.Ş\./);
  t.regex(review.html, new RegExp(garanti.name), "the bank's name, read from the IBAN");
  t.regex(review.html, /Test ortamı: gerçek para hareket etmez/, "a sandbox account's withdrawal says so");
  t.regex(review.html, /name="_csrf"/);
  t.is((await withdrawals(merchantId)).length, 0, "nothing before the confirmation");

  const hidden = hiddenOf(review.html);
  t.is(hidden.amountMinor, "125075");
  // A confirmation whose hidden amount was changed into something else is judged again: refused, nothing created.
  const tampered = await finance.post("/merchant/money/withdrawals?lang=en", { ...hidden, amountMinor: "12.5", step: "confirm" });
  t.is(tampered.status, 400);
  t.regex(tampered.html, /fill in the form again/);
  t.is((await withdrawals(merchantId)).length, 0);
  // "Change it": back to the form, filled, nothing created.
  const edit = await finance.post("/merchant/money/withdrawals?lang=en", { ...hidden, step: "edit" });
  t.is(edit.status, 200);
  t.regex(edit.html, /value="1,250\.75"/);
  t.regex(edit.html, new RegExp(`value="${hidden.formToken}"`), "the same form token: still one withdrawal");
  t.is((await withdrawals(merchantId)).length, 0);

  const [first, second] = await Promise.all([
    finance.post("/merchant/money/withdrawals", { ...hidden, step: "confirm" }),
    finance.post("/merchant/money/withdrawals", { ...hidden, step: "confirm" }),
  ]);
  t.is(first.status, 303, first.html);
  t.is(second.status, 303, second.html);
  const again = await finance.post("/merchant/money/withdrawals", { ...hidden, step: "confirm" });
  t.is(again.status, 303);
  const all = await withdrawals(merchantId);
  t.is(all.length, 1, "confirmed three times (two at once): one withdrawal");
  t.like(all[0], { amount: 125_075n, bankId: garanti.id, iban: "TR400006200000000000000001", accountName: "Örnek Mağaza A.Ş.", processId: `dashboard-${hidden.formToken}`, sandbox: true });
  t.is(again.location, first.location);
  const shown = await finance.get(`${first.location!.replace(/#.*$/, "")}&lang=en`);
  t.regex(shown.html, /The sandbox withdrawal .* was created: no real money moves/);
});

test("an IBAN of a bank the catalog does not list is reviewed as such, and a bad IBAN never reaches the review", async (t) => {
  const merchantId = await fundedMerchant(100);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-unknown-bank.test", "finance");
  const review = await finance.post("/merchant/money/withdrawals?lang=en", { ...(await withdrawForm(finance)), amount: "10", iban: IBAN, accountName: "Ayşe Yılmaz" });
  t.is(review.status, 200);
  t.regex(review.html, /A bank not in our bank list \(EFT code 00061\)/);
  const bad = await finance.post("/merchant/money/withdrawals?lang=en", { ...(await withdrawForm(finance)), amount: "10", iban: "TR00 0006 1005 1978 6457 8413 26", accountName: "Ayşe Yılmaz" });
  t.is(bad.status, 400);
  t.notRegex(bad.html, /Confirm and create/);
  // A confirmation that carries a bad IBAN (no review made it) is refused the same way.
  const forged = await finance.post("/merchant/money/withdrawals?lang=en", { ...(await withdrawForm(finance)), step: "confirm", amountMinor: "1000", iban: "TR000006100519786457841326", accountName: "Ayşe Yılmaz" });
  t.is(forged.status, 400);
  t.regex(forged.html, /check digits do not match/);
  t.is((await withdrawals(merchantId)).length, 0);
});

test("live and sandbox apart: a live account's money is shown in Live mode only; in Sandbox mode the page says where it is and no withdrawal is made", async (t) => {
  const live = await newMerchant(stack, { sandbox: false });
  const finance = await signedInUser(stack, live, "finance@money-live.test", "finance");
  const shownLive = await finance.get("/merchant/money?mode=live&lang=en");
  t.is(shownLive.status, 200, shownLive.html);
  t.regex(shownLive.html, /Balances/);
  t.regex(shownLive.html, /Live account: a withdrawal sends real money/);
  const sandbox = await finance.get("/merchant/money?mode=sandbox&lang=en");
  t.is(sandbox.status, 200);
  t.regex(sandbox.html, /This is a live account: its balance, statement and withdrawals are real money/);
  t.regex(sandbox.html, /href="\/merchant\/money\?mode=live"/);
  t.notRegex(sandbox.html, /<caption>Balances<\/caption>/, "no live balance in sandbox mode");
  t.notRegex(sandbox.html, /Review the withdrawal/);
  const csrf = csrfOf(sandbox.html);
  const refused = await finance.post("/merchant/money/withdrawals", { _csrf: csrf, formToken: "A".repeat(22), step: "confirm", amountMinor: "1000", iban: IBAN, accountName: "Ayşe" });
  t.is(refused.status, 409);
  t.regex(refused.html, /switch to live/);
  t.is((await stack.payouts.listWithdrawals({ merchantId: live, limit: 10 })).withdrawals.length, 0);
  t.is((await finance.get(`/merchant/statement.csv?from=${today()}&to=${today()}`)).status, 409, "no live statement file in sandbox mode");
});

test("the statement in Türkiye's time: times as Türkiye's clock shows them, days from Türkiye's midnight; holds and releases as moves between available and held; an adjustment's reason; a short payment's two amounts; names before ids", async (t) => {
  const merchantId = await fundedMerchant(1000);
  await stack.merchants.setPaymentRules({ merchantId, underpayment: UnderpaymentRule.COMPLETE });
  const { deposit } = await stack.deposits.createDeposit({ merchantId, processId: "short-1", amount: 100_000n, customer: { id: "c1", name: "Zeynep Kaya", username: "zeynep" } });
  await stack.deposits.sandboxPayDeposit({ merchantId, depositId: deposit!.id, amount: 90_000n });
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-lines.test", "finance");
  // To the sandbox's ACCOUNT_NOT_FOUND IBAN: held, then failed and released.
  const made = await withdraw(finance, { amount: "250,50", iban: "TR400006200000000000000001", accountName: "Örnek Mağaza A.Ş." });
  t.is(made.status, 303, made.html);
  await eventually(async () => (await withdrawals(merchantId))[0]?.status === WithdrawalStatus.FAILED, "the sandbox bank refuses it");

  const day = today();
  const en = await finance.get(`/merchant/money?from=${day}&to=${day}&lang=en`);
  t.is(en.status, 200, en.html);
  t.regex(en.html, /Reason: test funds/, "the adjustment's reason, from its ledger entry");
  const statementPart = en.html.slice(en.html.indexOf('id="h-statement"'), en.html.indexOf('id="h-withdraw"'));
  t.regex(statementPart, /<tbody>/);
  t.notRegex(statementPart, /<td[^>]*>(?:<span[^>]*>)?[+-]?TRY(?:<\/span>)?\s0\.00<\/td>/, "no zero-amount line");
  t.regex(en.html, /TRY\s250\.50 set aside from available into held for the withdrawal to Örnek Mağaza A\.Ş\./);
  t.regex(en.html, /TRY\s250\.50 given back from held to available: the withdrawal to Örnek Mağaza A\.Ş\. was not paid/);
  t.regex(en.html, /from Zeynep Kaya · Short payment: TRY\s900\.00 received of TRY\s1,000\.00 requested/);
  t.regex(en.html, /href="\/merchant\/deposits\/dep_[\w-]+"[^>]*>(?:<span[^>]*>)?short-1(?:<\/span>)?<\/a>/, "the payment by its process id");
  const res = await stack.payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(turkeyMidnight(day)), toMs: BigInt(turkeyMidnight(day) + DAY_MS), limit: 100 });
  const record = statementRecord(res, day, day);
  t.is(record.movements.length, 4);
  for (const m of record.movements) t.true(en.html.includes(formatTime(new Date(m.at), "en")), `${m.kind} at ${m.at} in Türkiye's time`);

  const tr = await finance.get(`/merchant/money?from=${day}&to=${day}&lang=tr`);
  t.regex(tr.html, /Neden: test funds/);
  t.regex(tr.html, /Eksik ödeme: istenen ₺1\.000,00 yerine ₺900,00 geldi/);
  t.regex(tr.html, /blokeye alındı/);
  for (const m of record.movements) t.true(tr.html.includes(formatTime(new Date(m.at), "tr")));

  // The day before in Türkiye ends at this day's Türkiye midnight: none of today's lines.
  const yesterday = turkeyDay(new Date(turkeyMidnight(day) - 1));
  const before = await finance.get(`/merchant/money?from=${yesterday}&to=${yesterday}&lang=en`);
  t.regex(before.html, /No movements in this period/);
  const csv = await finance.get(`/merchant/statement.csv?from=${day}&to=${day}`);
  t.is(csv.html, statementCsv(record, turkeyMidnight(day), turkeyMidnight(day) + DAY_MS, "en"), "the file covers the page's period");
});
