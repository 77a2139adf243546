import type { Language } from "./i18n.js";

/**
 * How the console writes and reads money and time, on both sides (operators' and merchants'):
 * Türkiye's way in Turkish (`₺22.574,50`), the English way in English (`TRY 22,574.50`), every
 * time in Türkiye's time (Europe/Istanbul). Amounts are exact: the smallest unit (kuruş) goes
 * into Intl as a decimal string, never through a float.
 */

/** Türkiye's time, the banks', the operators' and the merchants' clock. */
export const TIME_ZONE = "Europe/Istanbul";

const LOCALES: Record<Language, string> = { tr: "tr-TR", en: "en-GB" };

export function localeOf(lang: Language): string {
  return LOCALES[lang];
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(lang: Language, currency: string): Intl.NumberFormat {
  const key = `${lang}:${currency}`;
  let format = moneyFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(LOCALES[lang], { style: "currency", currency, minimumFractionDigits: 2, maximumFractionDigits: 2 });
    moneyFormats.set(key, format);
  }
  return format;
}

/** The smallest unit as a decimal string of the main unit: 2257450n → "22574.50", -5n → "-0.05". */
export function majorDecimal(minor: bigint, digits = 2): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const scale = 10n ** BigInt(digits);
  return `${negative ? "-" : ""}${abs / scale}.${String(abs % scale).padStart(digits, "0")}`;
}

/** Money in the smallest unit as the page's language writes it: `₺22.574,50` (tr), `TRY 22,574.50` (en). */
export function formatMoney(amount: bigint | number | string, currency: string, lang: Language): string {
  const minor = typeof amount === "bigint" ? amount : BigInt(amount);
  try {
    return moneyFormat(lang, currency || "TRY").format(majorDecimal(minor) as Intl.StringNumericLiteral);
  } catch {
    // A currency code Intl does not know: the number in the locale's form and the code as it came.
    return `${new Intl.NumberFormat(LOCALES[lang], { minimumFractionDigits: 2 }).format(majorDecimal(minor) as Intl.StringNumericLiteral)} ${currency}`;
  }
}

/** A plain number of the main unit in the page's form, without the currency: `22.574,50` / `22,574.50` (form values, CSV). */
export function formatMajorPlain(amount: bigint, lang: Language): string {
  return new Intl.NumberFormat(LOCALES[lang], { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(majorDecimal(amount) as Intl.StringNumericLiteral);
}

/**
 * An amount a person typed in the main unit, as the smallest unit, exactly; undefined when it is
 * not one. Türkiye's way and the English way are both read: `1.250,75`, `1250,75`, `1250.75`,
 * `1,250.75`, `₺1.250,75`, `1 250,75`. With both separators, the last one is the decimal mark. With
 * one kind only: a comma or a dot is the decimal mark unless it groups thousands more than once (`1.250.000`), or once with three
 * digits after it when it is the page's grouping mark (`1.250` is one thousand two hundred and
 * fifty lira in a Turkish page, as Türkiye writes it, and `1,250` in an English one; the other
 * mark there would be a third decimal, refused). At most `digits` decimals; zero and below are the caller's to refuse.
 */
export function parseMoney(text: string, lang: Language = "tr", digits = 2): bigint | undefined {
  const cleaned = text.trim().replace(/^(₺|TRY|TL)\s*/i, "").replace(/\s*(₺|TRY|TL)$/i, "").replace(/[\s\u00a0\u202f']/g, "");
  if (!/^\d[\d.,]*$/.test(cleaned) || cleaned.length > 24) return undefined;
  const lastDot = cleaned.lastIndexOf(".");
  const lastComma = cleaned.lastIndexOf(",");
  let whole: string;
  let fraction: string;
  if (lastDot >= 0 && lastComma >= 0) {
    const decimalMark = lastDot > lastComma ? "." : ",";
    const groupMark = decimalMark === "." ? "," : ".";
    const at = cleaned.lastIndexOf(decimalMark);
    whole = cleaned.slice(0, at);
    fraction = cleaned.slice(at + 1);
    if (fraction.includes(groupMark) || !isGrouped(whole, groupMark)) return undefined;
    whole = whole.split(groupMark).join("");
  } else if (lastDot >= 0 || lastComma >= 0) {
    const mark = lastDot >= 0 ? "." : ",";
    const parts = cleaned.split(mark);
    const groupsThousands = isGrouped(cleaned, mark);
    const thousands = parts.length > 2 ? groupsThousands : groupsThousands && mark === (lang === "tr" ? "." : ",");
    if (thousands) {
      whole = parts.join("");
      fraction = "";
    } else {
      if (parts.length !== 2) return undefined;
      whole = parts[0] ?? "";
      fraction = parts[1] ?? "";
    }
  } else {
    whole = cleaned;
    fraction = "";
  }
  if (!/^\d{1,15}$/.test(whole) || !/^\d*$/.test(fraction) || fraction.length > digits) return undefined;
  return BigInt(whole) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, "0") || "0");
}

/** `1.250.000` with `.`: a first group of one to three digits, then groups of exactly three. */
function isGrouped(text: string, mark: string): boolean {
  const parts = text.split(mark);
  if (parts.length === 1) return /^\d+$/.test(text);
  return /^\d{1,3}$/.test(parts[0] ?? "") && parts.slice(1).every((p) => /^\d{3}$/.test(p));
}

const timeFormats = new Map<string, Intl.DateTimeFormat>();

function timeFormat(lang: Language, style: "time" | "date" | "short"): Intl.DateTimeFormat {
  const key = `${lang}:${style}`;
  let format = timeFormats.get(key);
  if (!format) {
    const options: Intl.DateTimeFormatOptions =
      style === "date" ? { dateStyle: "medium" } : style === "short" ? { dateStyle: "short", timeStyle: "short" } : { dateStyle: "medium", timeStyle: "medium" };
    format = new Intl.DateTimeFormat(LOCALES[lang], { timeZone: TIME_ZONE, ...options });
    timeFormats.set(key, format);
  }
  return format;
}

/** An instant in Türkiye's time, as the page's language writes it: `7 Ara 2026 14:05:09` / `7 Dec 2026, 14:05:09`. */
export function formatTime(at: Date, lang: Language): string {
  return timeFormat(lang, "time").format(at);
}

/** A day in Türkiye's time: `7 Ara 2026`. */
export function formatDay(at: Date, lang: Language): string {
  return timeFormat(lang, "date").format(at);
}

/** The day (YYYY-MM-DD) an instant falls on in Türkiye. */
export function turkeyDay(at: Date): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: TIME_ZONE, year: "numeric", month: "2-digit", day: "2-digit" }).format(at);
}
