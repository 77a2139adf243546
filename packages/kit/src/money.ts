/**
 * Amounts are integers in the currency's smallest unit (kuruş for TRY) everywhere; this is
 * the one place that knows how many of those units make the main unit and writes an amount
 * the way people read it. No float ever touches an amount: everything is integer arithmetic.
 */

/**
 * Digits after the decimal separator in the currency's smallest unit (ISO 4217 as ICU knows
 * it): 2 for TRY, EUR, USD; 0 for JPY; 3 for KWD. A code ICU does not know counts as 2.
 */
export function minorUnitDigits(currency: string): number {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * "450.00 TRY": an amount in the smallest unit written in the currency's main unit, exactly
 * (45000 kuruş is 450.00 TRY, never 45000.00). Negative amounts keep their sign; an empty
 * currency is TRY.
 */
export function formatMajor(amount: bigint | number, currency = "TRY"): string {
  const code = currency || "TRY";
  return `${majorUnits(amount, code)} ${code}`;
}

/** The number alone: 45000 kuruş → "450.00" (for "450.00 of 500.00 TRY"). */
export function majorUnits(amount: bigint | number, currency = "TRY"): string {
  const digits = minorUnitDigits(currency || "TRY");
  const units = typeof amount === "bigint" ? amount : BigInt(Math.trunc(amount));
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(digits);
  const fraction = digits > 0 ? `.${(abs % scale).toString().padStart(digits, "0")}` : "";
  return `${negative ? "-" : ""}${abs / scale}${fraction}`;
}
