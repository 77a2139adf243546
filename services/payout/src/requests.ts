import {
  currencyCode as currency,
  cursorField as cursor,
  identifier,
  merchantScope,
  normalizeIban,
  optionalTimestamp as optionalTime,
  pageLimit,
  positiveAmount as amount,
  text,
  TURKISH_IBAN_LENGTH,
  turkishIbanProblem as ibanProblem,
  type TurkishIbanProblem,
} from "@payments/kit";
import { z } from "zod";

/**
 * The field schemas the payout RPCs share. Each RPC parses its request once with
 * `parseRequest` (kit), which names the proto field in VALIDATION_ERROR.
 */

export { amount, currency, cursor, identifier, merchantScope, normalizeIban, optionalTime, pageLimit, text };

export const merchantId = identifier(100);

/**
 * The fields of a call that is about one merchant or, when an operator says so with
 * `all_merchants`, every merchant. Parse them with the rest of the request, then
 * `merchantScope` (kit) decides: the merchant id, or undefined for all; an empty merchant_id
 * without all_merchants is VALIDATION_ERROR, never "any merchant".
 */
export const scopeFields = {
  merchantId: z.string().max(100, "must be at most 100 characters"),
  allMerchants: z.boolean(),
};

export const withdrawalId = identifier(40);

/** The bank's reference of a transfer an operator completes: trimmed, 1..100 characters (the column's size). */
export const bankReference = text(100);

/**
 * The merchant's id of the transaction: 1..50 characters, kept as given. Leading or
 * trailing whitespace is refused rather than trimmed: MySQL's PAD SPACE collations compare
 * "p1 " equal to "p1" while SQLite does not, and trimming would echo back an id the
 * merchant never sent.
 */
export const processId = identifier(50).refine((v) => v.trim() === v, "must not begin or end with whitespace");

const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A manual adjustment: non-zero, either sign, within ±(2^53−1). */
export const signedAmount = z
  .bigint()
  .refine((v) => v !== 0n && v >= -MAX && v <= MAX, `must be a non-zero integer in the smallest currency unit, between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`)
  .transform((v) => Number(v));

/** A listing's filter: "" for every currency, else a three-letter code (a currency no longer configured still has its history). */
export const currencyFilter = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .refine((c) => c === "" || /^[A-Z]{3}$/.test(c), "must be a three-letter currency code");

/** A missing IBAN is a missing field (VALIDATION_ERROR); its form is judged by turkishIbanProblem (INVALID_IBAN). */
export const iban = z
  .string()
  .max(100, "must be at most 100 characters")
  .transform(normalizeIban)
  .refine((v) => v !== "", "is required");

/** Payout's words (INVALID_IBAN messages) for what kit's turkishIbanProblem finds. */
const IBAN_PROBLEMS: Record<TurkishIbanProblem, (normalized: string) => string> = {
  empty: () => "must contain only letters and digits",
  characters: () => "must contain only letters and digits",
  country: () => "must be a Turkish IBAN, starting with TR",
  length: (normalized) => `a Turkish IBAN has ${TURKISH_IBAN_LENGTH} characters, this one has ${normalized.length}`,
  checksum: () => "is not a valid IBAN (its check digits do not match)",
};

/** What is wrong with a normalised IBAN as a Turkish one (TR, 26 characters, ISO 13616 mod-97), or undefined. */
export function turkishIbanProblem(normalized: string): string | undefined {
  const problem = ibanProblem(normalized);
  return problem && IBAN_PROBLEMS[problem](normalized);
}

/** A failure reason code such as ACCOUNT_CLOSED: trimmed and upper-cased, then letters, digits and underscores. */
export const reasonCode = z
  .string()
  .trim()
  .transform((v) => v.toUpperCase())
  .refine((v) => v !== "", "is required")
  .refine((v) => v.length <= 100, "must be at most 100 characters")
  .refine((v) => /^[A-Z0-9_]*$/.test(v), "must be a code of letters, digits and underscores, e.g. ACCOUNT_CLOSED");

