import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import test, { type ExecutionContext } from "ava";
import { Code } from "@connectrpc/connect";
import { paymentFiles } from "@payments/contracts";
import type { DescEnum } from "@bufbuild/protobuf";
import { CODE_TEXTS, RPC_TEXTS } from "../src/shared/service-texts-catalogue.js";
import { codeText, ENUM_KINDS, enumText, eventTypeText, fieldText, hasCodeText, hasRpcText, hasStatusText, outcomeText, roleText, rpcText, serviceText, statusText } from "../src/shared/service-texts.js";
import { approvalText } from "../src/shared/approval-texts.js";
import { actionReasonText, knowsMatchReason, knowsReason, matchReasonText, scoreText, waitingReasonText } from "../src/shared/match-reasons.js";
import { formatMoney } from "../src/shared/format.js";

// A new code cannot ship untranslated: every enum value and every RPC of the generated service
// descriptors, and every error code the services, the gateway and the console write in their
// sources, must have its words in English and in Turkish.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts") && !entry.parentPath.includes("node_modules") && !entry.parentPath.includes(`${join("src", "gen")}`)) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

function codesIn(dirs: string[], pattern: RegExp): Set<string> {
  const found = new Set<string>();
  for (const dir of dirs) for (const file of sources(dir)) for (const m of readFileSync(file, "utf8").matchAll(pattern)) {
        const code = m[1] ?? m[2];
        if (code) found.add(code);
      }
  return found;
}

const enums: DescEnum[] = paymentFiles.flatMap((f) => [...f.enums, ...f.messages.flatMap((m) => m.nestedEnums)]);

test("every value of every generated enum has its words in both languages", (t) => {
  t.true(enums.length >= 13, "the descriptors were walked");
  for (const e of enums) {
    const kind = ENUM_KINDS[e.typeName];
    t.truthy(kind, `${e.typeName} has a kind in ENUM_KINDS`);
    if (!kind) continue;
    for (const v of e.values) {
      if (v.number === 0) continue; // UNSPECIFIED: "any", never a value a record holds
      t.true(hasStatusText(kind, v.localName), `${e.typeName}.${v.localName} has words`);
      const en = enumText("en", e, v.number);
      const tr = enumText("tr", e, v.number);
      t.truthy(en && tr, `${e.typeName}.${v.localName}`);
      t.false(/unknown|bilinmeyen/.test(en + tr), `${e.typeName}.${v.localName} is not the fallback`);
    }
  }
});

test("every RPC of every generated service has its human action in both languages, Turkish differing from the English", (t) => {
  const rpcs = paymentFiles.flatMap((f) => f.services.flatMap((s) => s.methods.map((m) => `${s.typeName}/${m.name}`)));
  t.true(rpcs.length > 80, "the descriptors were walked");
  for (const rpc of rpcs) {
    t.true(hasRpcText(rpc), `${rpc} has words`);
    t.not(rpcText("tr", rpc), rpcText("en", rpc), rpc);
  }
  t.is(rpcText("tr", "payments.deposit.v1.DepositService/ResolveTransfer"), "Havale sonuçlandırıldı");
  t.is(rpcText("en", "payments.deposit.v1.DepositService/ResolveTransfer"), "Transfer resolved");
});

test("every step of the console's own audit has its words", (t) => {
  const steps = codesIn(["console/src"], /(?:action: |auditedBody\(deps, ctx, |teamStep\([^,]+, )"([A-Z][A-Za-z]+)"/g);
  for (const s of ["EnrolMerchantUserTotp", "RemoveMerchantUserTotp"]) steps.add(s);
  t.true(steps.size >= 10, [...steps].join(", "));
  for (const step of steps) t.true(hasRpcText(`console/${step}`), `console/${step} has words`);
});

test("every error code the services, the gateway and the console answer with has its words in both languages", (t) => {
  const services = codesIn(["services", "packages/kit/src", "packages/access/src", "packages/records/src"], /(?:serviceError\(\s*Code\.\w+,\s*|refused\()"([A-Z][A-Z_]+)"/g);
  const gateway = codesIn(["gateway/src"], /ApiError\(\s*\d+,\s*"([A-Z][A-Z_]+)"/g);
  const console = codesIn(["console/src"], /(?:ConsoleError\(\s*\d+,\s*|conflict\(\s*|forbidden\(\s*|badRequest\(\s*|notFound\(\s*)"([A-Z][A-Z_]+)"/g);
  // spec/api.md's errors, the sandbox bank's failure reasons and the approvals' cancel reasons.
  const spec = ["VALIDATION_ERROR", "DUPLICATE_TRANSACTION", "AMOUNT_OUT_OF_RANGE", "INVALID_IBAN", "INSUFFICIENT_BALANCE", "INVALID_API_KEY", "INVALID_SIGNATURE", "IP_NOT_WHITELISTED", "MISSING_SIGNATURE", "MISSING_TIMESTAMP", "TIMESTAMP_EXPIRED"];
  const failures = ["ACCOUNT_NOT_FOUND", "NAME_MISMATCH", "ACCOUNT_CLOSED", "FAILED", "APPROVAL_REJECTED", "APPROVAL_EXPIRED", "APPROVAL_REQUIRED"];
  const all = new Set([...services, ...gateway, ...console, ...spec, ...failures]);
  t.true(services.size > 30 && console.size > 15, `${services.size} service codes, ${console.size} console codes`);
  for (const code of all) t.true(hasCodeText(code), `${code} has words`);
  // gRPC's code names, which an audit row holds when an error named no reason.
  for (const name of Object.values(Code).filter((v): v is string => typeof v === "string")) t.true(hasCodeText(name), `gRPC ${name}`);
  for (const [code, [en, tr]] of Object.entries({ ...CODE_TEXTS, ...RPC_TEXTS })) t.true(en.trim() !== "" && tr.trim() !== "", code);
});

test("a code the catalogue lacks is still in the page's language, with the code beside it", (t) => {
  t.is(rpcText("tr", "payments.x.v1.X/Xyz"), "Bilinmeyen işlem (Xyz)");
  t.is(rpcText("en", "Xyz"), "Unknown action (Xyz)");
  t.is(codeText("tr", "NEW_CODE"), "Bilinmeyen kod (NEW_CODE)");
  t.is(statusText("tr", "deposit", "teleported"), "bilinmeyen durum (teleported)");
  t.is(roleText("tr", "wizard"), "bilinmeyen rol (wizard)");
  t.is(codeText("tr", "TRANSFER_NOT_OPEN"), "Havale artık açık değil");
  t.is(outcomeText("tr", "ok"), "yapıldı");
  t.is(outcomeText("tr", "APPROVAL_REQUIRED"), "İkinci bir kişinin onayını bekliyor");
  t.is(roleText("tr", "admin"), "yönetici");
  t.is(serviceText("tr", "deposit"), "Yatırımlar");
  t.is(fieldText("tr", "return.recipient_name"), "alıcı adı");
  t.is(fieldText("tr", "matchDepositId"), "eşleştirilecek yatırım");
  t.is(eventTypeText("tr", "deposit.completed"), "yatırım: tamamlandı");
  t.is(statusText("tr", "transfer", "REVIEW"), "inceleme bekliyor");
});

test("an approval's description is built from its request, in Turkish and in English; the summary only as the English fallback", (t) => {
  const withdraw = { rpc: "payments.payout.v1.PayoutService/CreateWithdrawal", requestJson: JSON.stringify({ merchantId: "m_1", amount: "200000", iban: "TR330006100519786457841326", accountName: "Ayşe Yılmaz" }), summary: "withdraw 2000.00 TRY to TR33…" };
  t.is(approvalText("tr", withdraw), "₺2.000,00 çekim: TR330006100519786457841326 hesabına, Ayşe Yılmaz");
  t.is(approvalText("en", withdraw), "Withdraw TRY\u00a02,000.00 to TR330006100519786457841326 (Ayşe Yılmaz)");
  const adjust = { rpc: "payments.payout.v1.PayoutService/AdjustBalance", requestJson: JSON.stringify({ merchantId: "m_1", amount: "-5000", currency: "TRY", reason: "fee" }), summary: "adjust" };
  t.is(approvalText("tr", adjust, (id) => (id === "m_1" ? "Kahve Dükkanı" : undefined)), "Kahve Dükkanı (m_1) bakiyesine -₺50,00 düzeltme");
  const odd = { rpc: "payments.x.v1.X/Teleport", requestJson: "{}", summary: "teleport the money" };
  t.is(approvalText("en", odd), "teleport the money");
  t.is(approvalText("tr", odd), "Bilinmeyen işlem (Teleport)");
  const broken = { ...withdraw, requestJson: "not json" };
  t.is(approvalText("tr", broken), "Çekim oluşturuldu");
});

/** Each English text of `rows` is one the catalogue knows, worded in Turkish as its row says. */
function wordedInTurkish(t: ExecutionContext, rows: Array<[string, string]>, knows: (en: string) => boolean, words: (lang: "tr", en: string) => string): void {
  for (const [en, tr] of rows) {
    t.true(knows(en), en);
    t.is(words("tr", en), tr);
  }
}

test("the deposit service's waiting reasons and match evidence read in Turkish; English pages keep them, their amounts written the English way (TRY 450.00); an operator's own words stay", (t) => {
  const englishMoney = (text: string) => text.replace(/(\d+)\.(\d{2}) TRY/g, (_, lira: string, kuruş: string) => formatMoney(BigInt(`${lira}${kuruş}`), "TRY", "en"));
  const reasons: Array<[string, string]> = [
    ["underpayment: less than the requested amount arrived", "eksik ödeme: istenen tutardan az geldi"],
    ["overpayment: more than the requested amount arrived", "fazla ödeme: istenen tutardan fazla geldi"],
    ["late payment: the deposit had expired", "geç ödeme: yatırımın süresi dolmuştu"],
    ["late payment: the merchant's rule returns it to the sender", "geç ödeme: üye işyerinin kuralı gereği gönderene iade edilir"],
    ["no pending deposit is assigned to this account", "bu hesaba atanmış bekleyen yatırım yok"],
    ["no deposit on this account is in EUR; the description carries the reference of a TRY deposit", "bu hesapta EUR cinsinden yatırım yok; açıklama bir TRY yatırımının referansını taşıyor"],
    ["the description carries the references of 2 deposits", "açıklama 2 yatırım referansını taşıyor"],
    ["the sender name and amount fit 3 expired deposits", "gönderen adı ve tutar 3 süresi dolmuş yatırıma uyuyor"],
    ["the amount fits one pending deposit but the sender name does not (0.42)", "tutar bekleyen bir yatırıma uyuyor ama gönderen adı uymuyor (0,42)"],
    ["2 pending deposits await 450.00 TRY; no reference or matching sender name", "2 bekleyen yatırım ₺450,00 bekliyor; referans ya da uyan gönderen adı yok"],
    ["the sender name fits but the amount differs; no reference in the description", "gönderen adı uyuyor ama tutar farklı; açıklamada referans yok"],
    ["no reference or matching sender name, and no pending deposit of this amount (7.77 TRY) on this account; 1 expired deposit of this amount", "referans ya da uyan gönderen adı yok ve bu hesapta bu tutarda (₺7,77) bekleyen yatırım yok; bu tutarda 1 süresi dolmuş yatırım var"],
  ];
  wordedInTurkish(t, reasons, knowsReason, waitingReasonText);
  for (const [en] of reasons) t.is(waitingReasonText("en", en), englishMoney(en));
  const missing = "late payment: the merchant's rule returns it to the sender, but the bank gave no sender Turkish IBAN or name: an operator returns it with `transfer return` (--iban, --name)";
  t.regex(waitingReasonText("tr", missing), /^geç ödeme: .*; ancak banka gönderenin Türk IBAN'ını ya da adını vermedi/);
  t.is(waitingReasonText("tr", "something new"), "çevrilmemiş açıklama: “something new”");
  t.is(actionReasonText("tr", "banka masrafı"), "banka masrafı");
  t.is(actionReasonText("tr", "confirmed with this transfer"), "bu havaleyle onaylandı");
  const evidence: Array<[string, string]> = [
    ["reference exact", "referans birebir"],
    ["name 0.94", "ad benzerliği 0,94"],
    ["amount 490.00 of 500.00 TRY (short)", "tutar ₺490,00 / ₺500,00 (eksik)"],
    ["preferred to 1 expired deposit", "1 süresi dolmuş yatırıma tercih edildi"],
    ["2 expired deposits of this amount ignored", "bu tutardaki 2 süresi dolmuş yatırım dikkate alınmadı"],
  ];
  wordedInTurkish(t, evidence, knowsMatchReason, matchReasonText);
  t.is(matchReasonText("en", "amount 490.00 of 500.00 TRY (short)"), `amount ${formatMoney(49_000n, "TRY", "en")} of ${formatMoney(50_000n, "TRY", "en")} (short)`);
  t.is(matchReasonText("en", "name 0.94"), "name 0.94");
  t.is(scoreText("tr", 0.9), "0,90");
  t.is(scoreText("en", 1), "1.00");
});
