import type { Language } from "./i18n.js";
import { formatMoney, localeOf } from "./format.js";

/*
 * Why an incoming transfer waits, and the evidence of a match, as the deposit service words them
 * (services/deposit/src/matching.ts, paid-amount-rules.ts, transfers.ts): English sentences with
 * counts and amounts in them. English pages show them as they are; Turkish pages get each one
 * in Turkish, read back by its pattern (amounts written Türkiye's way). A sentence no pattern
 * knows is still introduced in Turkish, and quoted. test/match-reasons.test.ts runs the service's
 * own matcher and rules and checks that every sentence they make has its pattern.
 */

type Words = (m: RegExpMatchArray) => string;

/** "450.00 TRY" (kit formatMajor) → "₺450,00" (or, in English, "TRY 450.00"). */
function amount(text: string | undefined, lang: Language = "tr"): string {
  const m = /^(-?\d+)(?:\.(\d+))? ([A-Z]{3})$/.exec(text ?? "");
  if (!m) return text ?? "";
  const fraction = (m[2] ?? "").padEnd(2, "0");
  return formatMoney(BigInt(`${m[1]}${fraction}`), m[3]!, lang);
}

const deposits = (n: string | undefined) => `${n} yatırım`;

/** A service's English sentence with its amounts ("450.00 TRY") written as English pages write money ("TRY 450.00"). */
function englishAmounts(text: string): string {
  return text.replace(/\bamount ([\d.]+) of ([\d.]+) ([A-Z]{3})\b/g, "amount $1 $3 of $2 $3").replace(/(?<![\d.])-?\d+(?:\.\d+)? [A-Z]{3}\b/g, (whole) => amount(whole, "en"));
}

/** A match's score (0 to 1) in the page's language: `0.94`, `0,94`. */
export function scoreText(lang: Language, score: number): string {
  return new Intl.NumberFormat(localeOf(lang), { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(score);
}

const WAITING: ReadonlyArray<[RegExp, Words]> = [
  [/^no pending deposit is assigned to this account$/, () => "bu hesaba atanmış bekleyen yatırım yok"],
  [/^no deposit on this account is in ([A-Z]{3})(?:; the description carries the reference of a ([A-Z]{3}) deposit)?$/, (m) => `bu hesapta ${m[1]} cinsinden yatırım yok${m[2] ? `; açıklama bir ${m[2]} yatırımının referansını taşıyor` : ""}`],
  [/^the description carries the references of (\d+) deposits?$/, (m) => `açıklama ${deposits(m[1])} referansını taşıyor`],
  [/^the sender name and amount fit (\d+) (expired|pending) deposits$/, (m) => `gönderen adı ve tutar ${m[1]} ${m[2] === "expired" ? "süresi dolmuş" : "bekleyen"} yatırıma uyuyor`],
  [/^the amount fits one pending deposit but the sender name does not \(([\d.]+)\)$/, (m) => `tutar bekleyen bir yatırıma uyuyor ama gönderen adı uymuyor (${m[1]!.replace(".", ",")})`],
  [/^(\d+) pending deposits await (.+); no reference or matching sender name$/, (m) => `${m[1]} bekleyen yatırım ${amount(m[2])} bekliyor; referans ya da uyan gönderen adı yok`],
  [/^the sender name fits but the amount differs; no reference in the description$/, () => "gönderen adı uyuyor ama tutar farklı; açıklamada referans yok"],
  [
    /^no reference or matching sender name, and no pending deposit of this amount \((.+?)\) on this account(?:; (\d+) expired deposits? of this amount)?$/,
    (m) => `referans ya da uyan gönderen adı yok ve bu hesapta bu tutarda (${amount(m[1])}) bekleyen yatırım yok${m[2] ? `; bu tutarda ${m[2]} süresi dolmuş yatırım var` : ""}`,
  ],
  [/^late payment: the merchant's rule returns it to the sender$/, () => "geç ödeme: üye işyerinin kuralı gereği gönderene iade edilir"],
  [/^late payment: the deposit had expired$/, () => "geç ödeme: yatırımın süresi dolmuştu"],
  [/^underpayment: less than the requested amount arrived$/, () => "eksik ödeme: istenen tutardan az geldi"],
  [/^overpayment: more than the requested amount arrived$/, () => "fazla ödeme: istenen tutardan fazla geldi"],
  [/^late payment completed by the merchant's rule$/, () => "geç ödeme, üye işyerinin kuralı gereği tamamlandı"],
  [/^confirmed with this transfer$/, () => "bu havaleyle onaylandı"],
  [/^paid back, bank reference (.+)$/, (m) => `geri ödendi, banka referansı ${m[1]}`],
  [/^the return failed$/, () => "iade başarısız oldu"],
];

const MISSING_SENDER = /^(.+), but the bank gave no sender (Turkish IBAN or name|Turkish IBAN|name): an operator returns it with `transfer return` \(--iban, --name\)$/;
const MISSING_WORDS: Record<string, string> = { "Turkish IBAN or name": "Türk IBAN'ını ya da adını", "Turkish IBAN": "Türk IBAN'ını", name: "adını" };

function turkishReason(text: string): string | undefined {
  const missing = MISSING_SENDER.exec(text);
  if (missing) {
    const inner = turkishReason(missing[1]!);
    return inner === undefined ? undefined : `${inner}; ancak banka gönderenin ${MISSING_WORDS[missing[2]!]} vermedi: bir operatör iadeyi IBAN ve adla kendisi yapar`;
  }
  for (const [pattern, words] of WAITING) {
    const m = pattern.exec(text);
    if (m) return words(m);
  }
  return undefined;
}

/** Whether the Turkish reading knows this sentence (the tests ask). */
export function knowsReason(text: string): boolean {
  return turkishReason(text) !== undefined;
}

/** Why a transfer waits (its unmatched reason), or an action's reason the service wrote, in the page's language. */
export function waitingReasonText(lang: Language, text: string): string {
  if (!text) return text;
  if (lang === "en") return englishAmounts(text);
  return turkishReason(text) ?? `çevrilmemiş açıklama: “${text}”`;
}

/** A transfer action's reason: the service's own sentences in the page's language; an operator's own words as they wrote them. */
export function actionReasonText(lang: Language, text: string): string {
  return knowsReason(text) ? waitingReasonText(lang, text) : text;
}

const EVIDENCE: ReadonlyArray<[RegExp, Words]> = [
  [/^reference exact$/, () => "referans birebir"],
  [/^amount exact$/, () => "tutar birebir"],
  [/^deposit expired$/, () => "yatırımın süresi dolmuş"],
  [/^name ([\d.]+)$/, (m) => `ad benzerliği ${m[1]!.replace(".", ",")}`],
  [/^amount ([\d.]+) of (.+) \((short|over)\)$/, (m) => `tutar ${amount(`${m[1]} ${m[2]!.slice(-3)}`)} / ${amount(m[2])} (${m[3] === "short" ? "eksik" : "fazla"})`],
  [/^preferred to (\d+) expired deposits?$/, (m) => `${m[1]} süresi dolmuş yatırıma tercih edildi`],
  [/^(\d+) expired deposits? of this amount ignored$/, (m) => `bu tutardaki ${m[1]} süresi dolmuş yatırım dikkate alınmadı`],
];

/** One piece of a match's evidence ("reference exact", "name 0.94", "amount 450.00 of 500.00 TRY (short)"). */
export function matchReasonText(lang: Language, text: string): string {
  if (lang === "en") return englishAmounts(text);
  for (const [pattern, words] of EVIDENCE) {
    const m = pattern.exec(text);
    if (m) return words(m);
  }
  return `çevrilmemiş kanıt: “${text}”`;
}

export function knowsMatchReason(text: string): boolean {
  return EVIDENCE.some(([pattern]) => pattern.test(text));
}

const MATCH_BY: Readonly<Record<string, readonly [string, string]>> = {
  reference: ["by reference", "referansla"],
  name_amount: ["by name and amount", "ad ve tutarla"],
  amount: ["by amount alone", "yalnızca tutarla"],
};

/** How a transfer was matched (`reference`, `name_amount`, `amount`). */
export function matchByText(lang: Language, by: string): string {
  const pair = Object.hasOwn(MATCH_BY, by) ? MATCH_BY[by] : undefined;
  if (!pair) return lang === "tr" ? `bilinmeyen yöntem (${by})` : `unknown way (${by})`;
  return lang === "tr" ? pair[1] : pair[0];
}
