import test from "ava";
import { DepositStatus, DepositStatusSchema, TransferStatus, TransferStatusSchema } from "@payments/contracts/deposit";
import { WithdrawalStatus, WithdrawalStatusSchema } from "@payments/contracts/payout";
import { approvalText } from "../src/shared/approval-texts.js";
import { actionReasonText, knowsMatchReason, knowsReason, matchByText, matchReasonText, waitingReasonText } from "../src/shared/match-reasons.js";
import { CODE_TEXTS, RPC_TEXTS } from "../src/shared/service-texts-catalogue.js";
import { codeText, enumText, ENUM_KINDS, eventTypeText, fieldText, hasCodeText, hasRpcText, hasStatusText, outcomeText, roleText, rpcName, rpcText, serviceText, STATUS_TEXTS, statusText, type StatusKind } from "../src/shared/service-texts.js";

/*
 * The catalogue that words every service code (shared/service-texts.ts, the catalogue,
 * match-reasons.ts, approval-texts.ts): each function in both languages, its fallbacks, and the
 * Turkish of every entry free of English words.
 */

/** Words that would mean an English sentence was left in a Turkish text (IBAN, API, URL, CSV are names, not English). */
const ENGLISH = /\b(the|is|was|of|and|to|not|has|been|by|with|for|from|this|no|an|be|already|must|cannot|too|its|it|or|are|waiting|approval|deposit|withdrawal|merchant|transfer|failed|pending|completed|unknown)\b/i;

const statusKinds = Object.keys(STATUS_TEXTS) as StatusKind[];

test("every status of every kind has Turkish words that are not its English ones and hold no English", (t) => {
  for (const kind of statusKinds) {
    for (const [code, pair] of Object.entries(STATUS_TEXTS[kind])) {
      const [en, tr] = pair as readonly [string, string];
      t.is(statusText("en", kind, code), en, `${kind}.${code}`);
      t.is(statusText("tr", kind, code), tr, `${kind}.${code}`);
      t.not(tr, en, `${kind}.${code} translated`);
      t.false(ENGLISH.test(tr), `${kind}.${code}: ${tr}`);
    }
  }
});

test("every RPC's Turkish action holds no English word", (t) => {
  for (const [rpc, [en, tr]] of Object.entries(RPC_TEXTS)) {
    t.is(rpcText("tr", rpc), tr);
    t.is(rpcText("en", rpc), en);
    t.false(ENGLISH.test(tr), `${rpc}: ${tr}`);
  }
});

test("every error code's Turkish words hold no English word and differ from the English", (t) => {
  for (const [code, [en, tr]] of Object.entries(CODE_TEXTS)) {
    t.is(codeText("tr", code), tr);
    t.is(codeText("en", code), en);
    t.not(tr, en, code);
    t.false(ENGLISH.test(tr), `${code}: ${tr}`);
  }
});

test("Turkish texts are written with Turkish letters where Turkish has them", (t) => {
  const all = [...Object.values(RPC_TEXTS), ...Object.values(CODE_TEXTS)].map(([, tr]) => tr).join(" ");
  for (const letter of ["ı", "ş", "ğ", "ü", "ö", "ç", "İ"]) t.true(all.includes(letter), letter);
  t.false(/\b(odeme|islem|yatirim|cekim|basarisiz)\b/i.test(all), "no Turkish word written in ASCII only");
});

test("a status is found whatever its case, as the enums' names are upper case", (t) => {
  t.is(statusText("tr", "deposit", "COMPLETED"), "tamamlandı");
  t.is(statusText("en", "withdrawal", "Processing"), "processing");
  t.true(hasStatusText("transfer", "REVIEW"));
  t.false(hasStatusText("transfer", "completed"), "a deposit's status is no transfer's");
});

test("a status the catalogue lacks is worded as unknown, with the code, in each language", (t) => {
  t.is(statusText("en", "deposit", "teleported"), "unknown status (teleported)");
  t.is(statusText("tr", "withdrawal", "x"), "bilinmeyen durum (x)");
  t.is(statusText("tr", "deposit", ""), "bilinmeyen durum (—)", "an empty code is a dash");
});

test("inherited object names are no catalogue entries", (t) => {
  for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    t.is(statusText("en", "deposit", name), `unknown status (${name})`, name);
    t.false(hasStatusText("deposit", name), name);
    t.false(hasRpcText(name), name);
    t.false(hasCodeText(name), name);
    t.is(roleText("en", name), `unknown role (${name})`);
    t.is(serviceText("en", name), `Unknown code (${name})`);
  }
});

test("enumText words a generated enum's value by its kind", (t) => {
  t.is(enumText("tr", DepositStatusSchema, DepositStatus.COMPLETED), "tamamlandı");
  t.is(enumText("en", TransferStatusSchema, TransferStatus.REVIEW), "waiting for review");
  t.is(enumText("tr", WithdrawalStatusSchema, WithdrawalStatus.PROCESSING), "işleniyor");
});

test("enumText words UNSPECIFIED and an unknown number as an unknown status", (t) => {
  t.regex(enumText("tr", DepositStatusSchema, 0), /^bilinmeyen durum \(/);
  t.is(enumText("en", DepositStatusSchema, 999), "unknown status (999)");
});

test("every enum the catalogue maps names a kind it has", (t) => {
  for (const [typeName, kind] of Object.entries(ENUM_KINDS)) t.true(statusKinds.includes(kind), typeName);
});

test("rpcName takes the method from a full RPC path, and a bare name as it is", (t) => {
  t.is(rpcName("payments.deposit.v1.DepositService/ResolveTransfer"), "ResolveTransfer");
  t.is(rpcName("console/CreateOperator"), "CreateOperator");
  t.is(rpcName("ConfirmDeposit"), "ConfirmDeposit");
  t.is(rpcName("a/b/c"), "c");
});

test("rpcText reads a full RPC path and a bare method alike", (t) => {
  t.is(rpcText("tr", "payments.deposit.v1.DepositService/ResolveTransfer"), rpcText("tr", "ResolveTransfer"));
  t.true(hasRpcText("payments.merchant.v1.MerchantService/CreateMerchant"));
  t.is(rpcText("en", "CreateMerchant"), "Merchant created");
  t.is(rpcText("tr", ""), "Bilinmeyen işlem (—)");
});

test("an unknown code is worded as unknown in each language", (t) => {
  t.is(codeText("en", "NEW_CODE"), "Unknown code (NEW_CODE)");
  t.false(hasCodeText("NEW_CODE"));
});

test("outcomeText words ok and running, and any other outcome as its code", (t) => {
  t.is(outcomeText("en", "ok"), "done");
  t.is(outcomeText("tr", "running"), "çalışıyor");
  t.is(outcomeText("en", "running"), "running");
  const code = Object.keys(CODE_TEXTS)[0]!;
  t.is(outcomeText("tr", code), codeText("tr", code));
  t.is(outcomeText("tr", "ZZZ"), "Bilinmeyen kod (ZZZ)");
});

test("every role of operators and merchant users is worded in both languages", (t) => {
  const roles: Array<[string, string, string]> = [
    ["viewer", "viewer", "izleyici"],
    ["operator", "operator", "operatör"],
    ["finance", "finance", "finans"],
    ["admin", "admin", "yönetici"],
    ["owner", "owner", "sahip"],
    ["developer", "developer", "geliştirici"],
  ];
  for (const [role, en, tr] of roles) {
    t.is(roleText("en", role), en);
    t.is(roleText("tr", role), tr);
  }
  t.is(roleText("en", "wizard"), "unknown role (wizard)");
  t.is(roleText("tr", "Admin"), "bilinmeyen rol (Admin)", "roles are lower case, exactly");
});

test("fieldText reads snake_case, camelCase and a dotted path's last part", (t) => {
  t.is(fieldText("tr", "bank_reference"), "banka referansı");
  t.is(fieldText("tr", "bankReference"), "banka referansı");
  t.is(fieldText("en", "withdrawal.bankReference"), "bank reference");
  t.is(fieldText("tr", "iban"), "IBAN");
  t.is(fieldText("en", "callbackUrl"), "callback URL");
});

test("a field the catalogue lacks is named as the service wrote it", (t) => {
  t.is(fieldText("en", "foo.barBaz"), "field foo.barBaz");
  t.is(fieldText("tr", "gizem"), "gizem alanı");
});

test("every service is worded by what it keeps, the console too", (t) => {
  const services: Array<[string, string, string]> = [
    ["merchant", "Merchants", "Üye işyerleri"],
    ["bank-catalog", "Bank catalogue", "Banka kataloğu"],
    ["deposit", "Deposits", "Yatırımlar"],
    ["payout", "Payouts", "Ödemeler ve çekimler"],
    ["callback-sender", "Callbacks", "Bildirimler"],
    ["console", "Console", "Konsol"],
  ];
  for (const [name, en, tr] of services) {
    t.is(serviceText("en", name), en);
    t.is(serviceText("tr", name), tr);
  }
  t.is(serviceText("tr", "ledger"), "Bilinmeyen kod (ledger)");
});

test("eventTypeText words a deposit's and a withdrawal's status change", (t) => {
  t.is(eventTypeText("tr", "deposit.completed"), "yatırım: tamamlandı");
  t.is(eventTypeText("en", "deposit.expired"), "deposit: expired");
  t.is(eventTypeText("tr", "withdrawal.failed"), "çekim: başarısız");
  t.is(eventTypeText("en", "withdrawal.processing"), "withdrawal: processing");
});

test("eventTypeText words an unknown kind or status as unknown", (t) => {
  t.is(eventTypeText("tr", "merchant.created"), "bilinmeyen durum (merchant.created)");
  t.is(eventTypeText("en", "deposit.teleported"), "deposit: unknown status (teleported)");
  t.is(eventTypeText("en", ""), "unknown status (—)");
});

test("every waiting reason and evidence is the service's sentence on an English page", (t) => {
  for (const text of ["underpayment: less than the requested amount arrived", "anything at all", ""]) t.is(waitingReasonText("en", text), text);
  for (const text of ["reference exact", "name 0.94", "whatever"]) t.is(matchReasonText("en", text), text);
});

test("an empty waiting reason stays empty in Turkish", (t) => {
  t.is(waitingReasonText("tr", ""), "");
});

test("the fixed waiting reasons each read in Turkish", (t) => {
  const cases: Array<[string, string]> = [
    ["late payment completed by the merchant's rule", "geç ödeme, üye işyerinin kuralı gereği tamamlandı"],
    ["confirmed with this transfer", "bu havaleyle onaylandı"],
    ["paid back, bank reference BR-12/9", "geri ödendi, banka referansı BR-12/9"],
    ["the return failed", "iade başarısız oldu"],
    ["no deposit on this account is in USD", "bu hesapta USD cinsinden yatırım yok"],
    ["the description carries the references of 1 deposit", "açıklama 1 yatırım referansını taşıyor"],
    ["the sender name and amount fit 2 pending deposits", "gönderen adı ve tutar 2 bekleyen yatırıma uyuyor"],
    ["no reference or matching sender name, and no pending deposit of this amount (1250.5 TRY) on this account", "referans ya da uyan gönderen adı yok ve bu hesapta bu tutarda (₺1.250,50) bekleyen yatırım yok"],
  ];
  for (const [en, tr] of cases) {
    t.true(knowsReason(en), en);
    t.is(waitingReasonText("tr", en), tr);
  }
});

test("a reason with a missing sender reads in Turkish for each kind of missing detail", (t) => {
  const base = "late payment: the deposit had expired, but the bank gave no sender ";
  const tail = ": an operator returns it with `transfer return` (--iban, --name)";
  t.regex(waitingReasonText("tr", `${base}Turkish IBAN${tail}`), /gönderenin Türk IBAN'ını vermedi/);
  t.regex(waitingReasonText("tr", `${base}name${tail}`), /gönderenin adını vermedi/);
  t.true(knowsReason(`${base}name${tail}`));
});

test("a missing-sender sentence around an unknown reason is unknown as a whole", (t) => {
  const text = "a new reason, but the bank gave no sender name: an operator returns it with `transfer return` (--iban, --name)";
  t.false(knowsReason(text));
  t.is(waitingReasonText("tr", text), `çevrilmemiş açıklama: “${text}”`);
});

test("a reason that only starts like a known one is not read as it", (t) => {
  t.false(knowsReason("the return failed twice"));
  t.false(knowsReason("xconfirmed with this transfer"));
});

test("actionReasonText translates the service's sentences and keeps an operator's own words", (t) => {
  t.is(actionReasonText("tr", "the return failed"), "iade başarısız oldu");
  t.is(actionReasonText("tr", "müşteri aradı, onayladı"), "müşteri aradı, onayladı");
  t.is(actionReasonText("tr", "customer called"), "customer called", "an operator's English is theirs, not untranslated service text");
  t.is(actionReasonText("en", "the return failed"), "the return failed");
});

test("each piece of match evidence reads in Turkish", (t) => {
  const cases: Array<[string, string]> = [
    ["reference exact", "referans birebir"],
    ["amount exact", "tutar birebir"],
    ["deposit expired", "yatırımın süresi dolmuş"],
    ["name 0.94", "ad benzerliği 0,94"],
    ["amount 450.00 of 500.00 TRY (short)", "tutar ₺450,00 / ₺500,00 (eksik)"],
    ["amount 550.00 of 500.00 TRY (over)", "tutar ₺550,00 / ₺500,00 (fazla)"],
    ["preferred to 2 expired deposits", "2 süresi dolmuş yatırıma tercih edildi"],
    ["1 expired deposit of this amount ignored", "bu tutardaki 1 süresi dolmuş yatırım dikkate alınmadı"],
  ];
  for (const [en, tr] of cases) {
    t.true(knowsMatchReason(en), en);
    t.is(matchReasonText("tr", en), tr);
  }
  t.false(knowsMatchReason("luck"));
  t.is(matchReasonText("tr", "luck"), "çevrilmemiş kanıt: “luck”");
});

test("matchByText words each way a transfer was matched, and an unknown one with its code", (t) => {
  t.is(matchByText("en", "reference"), "by reference");
  t.is(matchByText("tr", "reference"), "referansla");
  t.is(matchByText("tr", "name_amount"), "ad ve tutarla");
  t.is(matchByText("en", "amount"), "by amount alone");
  t.is(matchByText("tr", "magic"), "bilinmeyen yöntem (magic)");
  t.is(matchByText("en", "toString"), "unknown way (toString)");
});

const approval = (rpc: string, request: Record<string, unknown>, summary = "the service's summary") => ({ rpc: `payments.x.v1.S/${rpc}`, requestJson: JSON.stringify(request), summary });
const names = (id: string) => (id === "mer_1" ? "Kahve Dükkanı" : undefined);

test("a withdrawal's approval names the amount, the IBAN and the holder when there is one", (t) => {
  t.is(approvalText("en", approval("CreateWithdrawal", { amount: "5000", iban: "TR1" })), "Withdraw TRY\u00a050.00 to TR1");
  t.is(approvalText("tr", approval("CreateWithdrawal", { amount: "5000", iban: "TR1" })), "₺50,00 çekim: TR1 hesabına");
});

test("an approval whose amount is not a whole number of kuruş falls back to its action", (t) => {
  t.is(approvalText("tr", approval("CreateWithdrawal", { amount: "12.5", iban: "TR1" })), rpcText("tr", "CreateWithdrawal"));
  t.is(approvalText("en", approval("AdjustBalance", { merchantId: "mer_1" })), "the service's summary");
});

test("a balance adjustment names the merchant by name when known, else by id", (t) => {
  t.is(approvalText("en", approval("AdjustBalance", { merchantId: "mer_1", amount: "100", currency: "TRY" }), names), "Adjust the balance of Kahve Dükkanı (mer_1) by TRY\u00a01.00");
  t.is(approvalText("tr", approval("AdjustBalance", { merchantId: "mer_2", amount: "100" }), names), "mer_2 bakiyesine ₺1,00 düzeltme");
});

test("a transfer return names the transfer, the amount, the IBAN and the recipient", (t) => {
  const a = approval("CreateTransferReturn", { transferId: "trf_1", amount: "1000", iban: "TR9", recipientName: "Ali" });
  t.is(approvalText("en", a), "Return TRY\u00a010.00 of transfer trf_1 to TR9 (Ali)");
  t.is(approvalText("tr", a), "trf_1 havalesinin ₺10,00 tutarı iade: TR9 hesabına, Ali");
});

test("a withheld credit's approval says credit or dismiss", (t) => {
  t.is(approvalText("en", approval("ResolveWithheldCredit", { id: "whc_1", credit: true })), "Credit withheld sandbox money whc_1 to the merchant's live balance");
  t.is(approvalText("tr", approval("ResolveWithheldCredit", { id: "whc_1" })), "Bekletilen test parası whc_1 kapatılsın");
});

test("a deposit's confirmation names the amount when one was given", (t) => {
  t.is(approvalText("en", approval("ConfirmDeposit", { depositId: "dep_1", amount: "250" })), "Confirm deposit dep_1 with TRY\u00a02.50");
  t.is(approvalText("tr", approval("ConfirmDeposit", { depositId: "dep_1" })), "dep_1 yatırımı onaylansın");
});

test("a transfer's resolution is worded by its decision", (t) => {
  t.is(approvalText("en", approval("ResolveTransfer", { transferId: "trf_1", matchDepositId: "dep_1" })), "Match transfer trf_1 to deposit dep_1");
  t.is(approvalText("tr", approval("ResolveTransfer", { transferId: "trf_1", complete: true })), "trf_1 havalesinin yatırımı tamamlansın");
  t.is(approvalText("tr", approval("ResolveTransfer", { transferId: "trf_1", refuse: true })), "trf_1 havalesi reddedilsin");
  t.is(approvalText("en", approval("ResolveTransfer", { transferId: "trf_1", return: { iban: "TR5" } })), "Return transfer trf_1 to TR5");
  t.is(approvalText("tr", approval("ResolveTransfer", { transferId: "trf_1", return: {} })), "trf_1 havalesi gönderene iade edilsin");
  t.is(approvalText("en", approval("ResolveTransfer", { transferId: "trf_1" })), "the service's summary", "no decision: the summary");
});

test("a merchant's creation and mode change are worded with its name", (t) => {
  t.is(approvalText("tr", approval("CreateMerchant", { name: "Ege Tekstil" })), "Canlı üye işyeri oluşturulsun: Ege Tekstil");
  t.is(approvalText("en", approval("SetSandbox", { merchantId: "mer_1", sandbox: true }), names), "Switch Kahve Dükkanı (mer_1) to sandbox");
  t.is(approvalText("tr", approval("SetSandbox", { merchantId: "mer_1" }), names), "Kahve Dükkanı (mer_1) testten canlıya geçsin");
});

test("a receiving account's approvals name the account", (t) => {
  t.is(approvalText("en", approval("CreateReceivingAccount", { iban: "TR7", accountName: "Şirket" })), "Add live receiving account TR7 (Şirket)");
  t.is(approvalText("tr", approval("UpdateReceivingAccount", { accountId: "acc_1", active: true })), "acc_1 tahsilat hesabı yeniden etkinleştirilsin");
  t.is(approvalText("en", approval("UpdateReceivingAccount", { accountId: "acc_1" })), "Update receiving account acc_1");
});

test("a request that is not a JSON object falls back: the summary in English, the action in Turkish", (t) => {
  for (const requestJson of ["[]", "null", "3", "\"x\"", "{"]) {
    const a = { rpc: "S/CreateMerchant", requestJson, summary: "create it" };
    t.is(approvalText("en", a), "create it", requestJson);
    t.is(approvalText("tr", a), rpcText("tr", "CreateMerchant"), requestJson);
  }
});

test("without a summary an English page names the action too", (t) => {
  t.is(approvalText("en", { rpc: "S/Teleport", requestJson: "{}", summary: "" }), "Unknown action (Teleport)");
});
