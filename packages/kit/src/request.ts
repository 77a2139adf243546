import { timestampMs } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { validationError } from "./errors.js";
import { normalizeIban, turkishIbanProblem, type TurkishIbanProblem } from "./iban.js";

/** `customer.name` from the path of a zod issue over a request message (TypeScript field names). */
export function protoFieldPath(path: readonly PropertyKey[]): string {
  return path
    .filter((part) => typeof part !== "number")
    .map((part) => String(part).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
    .join(".");
}

/**
 * Parses a request message with its zod schema, once, at the edge: every service's one
 * parser, so a refusal reads the same whichever service answers. The schema is keyed by the
 * message's TypeScript field names. The first problem becomes VALIDATION_ERROR whose field
 * (x-error-field) is the proto field path (`customer.name`, list positions left out) and
 * whose message starts with `<field>: `, so a caller in front (the gateway) can rename the
 * field to its own spelling.
 */
export function parseRequest<S extends z.ZodType>(schema: S, request: unknown): z.output<S> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue ? protoFieldPath(issue.path) || "request" : "request";
  throw validationError(field, `${field}: ${issue?.message ?? "is invalid"}`);
}

/**
 * Control characters (C0, DEL, C1) and the bidirectional embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069): invisible in a log, a CSV or a bank's portal, they can hide
 * or reorder what a name or id says, and NUL, CR and LF break the files and headers they
 * travel into. Names and ids never need them.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
const UNSAFE_CHARACTERS = /[\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/u;

/** Whether a string holds a character no name or id may hold (see UNSAFE_CHARACTERS). */
export function hasUnsafeCharacters(value: string): boolean {
  return UNSAFE_CHARACTERS.test(value);
}

const UNSAFE_MESSAGE = "must not contain control characters or bidirectional overrides";

/** A free-text field: trimmed, then 1..max characters, none of them a control or bidi-override character. */
export function text(max = 200) {
  return z
    .string()
    .trim()
    .min(1, "is required")
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !hasUnsafeCharacters(v), UNSAFE_MESSAGE);
}

/**
 * An identifier, taken as given (no trimming: an id with spaces is simply not found),
 * 1..max characters, none of them a control or bidi-override character.
 */
export function identifier(max = 100) {
  return z
    .string()
    .min(1, "is required")
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !hasUnsafeCharacters(v), UNSAFE_MESSAGE);
}

/** The two request fields `merchantScope` reads, for a request's zod object. */
export const merchantScopeFields = {
  merchantId: z.string().max(100, "must be at most 100 characters"),
  allMerchants: z.boolean(),
};

/**
 * Which merchant a merchant-scoped call is about: `merchant_id`, required, or an operator's
 * explicit `all_merchants` view across merchants (then `merchant_id` stays empty). An empty
 * merchant id never means "any merchant". Returns the merchant id, or undefined for all.
 */
export function merchantScope(input: { merchantId: string; allMerchants: boolean }): string | undefined {
  if (input.allMerchants) {
    if (input.merchantId !== "") throw validationError("all_merchants", "all_merchants: cannot be combined with merchant_id");
    return undefined;
  }
  if (input.merchantId === "") {
    throw validationError("merchant_id", "merchant_id: is required (operators set all_merchants to act across merchants)");
  }
  return input.merchantId;
}

/** A positive integer in the smallest currency unit (int64 on the wire), as a plain number from here on. */
export const positiveAmount = z
  .bigint()
  .refine((v) => v >= 1n && v <= BigInt(Number.MAX_SAFE_INTEGER), `must be a positive integer in the smallest currency unit, at most ${Number.MAX_SAFE_INTEGER}`)
  .transform((v) => Number(v));

/** "" means the default, TRY; otherwise one of the configured currencies (any case). */
export function currencyCode(supported: readonly string[]) {
  return z
    .string()
    .trim()
    .transform((c) => (c === "" ? "TRY" : c.toUpperCase()))
    .refine((c) => supported.includes(c), `must be one of ${supported.join(", ")}`);
}

/** A page size: 1..max, 0 meaning `fallback`. */
export function pageLimit(fallback: number, max: number) {
  return z
    .number()
    .int()
    .min(0, `must be between 1 and ${max}`)
    .max(max, `must be between 1 and ${max}`)
    .transform((v) => (v === 0 ? fallback : v));
}

/** An optional google.protobuf.Timestamp, as epoch milliseconds. */
export const optionalTimestamp = z
  .object({ seconds: z.bigint(), nanos: z.number() })
  .optional()
  .transform((t) => (t === undefined ? undefined : timestampMs({ $typeName: "google.protobuf.Timestamp", ...t })));

/** "" for the first page, else a cursor a previous response issued, decoded by `decode`. */
export function cursorField<T>(decode: (text: string) => T | undefined) {
  return z.string().transform((value, issue): T | undefined => {
    if (value === "") return undefined;
    const position = decode(value);
    if (position === undefined) {
      issue.addIssue({ code: "custom", message: "is not a cursor from a previous response" });
      return z.NEVER;
    }
    return position;
  });
}

/** A list's optional exact or prefix filter: "" for none, else at most max characters, none a control or bidi-override character; kept as given. */
export function filterText(max: number) {
  return z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !hasUnsafeCharacters(v), UNSAFE_MESSAGE);
}

const FILTER_IBAN_PROBLEMS: Record<TurkishIbanProblem, string> = {
  empty: "must contain only letters and digits",
  characters: "must contain only letters and digits",
  country: "must be a Turkish IBAN, starting with TR",
  length: "must be a whole Turkish IBAN (26 characters)",
  checksum: "is not a valid IBAN (its check digits do not match)",
};

/** A list's optional IBAN filter: "" for none, else a Turkish IBAN in any spacing and case, in electronic form. */
export const ibanFilter = z
  .string()
  .max(100, "must be at most 100 characters")
  .transform(normalizeIban)
  .superRefine((v, ctx) => {
    const problem = v === "" ? undefined : turkishIbanProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: FILTER_IBAN_PROBLEMS[problem] });
  });

/** A list's optional exact amount filter (proto3 optional int64): unset for none, else a positive amount. */
export const amountFilter = positiveAmount.optional();
