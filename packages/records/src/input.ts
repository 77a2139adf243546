import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateWithdrawalRequestSchema } from "@payments/contracts/payout";
import { z } from "zod";

/*
 * The public API's input fields and the body of POST /v1/withdraw, in one place: the gateway
 * parses merchants' requests with them (and its OpenAPI document states their limits), and the
 * merchant dashboard's withdrawal form is judged by the same schema, so both take exactly the
 * same withdrawals. What a field means beyond its shape (the Turkish IBAN rule, the balance,
 * the bank, duplicates) is the payout service's to judge.
 */

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
export function processIdOf(base: z.ZodString) {
  return base
    .min(1, "is required")
    .max(PROCESS_ID_MAX, atMost(PROCESS_ID_MAX))
    .regex(SAFE_CHARACTERS, UNSAFE_CHARACTERS_PROBLEM)
    .regex(NO_EDGE_WHITESPACE, "must not begin or end with whitespace");
}

export const processIdField = processIdOf(requiredString);

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

/**
 * The body of POST /v1/withdraw: the shape, and the service's fixed limits on lengths and
 * characters, so the OpenAPI document states them. The Turkish IBAN rule (INVALID_IBAN),
 * currency support, the bank, the balance and duplicates are the payout service's rules,
 * judged there. Unknown fields are ignored. Field order is the order problems are listed in.
 */
export const createWithdrawalBody = z.object({
  processId: processIdField,
  amount: amountField,
  currency: optionalString,
  bankId: optionalBankId,
  accountName: requiredText(),
  iban: ibanField,
  userId: requiredText(),
  userName: requiredText(),
  name: requiredText(),
});

export type CreateWithdrawalBody = z.output<typeof createWithdrawalBody>;

/**
 * The payout service's CreateWithdrawal request for a parsed body, made the same way for the
 * gateway's POST /v1/withdraw and the merchant dashboard's withdrawal form. `merchantId` is the
 * caller's own (the authenticated merchant), never a field of the body.
 */
export function createWithdrawalRequest(merchantId: string, body: CreateWithdrawalBody): MessageInitShape<typeof CreateWithdrawalRequestSchema> {
  return {
    merchantId,
    processId: body.processId,
    amount: BigInt(body.amount),
    currency: body.currency ?? "",
    bankId: body.bankId ?? "",
    accountName: body.accountName,
    iban: body.iban,
    userId: body.userId,
    userName: body.userName,
    name: body.name,
  };
}

/**
 * The merchant's JSON names of the payout service's request fields, for the VALIDATION_ERROR
 * the service returns (its x-error-field and message prefix are proto paths).
 */
export const WITHDRAWAL_FIELDS: Readonly<Record<string, string>> = {
  process_id: "processId",
  amount: "amount",
  currency: "currency",
  bank_id: "bankId",
  account_name: "accountName",
  iban: "iban",
  user_id: "userId",
  user_name: "userName",
  name: "name",
};
