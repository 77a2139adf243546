import test from "ava";
import { DepositStatus } from "@payments/contracts/deposit";
import { csrfOf } from "./harness.js";
import { merchantDeposit, postFrom, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

let n = 0;
/** An MT940 statement of one receiving account with one credit of `amount` (major units, comma decimals). */
function mt940(iban: string, amount: string, description: string): string {
  const ref = `STPAGE${++n}${Date.now()}`;
  return [`:20:${ref}`, `:25:${iban}`, ":28C:00001/001", ":60F:C261122TRY0,00", `:61:2611231123C${amount}NTRF${ref}//${ref}`, `:86:${description}`, `:62F:C261123TRY${amount}`, "-"].join("\n");
}

const depositStatus = async (id: string) => (await stack.deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: id } })).deposit!.status;

test.serial("finance imports an MT940 statement: the page shows what it did and the deposit it paid is completed", async (t) => {
  const deposit = await merchantDeposit(stack);
  const finance = await signedInAs(stack.c, "fin-stmt@example.com", "finance");
  const form = await finance.get("/statements?lang=en");
  t.is(form.status, 200);
  t.true(form.html.includes('<label for="field-content">Statement text</label>'));
  const res = await postFrom(finance, "/statements?lang=en", "/statements", { format: "mt940", fileName: "akbank.sta", content: mt940(deposit.assignedAccount!.iban, "500,00", `GELEN EFT AYSE YILMAZ ${deposit.reference}`) });
  t.is(res.status, 200);
  t.regex(res.html, /The statement akbank\.sta was imported\./);
  t.regex(res.html, /Matched to a deposit<\/th><td[^>]*class="num">1</);
  t.is(await depositStatus(deposit.id), DepositStatus.COMPLETED);
});

test.serial("an operator (the service wants finance) and a viewer replaying the post are refused with 403 and nothing is recorded; so is a post without the CSRF token", async (t) => {
  const deposit = await merchantDeposit(stack);
  const content = mt940(deposit.assignedAccount!.iban, "500,00", `GELEN EFT AYSE YILMAZ ${deposit.reference}`);
  for (const [email, role] of [["ops-stmt@example.com", "operator"], ["viewer-stmt@example.com", "viewer"]] as const) {
    const browser = await signedInAs(stack.c, email, role);
    const res = await postFrom(browser, "/statements?lang=tr", "/statements", { format: "mt940", content });
    t.is(res.status, 403, role);
    t.true(res.html.includes("Servis reddetti: rolünüz bunu yapmaya yetkili değil"), role);
    t.is((await browser.post("/statements", { format: "mt940", content })).status, 403, `${role} without the token`);
  }
  t.is(await depositStatus(deposit.id), DepositStatus.PENDING);
});

test.serial("a file the service cannot read is shown as its refusal, with the text kept in the form", async (t) => {
  const finance = await signedInAs(stack.c, "fin-junk@example.com", "finance");
  const res = await postFrom(finance, "/statements?lang=en", "/statements", { format: "mt940", content: "not a statement" });
  t.true(res.status >= 400);
  t.regex(res.html, /role="alert">The service (did not accept|refused)/);
  t.true(res.html.includes(">not a statement</textarea>"));
});

test.serial("finance uploads the statement file itself (multipart, the CSRF token in a hidden field): it is imported as the bank gave it", async (t) => {
  const deposit = await merchantDeposit(stack);
  const finance = await signedInAs(stack.c, "fin-upload@example.com", "finance");
  const page = await finance.get("/statements?lang=en");
  t.true(page.html.includes('enctype="multipart/form-data"'));
  const form = new FormData();
  form.set("_csrf", csrfOf(page.html));
  form.set("format", "mt940");
  form.set("fileName", "");
  form.set("content", "");
  form.set("file", new Blob([mt940(deposit.assignedAccount!.iban, "500,00", `GELEN EFT AYSE YILMAZ ${deposit.reference}`)], { type: "text/plain" }), "garanti.sta");
  const res = await finance.postMultipart("/statements?lang=en", form);
  t.is(res.status, 200, res.html);
  t.regex(res.html, /The statement garanti\.sta was imported\./);
  t.is(await depositStatus(deposit.id), DepositStatus.COMPLETED);
});

test.serial("an upload without the CSRF token is refused and nothing is imported; one above CONSOLE_UPLOAD_LIMIT is refused with 413; multipart elsewhere is 415", async (t) => {
  const deposit = await merchantDeposit(stack);
  const finance = await signedInAs(stack.c, "fin-upload-csrf@example.com", "finance");
  const form = new FormData();
  form.set("format", "mt940");
  form.set("file", new Blob([mt940(deposit.assignedAccount!.iban, "500,00", `GELEN EFT AYSE YILMAZ ${deposit.reference}`)]), "x.sta");
  t.is((await finance.postMultipart("/statements", form)).status, 403);
  t.is(await depositStatus(deposit.id), DepositStatus.PENDING);

  const page = await finance.get("/statements");
  const big = new FormData();
  big.set("_csrf", csrfOf(page.html));
  big.set("format", "mt940");
  big.set("file", new Blob([Buffer.alloc(10 * 1024 * 1024 + 1, 0x41)]), "huge.sta");
  t.is((await finance.postMultipart("/statements", big)).status, 413);

  const elsewhere = new FormData();
  elsewhere.set("_csrf", csrfOf(page.html));
  elsewhere.set("reason", "x");
  t.is((await finance.postMultipart(`/deposits/${deposit.id}/reject`, elsewhere)).status, 415);
  t.is(await depositStatus(deposit.id), DepositStatus.PENDING);
});
