import { foldTurkish } from "../turkish-text.js";
import { cleanText, DESCRIPTION_MAX, ibansInText, normalizeIban, SENDER_NAME_MAX } from "./text.js";

/**
 * Who sent a transfer, from the places Turkish banks put it in an MT940 statement line: a
 * labelled field of :86: ("GÖNDEREN: …", "AD SOYAD: …", "Gönd: …"), the :61: supplementary
 * details, or the first line of :86: after the transfer type ("GELEN EFT AYŞE YILMAZ").
 *
 * The rule that matters most: a name never carries another field's text. A recorded sender name
 * becomes the recipient's name when a transfer is returned, so "AYŞE YILMAZ / AÇIKLAMA: ODEME
 * REF …" must come out as "AYŞE YILMAZ", and a field that names the receiver (ALICI …) is
 * never taken for the sender. When nothing names the sender, the name is "": matching then
 * relies on the reference and the amount, which is better than a wrong name.
 */

/** SWIFT's line width for :86: text: a line this long was cut by the bank, not ended by the writer. */
export const MT940_LINE_WIDTH = 65;

/**
 * :86: lines as the writer meant them: a line exactly `width` long was cut by the bank's
 * line limit (possibly inside a word, or inside a reference such as "AB-CD 2345"), so the
 * next line continues it with nothing in between; a shorter line ended where the writer
 * ended it, so a space goes in between. Returns the logical lines.
 */
export function joinWrapped(lines: readonly string[], width = MT940_LINE_WIDTH): string[] {
  const logical: string[] = [];
  let previous: string | undefined;
  for (const line of lines) {
    if (previous !== undefined && previous.length === width && !/\s$/.test(previous) && !/^\s/.test(line) && logical.length > 0) {
      logical[logical.length - 1] += line;
    } else {
      logical.push(line);
    }
    previous = line;
  }
  return logical.map((line) => line.trim()).filter((line) => line !== "");
}

type LabelRole = "sender" | "senderIban" | "receiver" | "other";

/**
 * Field labels banks print in :86:, as written; compared Turkish-folded (foldTurkish), so
 * "GÖNDEREN", "GONDEREN" and "gönderen", "ÜNVAN" and "UNVAN", "ADI", "ADİ" and "adı" are one
 * label. The list names the usual fields so that a sender's name stops where the next field
 * starts; an unknown one-word label followed by a colon stops it too.
 */
const LABEL_PHRASES: Readonly<Record<LabelRole, readonly string[]>> = {
  sender: [
    "GÖNDEREN",
    "GÖNDEREN ADI",
    "GÖNDEREN AD",
    "GÖNDEREN ADI SOYADI",
    "GÖNDEREN AD SOYAD",
    "GÖNDEREN ÜNVAN",
    "GÖNDEREN ÜNVANI",
    "GÖNDEREN ADI ÜNVANI",
    "GÖND",
    "GÖNDERİCİ",
    "GÖNDERİCİ ADI",
    "AD SOYAD",
    "ADI SOYADI",
    "AD SOYADI",
    "ADI SOYAD",
    "AD SOYAD ÜNVAN",
    "AD SOYAD ÜNVANI",
    "ÜNVAN",
    "ÜNVANI",
    "AMİR",
    "AMİR ADI",
    "KARŞI AD SOYAD",
  ],
  senderIban: ["GÖNDEREN IBAN", "GÖNDEREN IBAN NO", "GÖNDEREN HESAP", "GÖNDEREN HESAP NO", "IBAN", "IBAN NO", "KARŞI IBAN", "KARŞI HESAP", "KARŞI HESAP IBAN", "AMİR IBAN", "AMİR HESAP"],
  receiver: [
    "ALICI",
    "ALICI ADI",
    "ALICI AD",
    "ALICI AD SOYAD",
    "ALICI ADI SOYADI",
    "ALICI ÜNVAN",
    "ALICI ÜNVANI",
    "ALICI IBAN",
    "ALICI HESAP",
    "ALICI HESAP NO",
    "LEHDAR",
    "LEHTAR",
    "LEHDAR ADI",
    "ALAN",
    "ALAN BANKA",
    "ALAN ŞUBE",
    "ALAN HESAP",
  ],
  other: [
    "AÇIKLAMA",
    "AÇIKLAMASI",
    "İŞLEM AÇIKLAMASI",
    "MÜŞTERİ AÇIKLAMASI",
    "REF",
    "REF NO",
    "REF.NO",
    "REFERANS",
    "REFERANS NO",
    "HAVALE REFERANSI",
    "SORGU NO",
    "FAST SORGU NO",
    "EFT SORGU NO",
    "FAST MESAJ KODU",
    "MESAJ",
    "NOT",
    "TUTAR",
    "İŞLEM TUTARI",
    "HAVALE TUTARI",
    "EFT TUTARI",
    "TARİH",
    "İŞLEM TARİHİ",
    "VALÖR",
    "SAAT",
    "BANKA",
    "GÖNDEREN BANKA",
    "GÖNDEREN ŞUBE",
    "GÖNDEREN VKN",
    "GÖNDEREN TCKN",
    "ŞUBE",
    "VKN",
    "TCKN",
    "VERGİ NO",
    "KİMLİK NO",
    "TC KİMLİK NO",
    "İŞLEM NO",
    "İŞLEM YAPAN",
    "İŞLEM YAPAN AD SOYAD",
    "DEKONT NO",
    "FİŞ NO",
    "MASRAF",
    "KOMİSYON",
    "BSMV",
    "KANAL",
    "İŞLEM TİPİ",
    "İŞLEM TÜRÜ",
    "ÖDEME AMACI",
    "HESAP",
    "HESAP NO",
    "MÜŞTERİ NO",
  ],
};

/** A label's folded words and role; longest first, so "GÖNDEREN BANKA" wins over "GÖNDEREN". */
const LABELS: readonly { words: readonly string[]; role: LabelRole }[] = (Object.entries(LABEL_PHRASES) as [LabelRole, readonly string[]][])
  .flatMap(([role, phrases]) => phrases.map((phrase) => ({ words: phrase.split(" ").map(foldWord), role })))
  .sort((a, b) => b.words.length - a.words.length);

/**
 * Words that end a name even without a colon ("GELEN EFT AYŞE YILMAZ REF AB-12"): field names
 * no Turkish personal or company name consists of. Folded.
 */
const STOP_WORDS = new Set(["açıklama", "açıklaması", "iban", "ref", "ref.no", "refno", "referans", "tutar", "tarih", "alıcı"].map(foldWord));

/**
 * Words that open a payment's description, never a name ("ODEME REF AB-12", "FATURA 2024/118"):
 * an unlabelled line that starts with one is a description. Mid-line they are left alone, since
 * payment companies carry them in their names ("İYZİ ÖDEME VE ELEKTRONİK PARA HİZMETLERİ A.Ş."). Folded.
 */
const DESCRIPTION_OPENERS = new Set(["ödeme", "ödemesi", "sipariş", "fatura", "kira", "aidat", "borç", "masraf", "iade", "tahsilat"].map(foldWord));

/** Transfer-type words Turkish banks put before the sender's name ("GELEN EFT", "FAST GELEN", "HAVALE"), and a bare "GÖNDEREN". */
const LEADING_LABEL = /^(?:(?:GELEN\s+)?(?:EFT|HAVALE|FAST)(?:\s+GELEN)?|GELEN|GÖNDEREN|GONDEREN)\b[\s\-:/]*/iu;

/** The IBAN shape ibansInText looks for; a match is an IBAN only when its checksum holds. */
const IBAN_SHAPE = /\b[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,8}\b/gu;

const EDGE_PUNCTUATION = /^[\s\-:/,;|]+|[\s\-:/,;|]+$/gu;

function foldWord(word: string): string {
  return foldTurkish(word).replace(/[.,;]+$/u, "");
}

interface Token {
  folded: string;
  start: number;
  end: number;
}

/** Words of a line; a colon, slash or bar separates words the way a space does. */
function tokens(line: string): Token[] {
  return [...line.matchAll(/[^\s:/|]+/gu)].map((match) => ({ folded: foldWord(match[0]), start: match.index, end: match.index + match[0].length }));
}

interface LabelHit {
  role: LabelRole;
  /** Where the label starts. */
  start: number;
  /** Where its value starts (after the colon). */
  valueStart: number;
}

/**
 * The labels in one logical line, in order. A label is a known phrase followed by a colon
 * ("Gönderen : …", "AD SOYAD: …"), a known phrase of two or more words opening the line without
 * a colon (Vakıfbank writes "GONDEREN AD AKEDAŞ …"), or any other single word of letters
 * followed by a colon ("KANAL: …").
 */
function labelHits(line: string): LabelHit[] {
  const words = tokens(line);
  const hits: LabelHit[] = [];
  for (let i = 0; i < words.length; ) {
    const found = knownLabelAt(line, words, i) ?? otherLabelAt(line, words, i);
    if (found) {
      hits.push(found.hit);
      i = found.next;
    } else {
      i++;
    }
  }
  return hits;
}

function knownLabelAt(line: string, words: readonly Token[], i: number): { hit: LabelHit; next: number } | undefined {
  for (const label of LABELS) {
    const k = label.words.length;
    if (i + k > words.length) continue;
    const matches = label.words.every((word, j) => words[i + j]!.folded === word && (j === 0 || /^\s+$/u.test(line.slice(words[i + j - 1]!.end, words[i + j]!.start))));
    if (!matches) continue;
    const after = words[i + k - 1]!.end;
    const colon = /^\s*:(?!\/\/)/u.exec(line.slice(after));
    if (colon) return { hit: { role: label.role, start: words[i]!.start, valueStart: after + colon[0].length }, next: i + k };
    if (k >= 2 && i === 0 && words.length > k) return { hit: { role: label.role, start: words[i]!.start, valueStart: after }, next: i + k };
  }
  return undefined;
}

function otherLabelAt(line: string, words: readonly Token[], i: number): { hit: LabelHit; next: number } | undefined {
  const word = words[i]!;
  if (!/^\p{L}{2,}$/u.test(line.slice(word.start, word.end))) return undefined;
  const colon = /^\s*:(?!\/\/)/u.exec(line.slice(word.end));
  return colon ? { hit: { role: "other", start: word.start, valueStart: word.end + colon[0].length }, next: i + 1 } : undefined;
}

interface Field {
  role: LabelRole;
  /** Where the label starts and its value ends, in the line. */
  start: number;
  end: number;
  value: string;
}

/** Each label of the line with its value: the text up to the next label or the end of the line. */
function fieldsOf(line: string): Field[] {
  const hits = labelHits(line);
  return hits.map((hit, n) => {
    const end = hits[n + 1]?.start ?? line.length;
    return { role: hit.role, start: hit.start, end, value: line.slice(hit.valueStart, end) };
  });
}

/** Index of the first valid IBAN in the text (printed in groups or electronic), or -1. */
function firstIbanAt(text: string): number {
  for (const match of text.matchAll(IBAN_SHAPE)) {
    if (ibansInText(match[0]).length > 0) return match.index;
  }
  return -1;
}

/** The text with an IBAN at its very start taken off. */
function withoutLeadingIban(text: string): string {
  const match = /^[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,8}\b/u.exec(text);
  const iban = match ? ibansInText(match[0])[0] : undefined;
  if (!iban) return text;
  // The IBAN's characters as printed, with the single spaces between its groups.
  let at = 0;
  for (let k = 0; k < iban.length; k++) {
    while (text[at] === " ") at++;
    at++;
  }
  return text.slice(at);
}

/**
 * A name from a field value or a line: it ends at a separator (" / ", "|"), an IBAN or a
 * field word (REF, AÇIKLAMA, …); a leading IBAN is skipped. "" when a field word comes first.
 */
function nameIn(text: string): string {
  let name = text;
  const separator = /\s[/|]|\|/u.exec(name);
  if (separator) name = name.slice(0, separator.index);
  name = withoutLeadingIban(name.replace(EDGE_PUNCTUATION, ""));
  const iban = firstIbanAt(name);
  if (iban >= 0) name = name.slice(0, iban);
  const stop = tokens(name).find((word) => STOP_WORDS.has(word.folded));
  if (stop) name = name.slice(0, stop.start);
  return cleanText(name.replace(EDGE_PUNCTUATION, ""), SENDER_NAME_MAX);
}

/**
 * A name from an unlabelled line (the first line of :86:, the :61: supplementary details):
 * the line after its transfer type, up to the first field. A line that opens with a field
 * ("AÇIKLAMA: …", "ALICI: …") or a description word ("ODEME REF …") names no sender, and neither
 * does one of codewords ("/OCMT/…").
 */
function nameFromLine(line: string): string {
  if (/^\/[A-Z0-9]{2,4}\//u.test(line)) return "";
  let rest = line.trim();
  for (let previous = ""; previous !== rest; ) {
    previous = rest;
    rest = withoutLeadingIban(rest.replace(LEADING_LABEL, "").replace(EDGE_PUNCTUATION, ""));
  }
  const first = labelHits(rest)[0];
  if (first?.start === 0 || DESCRIPTION_OPENERS.has(tokens(rest)[0]?.folded ?? "")) return "";
  const name = nameIn(first ? rest.slice(0, first.start) : rest);
  return /\p{L}/u.test(name) ? name : "";
}

/**
 * Who sent a transfer, and its description, from :86: (and the :61: supplementary details).
 * - Structured `?20…`/`>20…` (the German-style layout some banks use): description from the
 *   purpose subfields ?20–?29 and ?60–?63, name from ?32+?33, IBAN from ?31.
 * - Structured `/TAG/…`: name from /NAME/ or /ORDP/, IBAN from /IBAN/ or /ACCW/; description
 *   is the whole text (the reference may sit in any tag).
 * - Free text (what Turkish banks mostly send): description is the whole text. The name, in
 *   this order: a sender field of :86: ("GÖNDEREN:", "GÖNDEREN ADI:", "AD SOYAD:", "ÜNVAN:",
 *   "Gönd:", … in any case, with or without Turkish letters), then one in the supplementary
 *   details; then the supplementary details themselves (a field the bank fills for this
 *   purpose, where it uses it); last the first line of :86: after its transfer type, the
 *   layout most Turkish banks use. Each stops at the next field. The IBAN: one in a sender
 *   IBAN field ("GÖNDEREN IBAN:", "IBAN:"), else in the sender's field, else the first in the
 *   text outside receiver fields, else in the supplementary details; never the receiving
 *   account's own.
 * In the structured layouts an empty name falls back to the supplementary details too.
 */
export function senderOf(details: string, structured: Record<string, string> | undefined, receivingIban: string, supplementary = ""): { name: string; iban?: string; description: string } {
  const logical = joinWrapped(details.split("\n"));
  const fullText = logical.join(" ");
  const extra = cleanText(supplementary, DESCRIPTION_MAX);
  const otherIban = (candidates: readonly string[]) => candidates.map(normalizeIban).find((iban) => iban !== receivingIban && ibansInText(iban).includes(iban));
  const ibanOf = (text: string) => ibansInText(text).find((iban) => iban !== receivingIban);
  const withIban = (result: { name: string; description: string }, iban: string | undefined) => (iban ? { ...result, iban } : result);

  if (structured && Object.keys(structured).some((key) => /^\d{2}$/.test(key))) {
    const pick = (keys: string[]) => joinWrapped(keys.map((key) => structured[key] ?? "").filter(Boolean), 27).join(" ");
    const purpose = pick(["20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "60", "61", "62", "63"]);
    const description = cleanText(purpose || fullText, DESCRIPTION_MAX);
    const iban = otherIban([structured["31"] ?? "", ...ibansInText(fullText), ...ibansInText(extra)]);
    return withIban({ name: cleanText(pick(["32", "33"]), SENDER_NAME_MAX) || nameFromLine(extra), description }, iban);
  }
  if (structured && Object.keys(structured).some((key) => /^[A-Z0-9]{2,4}$/.test(key) && /[A-Z]/.test(key))) {
    const name = [structured["NAME"], structured["ORDP"]].map((v) => (v ?? "").trim()).find(Boolean) ?? "";
    const iban = otherIban([structured["IBAN"] ?? "", structured["ACCW"] ?? "", ...ibansInText(fullText), ...ibansInText(extra)]);
    return withIban({ name: cleanText(name, SENDER_NAME_MAX) || nameFromLine(extra), description: cleanText(fullText, DESCRIPTION_MAX) }, iban);
  }

  const lineFields = logical.map(fieldsOf);
  const extraFields = fieldsOf(extra);
  const fields = [...lineFields.flat(), ...extraFields];
  const senderFields = fields.filter((field) => field.role === "sender");
  const name = senderFields.map((field) => nameIn(field.value)).find(Boolean) || nameFromLine(extra) || nameFromLine(logical[0] ?? "");
  const outsideReceiver = logical.map((line, n) => lineFields[n]!.filter((field) => field.role === "receiver").reduceRight((text, field) => text.slice(0, field.start) + " " + text.slice(field.end), line));
  const iban =
    fields
      .filter((field) => field.role === "senderIban")
      .concat(senderFields)
      .map((field) => ibanOf(field.value))
      .find(Boolean) ??
    ibanOf(outsideReceiver.join(" ")) ??
    ibanOf(extra);
  return withIban({ name, description: cleanText(fullText, DESCRIPTION_MAX) }, iban);
}
