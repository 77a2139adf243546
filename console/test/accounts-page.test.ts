import test from "ava";
import { postFrom, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const accounts = async () => (await stack.bankCatalog.listReceivingAccounts({})).accounts;
const banks = async () => (await stack.bankCatalog.listBanks({})).banks;

/** A valid Turkish IBAN for a bank code and account number (mod 97). */
function iban(bankCode: string, account: string): string {
  const bban = `${bankCode.padStart(5, "0")}0${account.padStart(16, "0")}`;
  const check = 98n - (BigInt(`${bban}2927` + "00") % 97n);
  return `TR${check.toString().padStart(2, "0")}${bban}`;
}

test.serial("a viewer sees the receiving accounts and the banks without any form", async (t) => {
  const viewer = await signedInAs(stack.c, "viewer-acc@example.com", "viewer");
  const page = await viewer.get("/accounts?lang=en");
  t.is(page.status, 200);
  t.regex(page.html, /<caption>Receiving accounts<\/caption>/);
  t.false(page.html.includes('method="post" action="/accounts"'));
  const bankPage = await viewer.get("/banks?lang=tr");
  t.is(bankPage.status, 200);
  t.true(bankPage.html.includes("FAST"));
  t.false(bankPage.html.includes('method="post"') && bankPage.html.includes('action="/banks"'));
  const first = (await banks())[0]!;
  t.is((await viewer.get(`/banks/${first.id}`)).status, 200);
});

test.serial("an admin adds a sandbox account and deactivates and activates it; a live active one waits for a second admin", async (t) => {
  const admin = await signedInAs(stack.c, "admin-acc@example.com", "admin");
  const bank = (await banks())[0]!;
  const sandboxIban = iban(bank.code, "7001");
  const res = await postFrom(admin, "/accounts", "/accounts", { bankId: bank.id, accountName: "Test Hesabı", iban: sandboxIban, kind: "sandbox", active: "1" });
  t.is(res.status, 303, res.html);
  const created = (await accounts()).find((a) => a.iban === sandboxIban)!;
  t.true(created.active);
  t.is((await postFrom(admin, "/accounts", `/accounts/${created.id}/active`, { active: "0" })).status, 303);
  t.false((await accounts()).find((a) => a.id === created.id)!.active);
  t.is((await postFrom(admin, "/accounts", `/accounts/${created.id}/active`, { active: "1" })).status, 303);
  t.true((await accounts()).find((a) => a.id === created.id)!.active);

  const liveIban = iban(bank.code, "7002");
  const live = await postFrom(admin, "/accounts", "/accounts", { bankId: bank.id, accountName: "Canlı Hesap", iban: liveIban, kind: "live", active: "1" });
  t.is(live.status, 303);
  const approvalId = new URL(live.location!, stack.c.url).searchParams.get("approval");
  t.truthy(approvalId);
  t.true((await admin.get(`${live.location!}&lang=en`)).html.includes(`href="/approvals/bank-catalog/${approvalId}"`));
  t.false((await accounts()).some((a) => a.iban === liveIban), "nothing is added before the approval");
});

test.serial("an admin adds a bank, updates it and the FAST settings", async (t) => {
  const admin = await signedInAs(stack.c, "admin-bank@example.com", "admin");
  const res = await postFrom(admin, "/banks", "/banks", { name: "Deneme Bankası", code: "0999", logoUrl: "", min: "10", max: "50000", active: "1" });
  t.is(res.status, 303, res.html);
  const bank = (await banks()).find((b) => b.code === "0999")!;
  t.is(bank.minAmount, 1_000n);
  const update = await postFrom(admin, `/banks/${bank.id}`, `/banks/${bank.id}`, { name: "Deneme Bankası A.Ş.", logoUrl: "", min: "20,50", max: "60000", active: "1" });
  t.is(update.status, 303, update.html);
  const updated = (await banks()).find((b) => b.id === bank.id)!;
  t.is(updated.name, "Deneme Bankası A.Ş.");
  t.is(updated.minAmount, 2_050n);
  const bad = await postFrom(admin, `/banks/${bank.id}?lang=en`, `/banks/${bank.id}`, { name: "x", min: "abc", max: "", active: "1" });
  t.is(bad.status, 400);
  t.true(bad.html.includes('aria-invalid="true"'));
  const fast = await postFrom(admin, "/banks", "/banks/fast", { enabled: "1", min: "1", max: "25000" });
  t.is(fast.status, 303, fast.html);
  t.is((await stack.bankCatalog.getFastSettings({})).settings!.maxAmount, 2_500_000n);
});

test.serial("an operator's changes are refused by the service (403) and a viewer's replay too, and nothing changes; a post without the CSRF token is refused", async (t) => {
  const bank = (await banks())[0]!;
  const before = await accounts();
  const target = before[0]!;
  for (const [email, role] of [["ops-acc@example.com", "operator"], ["viewer-acc2@example.com", "viewer"]] as const) {
    const browser = await signedInAs(stack.c, email, role);
    const create = await postFrom(browser, "/accounts?lang=en", "/accounts", { bankId: bank.id, accountName: "x", iban: iban(bank.code, "7100"), kind: "sandbox", active: "1" });
    t.is(create.status, 403, role);
    t.regex(create.html, /role="alert">The service refused: your role may not do this/);
    t.is((await postFrom(browser, "/accounts", `/accounts/${target.id}/active`, { active: target.active ? "0" : "1" })).status, 403);
    t.is((await postFrom(browser, "/banks", "/banks", { name: "Nope", code: "0998", min: "1", max: "2", active: "1" })).status, 403);
    t.is((await postFrom(browser, `/banks/${bank.id}`, `/banks/${bank.id}`, { name: "Renamed", min: "", max: "", active: "1" })).status, 403);
    t.is((await postFrom(browser, "/banks", "/banks/fast", { enabled: "", min: "", max: "" })).status, 403);
  }
  const admin = await signedInAs(stack.c, "admin-acc-csrf@example.com", "admin");
  t.is((await admin.post(`/accounts/${target.id}/active`, { active: target.active ? "0" : "1" })).status, 403);
  t.deepEqual((await accounts()).map((a) => [a.id, a.active]), before.map((a) => [a.id, a.active]));
  t.false((await banks()).some((b) => b.code === "0998" || b.name === "Renamed"));
});
