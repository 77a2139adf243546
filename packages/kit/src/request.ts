import { timestampMs } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import { validationError } from "./errors.js";

/** `customer.name` from the path of a zod issue over a request message (TypeScript field names). */
export function protoFieldPath(path: readonly PropertyKey[]): string {
  return path
    .filter((part) => typeof part !== "number")
    .map((part) => String(part).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
    .join(".");
}

/**
 * Parses a request message with its zod schema, once, at the edge. The first problem
 * becomes VALIDATION_ERROR whose field (x-error-field) is the proto field path
 * (`customer.name`) and whose message starts with `<field>: `, so a caller in front (the
 * gateway) can rename the field to its own spelling.
 */
export function parseRequest<S extends z.ZodType>(schema: S, request: unknown): z.output<S> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue ? protoFieldPath(issue.path) || "request" : "request";
  throw validationError(field, `${field}: ${issue?.message ?? "is invalid"}`);
}

/** A free-text field: trimmed, then 1..max characters. */
export function text(max = 200) {
  return z
    .string()
    .trim()
    .min(1, "is required")
    .max(max, `must be at most ${max} characters`);
}

/** An identifier, taken as given (no trimming: an id with spaces is simply not found), 1..max characters. */
export function identifier(max = 100) {
  return z
    .string()
    .min(1, "is required")
    .max(max, `must be at most ${max} characters`);
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

/** An IBAN in electronic format: whitespace removed, letters upper-cased. */
export function normalizeIban(input: string): string {
  return input.replace(/\s+/g, "").toUpperCase();
}
