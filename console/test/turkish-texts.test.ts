import test from "ava";
import { TransferStatus } from "@payments/contracts/deposit";
import { merchantDeposit, postFrom, reportTo, shortTransfer, signedInAs, type Stack, stackForTests } from "./service-harness.js";
import type { Browser } from "./harness.js";

// Turkish pages are all Turkish: a transfer's waiting reason, an operator's action in the
// timeline and the audit, an approval's description and a refusal are worded by the console's
// catalogue (shared/service-texts.ts), never shown as the service's code or English sentence.

let stack: Stack;
let finance: Browser;
stackForTests(test, async (s) => {
  stack = s;
  finance = await signedInAs(stack.c, "fin-tr@example.com", "finance");
});

/** The page's visible text: tags and attributes left out. */
const visible = (html: string) => html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, "").replace(/<[^>]*>/g, " ");

test.serial("a short payment's transfer: the waiting reason and the evidence in Turkish, the English reason only on the English page", async (t) => {
  const { short } = await shortTransfer(stack);
  t.is(short.status, TransferStatus.REVIEW);
  const tr = await finance.get(`/transfers/${short.id}?lang=tr`);
  t.is(tr.status, 200);
  const text = visible(tr.html);
  t.true(text.includes("eksik ödeme: istenen tutardan az geldi"), "the waiting reason");
  t.true(text.includes("referans birebir"), "the match evidence");
  t.regex(text, /tutar ₺490,00 \/ ₺500,00 \(eksik\)/);
  t.false(/underpayment|reference exact|amount exact/.test(text), "no English sentence of the service");
  const list = visible((await finance.get("/transfers?lang=tr&mode=sandbox")).html);
  t.true(list.includes("eksik ödeme: istenen tutardan az geldi"));
  const en = visible((await finance.get(`/transfers/${short.id}?lang=en`)).html);
  t.true(en.includes("underpayment: less than the requested amount arrived"));
});

test.serial("an operator's decision: the timeline's action, the transfer's history and the audit's operation and outcome are Turkish, never the RPC's name", async (t) => {
  const { deposit, short } = await shortTransfer(stack);
  const operator = await signedInAs(stack.c, "ops-tr@example.com", "operator");
  const res = await postFrom(operator, `/transfers/${short.id}`, `/transfers/${short.id}/resolve`, { decision: "complete", reason: "banka masrafı" });
  t.is(res.status, 303);
  const history = visible((await operator.get(`/transfers/${short.id}?lang=tr`)).html);
  t.true(history.includes("yatırımı tamamlandı"), "the transfer's action in words");
  t.true(history.includes("banka masrafı"), "the operator's own reason as written");

  const timeline = visible((await operator.get(`/deposits/${deposit.id}?lang=tr`)).html);
  t.true(timeline.includes("Havale sonuçlandırıldı"), "the audit's action in the deposit's timeline");
  t.true(timeline.includes("Durum değişti: yatırım: tamamlandı"), "the status change from the callback event");
  t.false(/ResolveTransfer|deposit\.completed/.test(timeline));

  const admin = await signedInAs(stack.c, "admin-tr@example.com", "admin");
  const audit = await admin.get(`/audit?lang=tr&target=${short.id}`);
  t.is(audit.status, 200);
  const rows = visible(audit.html);
  t.true(rows.includes("Havale sonuçlandırıldı"), "the operation column");
  t.true(rows.includes("yapıldı"), "the outcome column");
  t.true(rows.includes("Yatırımlar"), "the service column");
  t.false(/ResolveTransfer|\bok\b/.test(rows));
  const en = visible((await admin.get(`/audit?lang=en&target=${short.id}`)).html);
  t.true(en.includes("Transfer resolved"));
});

test.serial("an approval's description is built from its request in Turkish, not the service's English summary", async (t) => {
  const deposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, deposit, 2_500n, "unknown payment");
  const res = await postFrom(finance, `/transfers/${stray.id}`, `/transfers/${stray.id}/resolve`, { decision: "return", reason: "sipariş yok", iban: "", recipientName: "" });
  const approvalId = new URL(res.location!, stack.c.url).searchParams.get("approval");
  t.truthy(approvalId, `an approval waits (${res.status})`);
  const tr = visible((await finance.get(`/approvals/deposit/${approvalId}?lang=tr`)).html);
  t.true(tr.includes(`${stray.id} havalesi gönderene iade edilsin`), "the description");
  t.false(tr.includes("return live transfer"), "not the service's summary");
  const en = visible((await finance.get(`/approvals/deposit/${approvalId}?lang=en`)).html);
  t.true(en.includes(`Return transfer ${stray.id} to its sender`));
});

test.serial("a refusal on a Turkish page is worded by its code, not the service's English detail; the English page keeps the detail", async (t) => {
  const { short } = await shortTransfer(stack, 48_000n);
  const viewer = await signedInAs(stack.c, "viewer-tr@example.com", "viewer");
  const tr = await postFrom(viewer, `/transfers/${short.id}?lang=tr`, `/transfers/${short.id}/resolve`, { decision: "complete", reason: "yeniden" });
  t.is(tr.status, 403);
  t.regex(tr.html, /role="alert">Servis reddetti: rolünüz bunu yapmaya yetkili değil \(Bu rol için izin yok\)/);
  const en = await postFrom(viewer, `/transfers/${short.id}?lang=en`, `/transfers/${short.id}/resolve`, { decision: "complete", reason: "again" });
  t.is(en.status, 403);
  t.regex(en.html, /role="alert">The service refused: your role may not do this \(.*operator.*\)/);
  t.is((await stack.deposits.getTransfer({ transferId: short.id })).transfer!.status, TransferStatus.REVIEW, "nothing changed");
});
