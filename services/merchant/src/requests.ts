import type { DescMessage } from "@bufbuild/protobuf";
import { validationError } from "@payments/kit";
import type { z } from "zod";

/**
 * Parses a request message with its zod schema, once, at the edge. Schemas are keyed by the
 * message's TypeScript field names; a refusal names the proto (snake_case) field, as callers
 * and the gateway know it.
 */
export function parseRequest<S extends z.ZodType>(message: DescMessage, schema: S, request: unknown): z.output<S> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const localName = issue?.path[0];
  const field = message.fields.find((f) => f.localName === localName)?.name ?? String(localName ?? "request");
  const position = issue && issue.path.length > 1 && typeof issue.path[1] === "number" ? `[${issue.path[1]}]` : "";
  throw validationError(field, `${field}${position}: ${issue?.message ?? "is invalid"}`);
}
