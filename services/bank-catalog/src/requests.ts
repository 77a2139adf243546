import { identifier, text, validationError } from "@payments/kit";
import { z } from "zod";
import { FAST_ID, isValidAmount, normalizeIban, turkishIbanProblem } from "./limits.js";

/**
 * The field schemas the catalog's RPCs share. Each RPC declares a zod schema over its request
 * message and parses it with the kit's `parseRequest`, which turns the first problem into
 * VALIDATION_ERROR naming the proto field (`limit.min_amount: …`).
 */

export { identifier, text };

export const merchantId = identifier(100);

/** A bank id, or "FAST" where the RPC allows it. */
export const bankId = identifier(40);

/** A positive integer in the smallest currency unit; a plain number from here on. */
export const amount = z
  .bigint()
  .refine((v) => isValidAmount(v), `must be a positive integer amount in the smallest currency unit, at most ${Number.MAX_SAFE_INTEGER}`)
  .transform((v) => Number(v));

export const bankCode = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9]{1,20}$/, "must be 1 to 20 letters or digits")
  .refine((code) => code.toUpperCase() !== FAST_ID, `"${FAST_ID}" is reserved for the FAST option`);

/** Empty, an absolute http(s) URL, or a path the gateway serves ("/assets/…"). */
export const logoUrl = z
  .string()
  .trim()
  .max(500, "must be at most 500 characters")
  .refine((value) => value === "" || isLogoLocation(value), 'must be empty, an absolute http(s) URL, or a path starting with "/"');

function isLogoLocation(value: string): boolean {
  if (/\s/.test(value)) return false;
  // "//host/x" would be a URL on another host, not a path of ours.
  if (value.startsWith("/")) return !value.startsWith("//");
  try {
    const url = new URL(value);
    return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** Spaces removed and letters upper-cased, then a valid Turkish IBAN. */
export const iban = z
  .string()
  .transform(normalizeIban)
  .superRefine((value, ctx) => {
    const problem = turkishIbanProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/**
 * VALIDATION_ERROR for limits whose minimum ends up above their maximum. It names the
 * field the caller set (the minimum when both were), under `prefix` ("limit.").
 */
export function rangeError(limits: { minAmount: number; maxAmount: number }, minWasSet: boolean, prefix = "", context = "") {
  const { minAmount, maxAmount } = limits;
  return minWasSet
    ? validationError(`${prefix}min_amount`, `${prefix}min_amount (${minAmount}) must not be greater than max_amount (${maxAmount})${context}`)
    : validationError(`${prefix}max_amount`, `${prefix}max_amount (${maxAmount}) must not be less than min_amount (${minAmount})${context}`);
}
