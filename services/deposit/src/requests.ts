import { currencyCode as currency, identifier, isValidIban, normalizeIban, pageLimit, positiveAmount as amount, text } from "@payments/kit";
import { z } from "zod";

/**
 * The field schemas the deposit RPCs share. Each RPC parses its request once with
 * `parseRequest` (kit), which names the proto field in VALIDATION_ERROR.
 */

export { amount, currency, identifier, normalizeIban, pageLimit, text };

export const merchantId = identifier(100);
export const depositId = identifier(40);

/**
 * The merchant's id of the transaction: 1..50 characters, kept as given. Leading or
 * trailing whitespace is refused rather than trimmed: MySQL's PAD SPACE collations compare
 * "p1 " equal to "p1" while SQLite does not, and trimming would echo back an id the
 * merchant never sent.
 */
export const processId = identifier(50).refine((v) => v.trim() === v, "must not begin or end with whitespace");

export const iban = z
  .string()
  .transform(normalizeIban)
  .refine((v) => v !== "", "is required")
  .refine((v) => isValidIban(v), "is not a valid IBAN");

export const METADATA_MAX_BYTES = 8 * 1024;

/** "" for none, else the text of a JSON object of at most 8 KiB. */
export const metadataJson = z
  .string()
  .refine((v) => Buffer.byteLength(v) <= METADATA_MAX_BYTES, `must be at most ${METADATA_MAX_BYTES} bytes of JSON`)
  .refine((v) => {
    if (v === "") return true;
    try {
      const value: unknown = JSON.parse(v);
      return typeof value === "object" && value !== null && !Array.isArray(value);
    } catch {
      return false;
    }
  }, "must be a JSON object");

export const checkoutToken = z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, "is not a checkout token");
