import { hasUnsafeCharacters, isTurkishIban, isValidIban, minorUnitDigits, normalizeIban } from "@payments/kit";

/**
 * Small text rules the feed adapters share, so an MT940 line and a JSON record come out
 * the same way.
 */

/** The limits recordTransfer's columns and the ReportTransfer RPC hold (sender_name 200, reference 500, bank_transaction_id 100). */
export const SENDER_NAME_MAX = 200;
export const DESCRIPTION_MAX = 500;
export const BANK_TRANSACTION_ID_MAX = 100;

// eslint-disable-next-line no-control-regex -- control characters are exactly what this removes from bank text
const UNSAFE_GLOBAL = /[\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/gu;

/**
 * Bank free text made safe to store and show: control and bidi-override characters (which
 * kit's text() refuses) become spaces, runs of whitespace one space, ends trimmed, then cut to
 * `max` characters. Statements are not refused for such characters: the bank sent them, and
 * the transfer must still be recorded.
 */
export function cleanText(value: string, max: number): string {
  const cleaned = value.replace(UNSAFE_GLOBAL, " ").replace(/\s+/gu, " ").trim();
  return cleaned.length <= max ? cleaned : cleaned.slice(0, max).trimEnd();
}

export { hasUnsafeCharacters, isTurkishIban, isValidIban, normalizeIban };

/**
 * The Turkish IBAN an account identification names: banks write :25: as the plain IBAN, in
 * groups of four, or with a prefix or suffix ("TR33…26 TRY", "0006/TR33…"). Undefined when
 * there is none, or its checksum is wrong.
 */
export function turkishIbanIn(value: string): string | undefined {
  const match = /TR\d{24}/.exec(normalizeIban(value));
  return match && isTurkishIban(match[0]) ? match[0] : undefined;
}

/**
 * Every valid IBAN written in free text, electronic form, in order: printed ("TR12 0006
 * 4000 …") or electronic. Turkish ones are what banks print; other countries' are found too
 * (a foreign sender) when their checksum holds.
 */
export function ibansInText(text: string): string[] {
  const found: string[] = [];
  // Two letters, two check digits, then 11..30 alphanumerics, optionally in groups of four.
  const pattern = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}\b/g;
  for (const match of text.toUpperCase().matchAll(pattern)) {
    const candidate = normalizeIban(match[0]);
    // The printed form can run into the next word; shorten until the checksum holds.
    for (let end = candidate.length; end >= 15; end--) {
      const iban = candidate.slice(0, end);
      if (isValidIban(iban)) {
        if (!found.includes(iban)) found.push(iban);
        break;
      }
    }
  }
  return found;
}

/** Whether a YYYY-MM-DD string is a real calendar date. */
export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export { minorUnitDigits };

/**
 * A decimal amount as written in a statement ("1500,00", "1500,", "1500", "0,5") to an
 * integer in the smallest unit, by string arithmetic: "1500,00" → 150000. Undefined when the
 * text is not such an amount, has more decimals than the currency's unit (a non-zero third
 * decimal for TRY), or is beyond Number.MAX_SAFE_INTEGER units.
 */
export function decimalToMinorUnits(text: string, digits: number): number | undefined {
  const match = /^(\d+)(?:[,.](\d*))?$/.exec(text);
  if (!match) return undefined;
  const whole = match[1]!;
  const fraction = match[2] ?? "";
  if (fraction.length > digits && /[1-9]/.test(fraction.slice(digits))) return undefined;
  const units = BigInt(whole) * 10n ** BigInt(digits) + BigInt(fraction.slice(0, digits).padEnd(digits, "0") || "0");
  return units <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(units) : undefined;
}
