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
