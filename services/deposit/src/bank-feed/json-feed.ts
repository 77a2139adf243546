import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { BANK_TRANSACTION_ID_MAX, DESCRIPTION_MAX, hasUnsafeCharacters, isCalendarDate, isTurkishIban, isValidIban, normalizeIban, SENDER_NAME_MAX } from "./text.js";
import { BankFeedError, type BankFeedAdapter, type IncomingTransferRecord, type ParseResult } from "./types.js";

/**
 * The JSON push feed: an aggregator or a bank's API POSTs
 * `{ "transfers": [ { receivingIban, amount, currency, valueDate, senderName, senderIban?,
 * description, bankTransactionId }, … ] }` (1..500 transfers), signed (verifyFeedSignature).
 *
 * A body is accepted or refused as a whole: every problem is listed in BankFeedError.issues
 * ("transfers[3].amount: must be a positive integer (kuruş)"), so the sender fixes the body and
 * sends it again; resending is safe because transfers are recorded once per (receivingIban,
 * bankTransactionId). The same transfer twice in one body is recorded once, the repeat listed
 * in `skipped`.
 */

export const FEED_MAX_TRANSFERS = 500;
/** How far X-Feed-Timestamp may be from our clock, either way: bounds replay of a captured request. */
export const FEED_SIGNATURE_TOLERANCE_SECONDS = 300;
export const FEED_TIMESTAMP_HEADER = "X-Feed-Timestamp";
export const FEED_SIGNATURE_HEADER = "X-Feed-Signature";

const SAFE = "must not contain control characters or bidirectional overrides";

function requiredString(message: string) {
  return z.string({ error: (issue) => (issue.input === undefined ? "is required" : message) });
}

const transferSchema = z.object({
  receivingIban: requiredString("must be a Turkish IBAN (string)")
    .transform(normalizeIban)
    .refine(isTurkishIban, "must be a Turkish IBAN (TR + 24 digits, valid checksum)"),
  amount: z
    .number({ error: (issue) => (issue.input === undefined ? "is required" : "must be a positive integer (kuruş)") })
    .refine((v) => Number.isSafeInteger(v) && v >= 1, "must be a positive integer (kuruş)"),
  currency: requiredString("must be an ISO 4217 code such as TRY")
    .transform((v) => v.trim().toUpperCase())
    .refine((v) => /^[A-Z]{3}$/.test(v), "must be an ISO 4217 code such as TRY"),
  valueDate: requiredString("must be a date, YYYY-MM-DD").refine(isCalendarDate, "must be a date, YYYY-MM-DD"),
  senderName: requiredString("must be a string")
    .trim()
    .min(1, "is required")
    .max(SENDER_NAME_MAX, `must be at most ${SENDER_NAME_MAX} characters`)
    .refine((v) => !hasUnsafeCharacters(v), SAFE),
  senderIban: z
    .union([z.string(), z.null()], { error: "must be an IBAN (string)" })
    .optional()
    .transform((v) => (v == null ? "" : normalizeIban(v)))
    .refine((v) => v === "" || isValidIban(v), "is not a valid IBAN"),
  description: requiredString("must be a string").trim().max(DESCRIPTION_MAX, `must be at most ${DESCRIPTION_MAX} characters`),
  bankTransactionId: requiredString("must be a string")
    .trim()
    .min(1, "is required")
    .max(BANK_TRANSACTION_ID_MAX, `must be at most ${BANK_TRANSACTION_ID_MAX} characters`)
    .refine((v) => !hasUnsafeCharacters(v), SAFE),
});

const bodySchema = z.object(
  {
    transfers: z
      .array(transferSchema, { error: (issue) => (issue.input === undefined ? "is required" : "must be an array of transfers") })
      .min(1, "must hold at least one transfer")
      .max(FEED_MAX_TRANSFERS, `must hold at most ${FEED_MAX_TRANSFERS} transfers`),
  },
  { error: "the body must be a JSON object with a transfers array" },
);

/** `transfers[3].amount` from a zod issue path. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, part) => (typeof part === "number" ? `${out}[${part}]` : out === "" ? String(part) : `${out}.${String(part)}`), "");
}

/** Validates a parsed JSON body. Throws BankFeedError listing every problem, each prefixed with its field. */
export function validateFeedBody(body: unknown): ParseResult {
  const result = bodySchema.safeParse(body);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => {
      const field = fieldPath(issue.path);
      return field === "" ? issue.message : `${field}: ${issue.message}`;
    });
    throw new BankFeedError(issues.length === 1 ? issues[0]! : `${issues[0]!} (and ${issues.length - 1} more)`, issues);
  }

  const parsed: ParseResult = { records: [], skipped: [], statements: [] };
  const seen = new Map<string, number>();
  result.data.transfers.forEach((transfer, index) => {
    const key = `${transfer.receivingIban}\u0000${transfer.bankTransactionId}`;
    const first = seen.get(key);
    if (first !== undefined) {
      parsed.skipped.push({ entry: `transfers[${index}]`, reason: `repeats transfers[${first}] (same receivingIban and bankTransactionId): recorded once` });
      return;
    }
    seen.set(key, index);
    const { senderIban, ...rest } = transfer;
    const record: IncomingTransferRecord = { ...rest };
    if (senderIban !== "") record.senderIban = senderIban;
    parsed.records.push(record);
  });
  return parsed;
}

/** Parses and validates a raw JSON feed body (the exact bytes whose signature was checked). */
export function parseJsonFeed(rawBody: string | Uint8Array): ParseResult {
  const text = typeof rawBody === "string" ? rawBody : new TextDecoder("utf-8").decode(rawBody);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new BankFeedError(`the body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return validateFeedBody(body);
}

export const jsonFeedAdapter: BankFeedAdapter<string | Uint8Array> = {
  name: "json-feed",
  parse: parseJsonFeed,
};

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

function signedPayload(timestamp: string, rawBody: string | Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}.`, "utf8"), typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody)]);
}

/** Hex HMAC-SHA256 over `${timestamp}.${rawBody}` with the feed's secret: what a sender puts in X-Feed-Signature. */
export function signFeedBody(input: { secret: string; timestamp: number | string; rawBody: string | Uint8Array }): string {
  return createHmac("sha256", input.secret).update(signedPayload(String(input.timestamp), input.rawBody)).digest("hex");
}

/**
 * Checks a pushed body's headers. The signature covers the timestamp, so an old request cannot
 * be replayed with a fresh one; the timestamp must be within FEED_SIGNATURE_TOLERANCE_SECONDS
 * of `now` (either way, for clock skew). `secret` may be several (a rotation: old and new both
 * valid for a while). `rawBody` must be the bytes as received: re-serialised JSON would not
 * match. Comparison is constant-time.
 */
export function verifyFeedSignature(input: {
  secret: string | readonly string[];
  timestamp: string | undefined;
  signature: string | undefined;
  rawBody: string | Uint8Array;
  now: Date;
}): SignatureCheck {
  const secrets = (typeof input.secret === "string" ? [input.secret] : [...input.secret]).filter((s) => s !== "");
  if (secrets.length === 0) return { ok: false, reason: "no feed secret is configured" };
  const timestamp = input.timestamp?.trim();
  if (!timestamp) return { ok: false, reason: `${FEED_TIMESTAMP_HEADER} is missing` };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: `${FEED_TIMESTAMP_HEADER} must be unix seconds` };
  const skew = Math.abs(Math.floor(input.now.getTime() / 1000) - Number(timestamp));
  if (skew > FEED_SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: `${FEED_TIMESTAMP_HEADER} is ${skew} s away from now (at most ${FEED_SIGNATURE_TOLERANCE_SECONDS} s)` };
  const signature = input.signature?.trim().toLowerCase();
  if (!signature) return { ok: false, reason: `${FEED_SIGNATURE_HEADER} is missing` };
  if (!/^[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: `${FEED_SIGNATURE_HEADER} must be a hex HMAC-SHA256 (64 hex digits)` };

  const given = Buffer.from(signature, "hex");
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(signFeedBody({ secret, timestamp, rawBody: input.rawBody }), "hex");
    // Every secret is tried, whatever the outcome, so timing says nothing about which one matched.
    if (timingSafeEqual(given, expected)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: `${FEED_SIGNATURE_HEADER} does not match the body` };
}
