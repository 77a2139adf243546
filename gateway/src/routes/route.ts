import type { ApiKeyScope } from "@payments/access";
import { processIdOf } from "@payments/records";
import { z } from "zod";
import { validationFailure, type Problem } from "../errors.js";
import type { RouteContext, RouteHandler } from "../state.js";

/** One endpoint; app.ts puts the right middleware in front of it. */
export type Route = RouteBase & (MerchantAccess | { access: "public" });

/** "merchant": a signed request (body, authentication, IP, the key's scope, rate limit, JSON). */
interface MerchantAccess {
  access: "merchant";
  /**
   * The API key scopes that admit it, any one of them (403 INSUFFICIENT_SCOPE otherwise). The
   * same as the access tables of the services it calls say for the gateway speaking for a
   * merchant (`apiKey.scopes`), and as the OpenAPI document says (its test holds all three).
   */
  scopes: readonly ApiKeyScope[];
}

interface RouteBase {
  method: "GET" | "POST";
  /** @koa/router pattern. */
  path: string;
  /** Refuse callers outside the merchant's allow-list even when that list is empty (withdrawals). */
  requireAllowList?: boolean;
  /**
   * What a POST carries. "json" (the default): a JSON object, required. "none": the route
   * reads no body, so an empty one is accepted whatever its Content-Type (a non-empty body
   * must still be a JSON object, and is ignored).
   */
  body?: "json" | "none";
  handler: RouteHandler;
}

/** The first problem of each field, in the order the schema met them; `root` names a problem of the whole input. */
function problemsOf(issues: readonly z.core.$ZodIssue[], root: string): Problem[] {
  const seen = new Map<string, Problem>();
  for (const issue of issues) {
    const field = issue.path.map(String).join(".") || root;
    if (!seen.has(field)) seen.set(field, { field, problem: issue.message });
  }
  return [...seen.values()];
}

/**
 * Parses a request body or query with its schema, once, at the edge. Every problem found
 * goes into one VALIDATION_ERROR, each as `<field>: <problem>`, so a merchant fixes them
 * all in one round.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root: "body" | "query"): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw validationFailure(problemsOf(result.error.issues, root));
}

/** A required query parameter: given once. */
export const queryValue = z.string({ error: (issue) => (Array.isArray(issue.input) ? "must be given only once" : "is required") });

/** An optional query parameter: given at most once; empty (`?status=`) is the same as absent. */
export const optionalQueryValue = queryValue.optional().transform((value) => (value === "" ? undefined : value));

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/**
 * The `limit` of a listing: an integer from 1 to 100, 20 when absent. Judged here rather
 * than by the services, whose 0 means "the default" and whose messages speak of proto fields.
 */
export const pageLimit = optionalQueryValue.transform((value, ctx) => {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) {
    ctx.addIssue({ code: "custom", message: `must be an integer from 1 to ${MAX_LIMIT}` });
    return z.NEVER;
  }
  return n;
});

// The body fields (their limits and messages) are @payments/records' input.ts, shared with the
// merchant dashboard's withdrawal form; re-exported where the routes have always found them.
export {
  AMOUNT_PROBLEM,
  BANK_ID_MAX,
  IBAN_INPUT_MAX,
  ID_MAX,
  PROCESS_ID_MAX,
  SAFE_CHARACTERS,
  TEXT_MAX,
  UNSAFE_CHARACTERS_PROBLEM,
  amountField,
  ibanField,
  missing,
  optionalBankId,
  optionalString,
  optionalText,
  processIdField,
  requiredString,
  requiredText,
} from "@payments/records";

/** A processId given as a query parameter (GET /v1/deposit?processId=…). */
export const processIdQueryValue = processIdOf(queryValue);

/** The merchant the authenticate middleware found; a merchant route without one is a wiring bug. */
export function authenticatedMerchantId(ctx: RouteContext): string {
  return authenticatedMerchant(ctx).merchantId;
}

/** The authenticated merchant's credentials (id, kind, limits); only on merchant routes. */
export function authenticatedMerchant(ctx: RouteContext): NonNullable<RouteContext["state"]["merchant"]> {
  const merchant = ctx.state.merchant;
  if (!merchant) throw new Error(`${ctx.method} ${ctx.path} needs an authenticated merchant`);
  return merchant;
}
