import test from "ava";
import { PayoutService, WithdrawalApprovalState, WithdrawalStatus } from "@payments/contracts/payout";
import { statementCsv, statementRecord } from "@payments/records";
import { createServiceClient, eventually, testMerchantVoice } from "@payments/testing";
import { csrfOf, type Browser } from "./harness.js";
import { newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { startStack, type Stack } from "./service-harness.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack.stop();
});

const IBAN = "TR330006100519786457841326";
const today = () => new Date().toISOString().slice(0, 10);
const DAY_MS = 86_400_000;

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
  const startMs = Date.parse(`${day}T00:00:00.000Z`);
  const res = await stack.payouts.getStatement({ merchantId, currency: "", fromMs: BigInt(startMs), toMs: BigInt(startMs + DAY_MS), limit: 10_000 });
  const record = statementRecord(res, day, day);
  t.is(record.openingBalance, 0);
  t.is(record.closingBalance, 124_950);
  t.is(record.movements.length, 2);
  // The whole file is what the API's statement CSV is for the same answer (the text decoder drops the BOM).
  t.is(csv.html, statementCsv(record, startMs, startMs + DAY_MS, "en"));
  t.regex(csv.html, /closing_balance,,,124950,1249\.50/);

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

test("finance creates a withdrawal to a TR IBAN; the same form sent twice is the same withdrawal", async (t) => {
  const merchantId = await fundedMerchant(1000);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-withdraw.test", "finance");
  const form = await withdrawForm(finance);
  const fields = { ...form, amount: "250,50", iban: "TR33 0006 1005 1978 6457 8413 26", accountName: "Örnek Mağaza A.Ş.", bankId: "" };
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
  t.is(again.location, res.location, "the double submit lands on the first withdrawal");
  t.is((await withdrawals(merchantId)).length, 1);

  const shown = await finance.get(res.location!);
  t.regex(shown.html, new RegExp(`/merchant/withdrawals/${id}`));
});

test("the API's body rules judge the form: a bad amount, an IBAN of another country, a long name; nothing is created", async (t) => {
  const merchantId = await fundedMerchant(1000);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@money-rules.test", "finance");
  const bad = async (fields: Record<string, string>) => finance.post("/merchant/money/withdrawals", { ...(await withdrawForm(finance)), amount: "10", iban: IBAN, accountName: "Ayşe", ...fields });
  const amount = await bad({ amount: "0" });
  t.is(amount.status, 400);
  t.regex(amount.html, /id="withdraw-amount-error"/);
  const tooLong = await bad({ accountName: "x".repeat(201) });
  t.is(tooLong.status, 400);
  t.regex(tooLong.html, /at most 200 characters/);
  const german = await bad({ iban: "DE89370400440532013000" });
  t.is(german.status, 400, "INVALID_IBAN: the payout service's rule");
  t.regex(german.html, /INVALID_IBAN/);
  const broke = await bad({ amount: "5000" });
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
  const replay = await viewer.post("/merchant/money/withdrawals", { _csrf: viewerCsrf, formToken, amount: "10", iban: IBAN, accountName: "Ayşe" });
  t.is(replay.status, 403);
  t.is((await viewer.post("/merchant/money/threshold", { _csrf: viewerCsrf, threshold: "1" })).status, 403);
  // Finance may not set the threshold: the owner does.
  const financeCsrf = csrfOf((await finance.get("/merchant/money")).html);
  t.is((await finance.post("/merchant/money/threshold", { _csrf: financeCsrf, threshold: "1" })).status, 403);

  const noCsrf = await finance.post("/merchant/money/withdrawals", { formToken, amount: "10", iban: IBAN, accountName: "Ayşe" });
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
  const small = await maker.post("/merchant/money/withdrawals", { ...(await withdrawForm(maker)), amount: "50", iban: IBAN, accountName: "Ayşe Yılmaz" });
  t.regex(small.location ?? "", /created=/);
  // Above: waits for a second user.
  const big = await maker.post("/merchant/money/withdrawals", { ...(await withdrawForm(maker)), amount: "500", iban: IBAN, accountName: "Ayşe Yılmaz" });
  t.is(big.status, 303, big.html);
  const approvalId = /approval=([A-Za-z0-9_-]+)/.exec(big.location ?? "")?.[1];
  t.truthy(approvalId, big.location ?? "");
  t.is((await withdrawals(merchantId)).length, 1, "only the small one exists");
  const waiting = await maker.get(`${big.location!.replace(/#.*$/, "")}&lang=en`);
  t.regex(waiting.html, /waits for a second user/);
  t.regex(waiting.html, new RegExp(`/merchant/money/approvals/${approvalId}/approve`));

  // The maker's own approval: the service refuses, and the page says so.
  const own = await maker.post(`/merchant/money/approvals/${approvalId}/approve`, { _csrf: csrfOf(waiting.html) });
  t.is(own.status, 403, own.html);
  t.is((await withdrawals(merchantId)).length, 1);

  const checkerPage = await checker.get("/merchant/money");
  t.regex(checkerPage.html, new RegExp(approvalId!));
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
  const big = await makerA.post("/merchant/money/withdrawals", { ...(await withdrawForm(makerA)), amount: "500", iban: IBAN, accountName: "Ayşe Yılmaz" });
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
