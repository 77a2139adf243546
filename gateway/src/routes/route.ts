import { z } from "zod";
import { validationFailure, type Problem } from "../errors.js";
import type { RouteContext, RouteHandler } from "../state.js";

/** One endpoint; app.ts puts the right middleware in front of it. */
export interface Route {
  method: "GET" | "POST";
  /** @koa/router pattern. */
  path: string;
  /** "merchant": signed request (body, authentication, IP, rate limit, JSON). "public": none of it. */
  access: "merchant" | "public";
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

/** Missing and null are the same to a merchant: "is required". */
export const missing = (input: unknown) => input === undefined || input === null;

/** A required body string (null counts as absent). Lengths and trimming are the services' rules. */
export const requiredString = z.string({ error: (issue) => (missing(issue.input) ? "is required" : "must be a string") });

/** An optional body string; null is the same as absent. */
export const optionalString = z.string({ error: "must be a string" }).nullish();

/*
 * The services' own limits on the strings a merchant sends, repeated here with the services'
 * messages so that the OpenAPI document, generated from these schemas, states them
 * (gateway/test/openapi-limits.test.ts holds them to the services' validators). They are
 * regexes and lengths rather than refinements because only those reach the JSON Schema.
 */

/**
 * What a name or id may hold: no C0 or C1 control character, DEL, or bidirectional
 * embedding, override or isolate (the kit's hasUnsafeCharacters, as a pattern of the
 * characters allowed).
 */
// eslint-disable-next-line no-control-regex -- deliberate: the pattern rejects control characters in input
export const SAFE_CHARACTERS = /^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$/;
export const UNSAFE_CHARACTERS_PROBLEM = "must not contain control characters or bidirectional overrides";
/** Something besides whitespace: a blank name is a missing one. */
const NOT_BLANK = /\S/;
/** Empty, or starting and ending with something besides whitespace. Written without lookarounds, for any JSON Schema validator. */
const NO_EDGE_WHITESPACE = /^(?:\S(?:[\s\S]*\S)?)?$/;
const atMost = (max: number) => `must be at most ${max} characters`;

export const PROCESS_ID_MAX = 50;
export const TEXT_MAX = 200;
export const BANK_ID_MAX = 40;
export const IBAN_INPUT_MAX = 100;
/** Deposit, withdrawal and event ids: the services parse any longer one as no id at all. */
export const ID_MAX = 40;

/**
 * A processId: 1..50 characters kept as given, so whitespace at either end is refused rather
 * than trimmed. `base` says how a missing one reads (a body field or a query parameter).
 */
function processIdOf(base: z.ZodString) {
  return base
    .min(1, "is required")
    .max(PROCESS_ID_MAX, atMost(PROCESS_ID_MAX))
    .regex(SAFE_CHARACTERS, UNSAFE_CHARACTERS_PROBLEM)
    .regex(NO_EDGE_WHITESPACE, "must not begin or end with whitespace");
}

export const processIdField = processIdOf(requiredString);
export const processIdQueryValue = processIdOf(queryValue);

/** A required name: trimmed, then 1..max characters (blank is missing), none of them unsafe. */
export function requiredText(max = TEXT_MAX) {
  return requiredString.regex(NOT_BLANK, "is required").trim().min(1, "is required").max(max, atMost(max)).regex(SAFE_CHARACTERS, UNSAFE_CHARACTERS_PROBLEM);
}

/** An optional name: "" (or null, or absent) is none; otherwise as requiredText, so a blank one is refused. */
export function optionalText(max = TEXT_MAX) {
  return z
    .string({ error: "must be a string" })
    .regex(/^$|\S/, "is required")
    .trim()
    .max(max, atMost(max))
    .regex(SAFE_CHARACTERS, UNSAFE_CHARACTERS_PROBLEM)
    .nullish();
}

/** A bank `_id` (or FAST), optional: whether it names a bank of the list is the service's to judge. */
export const optionalBankId = z.string({ error: "must be a string" }).max(BANK_ID_MAX, atMost(BANK_ID_MAX)).nullish();

/** An IBAN as sent: spaces and case are the service's to normalise, and the Turkish rule (INVALID_IBAN) its to judge. */
export const ibanField = requiredString.regex(NOT_BLANK, "is required").max(IBAN_INPUT_MAX, atMost(IBAN_INPUT_MAX));

export const AMOUNT_PROBLEM = `must be a positive integer number in the smallest currency unit (kuruş for TRY), at most ${Number.MAX_SAFE_INTEGER}`;

/** A JSON number that is a positive safe integer: 150.5, "150", 0, -1 and 1e300 are not amounts. */
export const amountField = z
  .number({ error: (issue) => (missing(issue.input) ? "is required" : AMOUNT_PROBLEM) })
  .refine((value) => Number.isSafeInteger(value) && value >= 1, AMOUNT_PROBLEM);

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
