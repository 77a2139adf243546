import { type HttpRoute, type HttpRouteRequest, type HttpRouteResponse } from "@payments/kit";
import { z } from "zod";
import type { DepositContext } from "../context.js";
import { countTransfer, reportOf, type TransferCounts } from "../statement-import.js";
import { recordTransfers } from "../transfers.js";
import { BankFeedError, FEED_SIGNATURE_HEADER, FEED_TIMESTAMP_HEADER, validateFeedBody, verifyFeedSignature, type ParseResult } from "./index.js";

/**
 * The JSON push feed of aggregators and bank APIs: `POST /internal/bank-feed/{feedId}` on the
 * deposit service's port (a kit HttpRoute). Each feed has its own secret(s) (BANK_FEEDS) and
 * signs every body (bank-feed/json-feed.ts); INTERNAL_API_TOKEN does not apply, and like the
 * port itself the route is for the internal network only (put a proxy that terminates the
 * partner's connection in front of it, never the open internet).
 *
 * A body is all-or-nothing: everything is checked first (signature, records, currencies,
 * receiving accounts), then every transfer is recorded in ONE transaction, so a sender that
 * got anything but 200 resends the whole body and no transfer is ever half-applied. Resending
 * a body that was applied is harmless: each (iban, bankTransactionId) is recorded once.
 */

export const BANK_FEED_PATH = "/internal/bank-feed/";
export const BANK_FEED_BODY_LIMIT = 1024 * 1024;
export const FEED_SECRET_MIN = 32;
const FEED_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** feedId → its valid secrets (two during a rotation). */
export type FeedSecrets = ReadonlyMap<string, readonly string[]>;

/**
 * BANK_FEEDS: comma-separated `feedId:secret`; a feedId given twice has both secrets valid (a
 * rotation). Problems name the pair by position and feedId, never the secret.
 */
export const bankFeedsSetting = () =>
  z
    .string()
    .default("")
    .transform((text, ctx): FeedSecrets => {
      const feeds = new Map<string, string[]>();
      const pairs = text.split(",").map((p) => p.trim());
      if (pairs.length === 1 && pairs[0] === "") return feeds;
      pairs.forEach((pair, i) => {
        const colon = pair.indexOf(":");
        const id = colon < 0 ? "" : pair.slice(0, colon).trim();
        const secret = colon < 0 ? "" : pair.slice(colon + 1).trim();
        const where = `pair ${i + 1}${FEED_ID.test(id) ? ` (${id})` : ""}`;
        if (colon < 0) return ctx.addIssue({ code: "custom", message: `${where}: expected feedId:secret, comma-separated` });
        if (!FEED_ID.test(id)) return ctx.addIssue({ code: "custom", message: `${where}: the feedId must be 1-64 letters, digits, - or _` });
        if (secret.length < FEED_SECRET_MIN || /\s/.test(secret)) return ctx.addIssue({ code: "custom", message: `${where}: the secret must be at least ${FEED_SECRET_MIN} characters, without spaces` });
        feeds.set(id, [...(feeds.get(id) ?? []), secret]);
      });
      return feeds;
    });

/** The answer to a push: what its transfers did. */
export type FeedCounts = TransferCounts;

export interface FeedProblem {
  /** The transfer's position in the body's `transfers`, when the problem is one transfer's. */
  index?: number;
  /** "transfers[3].amount"; "" for the body as a whole. */
  field: string;
  message: string;
}

function answer(status: number, body: unknown): HttpRouteResponse {
  return { status, body };
}

function refused(status: number, code: string, message: string, problems?: FeedProblem[]): HttpRouteResponse {
  return answer(status, problems ? { code, message, problems } : { code, message });
}

/** "transfers[3].amount: must be …" (validateFeedBody's issues) as a structured problem. */
function problemOf(issue: string): FeedProblem {
  const m = /^(transfers(?:\[(\d+)\])?[\w.[\]]*): (.*)$/s.exec(issue);
  if (!m) return { field: "", message: issue };
  return m[2] !== undefined ? { index: Number(m[2]), field: m[1]!, message: m[3]! } : { field: m[1]!, message: m[3]! };
}

/** The body's index of each parsed record: repeats within the body were dropped from `records`. */
function bodyIndexes(parsed: ParseResult): number[] {
  const repeats = new Set(parsed.skipped.flatMap((s) => /^transfers\[(\d+)\]$/.exec(s.entry)?.[1] ?? []).map(Number));
  const out: number[] = [];
  for (let i = 0; out.length < parsed.records.length; i++) if (!repeats.has(i)) out.push(i);
  return out;
}

/** Verifies, validates and applies one pushed body; every answer is a JSON body (see the module doc). */
export async function handleFeedPush(ctx: DepositContext, feeds: FeedSecrets, request: HttpRouteRequest): Promise<HttpRouteResponse> {
  let feedId = "";
  try {
    feedId = decodeURIComponent(request.path.slice(BANK_FEED_PATH.length));
  } catch {
    // Not a feed id either.
  }
  const secrets = feeds.get(feedId);
  if (!secrets) {
    ctx.logger.warn({ feedId: feedId.slice(0, 64) }, "bank feed push refused: unknown feed");
    return refused(401, "UNKNOWN_FEED", "no such feed");
  }
  const check = verifyFeedSignature({
    secret: secrets,
    timestamp: request.headers[FEED_TIMESTAMP_HEADER.toLowerCase()],
    signature: request.headers[FEED_SIGNATURE_HEADER.toLowerCase()],
    rawBody: request.rawBody,
    now: ctx.clock.now(),
  });
  if (!check.ok) {
    ctx.logger.warn({ feedId, reason: check.reason }, "bank feed push refused: bad signature");
    return refused(401, "INVALID_SIGNATURE", check.reason);
  }

  let parsed: ParseResult;
  try {
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(request.rawBody));
    } catch {
      throw new BankFeedError("the body is not JSON (UTF-8)");
    }
    parsed = validateFeedBody(body);
  } catch (err) {
    if (!(err instanceof BankFeedError)) throw err;
    return refused(400, "VALIDATION_ERROR", err.message, err.issues.map(problemOf));
  }

  const indexes = bodyIndexes(parsed);
  const currencies = new Set(ctx.config.SUPPORTED_CURRENCIES);
  const badCurrency: FeedProblem[] = parsed.records.flatMap((r, i) =>
    currencies.has(r.currency) ? [] : [{ index: indexes[i]!, field: `transfers[${indexes[i]}].currency`, message: `${r.currency} is not supported (supported: ${[...currencies].join(", ")})` }],
  );
  if (badCurrency.length > 0) return refused(400, "UNSUPPORTED_CURRENCY", badCurrency[0]!.message, badCurrency);

  // Asked once per body: a transfer into an account that is not ours is a sender's mistake.
  const ours = new Set((await ctx.bankCatalog.listReceivingAccounts({})).accounts.map((a) => a.iban));
  const foreign: FeedProblem[] = parsed.records.flatMap((r, i) =>
    ours.has(r.receivingIban) ? [] : [{ index: indexes[i]!, field: `transfers[${indexes[i]}].receivingIban`, message: `${r.receivingIban} is not one of our receiving accounts` }],
  );
  if (foreign.length > 0) return refused(400, "UNKNOWN_ACCOUNT", foreign[0]!.message, foreign);

  const counts = await applyFeedBody(ctx, feedId, parsed);
  return answer(200, counts);
}

/**
 * Records every transfer of a validated body in one transaction (recordTransfers): a bank
 * transaction id already recorded on its account (or repeated within the body) is a duplicate;
 * a failure anywhere rolls back the whole body, and lock conflicts are retried inside.
 */
export async function applyFeedBody(ctx: DepositContext, feedId: string, parsed: ParseResult): Promise<FeedCounts> {
  const source = `feed:${feedId}`;
  // The feed proved itself with its own secret (no workload identity on this route): it is the reporter.
  const reportedBy = `bank feed ${feedId} (signed push to ${BANK_FEED_PATH}${feedId})`;
  const outcomes = await recordTransfers(
    ctx,
    parsed.records.map((r) => reportOf(r, source, reportedBy)),
  );
  const counts: FeedCounts = { imported: 0, matched: 0, unmatched: 0, review: 0, returned: 0, duplicates: parsed.skipped.length };
  for (const outcome of outcomes) countTransfer(counts, outcome);
  ctx.logger.info({ feedId, ...counts }, "bank feed push applied");
  return counts;
}

/** The kit HTTP route of the push feed (with BANK_FEEDS unset every push is an unknown feed). */
export function bankFeedRoutes(ctx: DepositContext): HttpRoute[] {
  const feeds = ctx.config.BANK_FEEDS;
  return [{ method: "POST", pathPrefix: BANK_FEED_PATH, maxBodyBytes: BANK_FEED_BODY_LIMIT, handle: (request) => handleFeedPush(ctx, feeds, request) }];
}
