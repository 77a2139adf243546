import { claimTransaction, createBatcher, extractTraceContext, forUpdateSkipLocked, withRequestIdOrNone, withSpan, startJob, transactionWithRetry, type JobResult, type Stoppable } from "@payments/kit";
import { sign, standardWebhookHeaders, unixTimestamp } from "@payments/signing";
import type { Knex } from "knex";
import { callbackTargetOf, forgetCallbackTarget, webhookSecretsAt, type CallbackTarget } from "./callback-target.js";
import type { CallbackContext } from "./context.js";
import type { PostResult } from "./post-callback.js";
import { nextStep } from "./retry-schedule.js";
import type { AttemptOutcome, EventRow } from "./store.js";

/**
 * The sender: claims due events, POSTs each to the merchant's current callback URL and
 * records the attempt.
 *
 * - A claim is a transaction with `FOR UPDATE SKIP LOCKED` that bumps `attempts`, marks the
 *   event in flight and pushes `next_attempt_at` to the end of the attempt's lease
 *   (CALLBACK_CLAIM_TIMEOUT). Replicas never claim the same attempt; a sender that dies
 *   between its POST and its record leaves the event due again when the lease ends, and
 *   the next claim logs the lost attempt and sends the same event (same X-Event-Id) again.
 * - The answer is recorded only by the claim that made it (`attempts` and `in_flight_since`
 *   unchanged), together with the attempt row.
 * - One transaction's changes go in `sequence` order (inSequence below): a change is not
 *   claimed while an earlier one of its transaction is pending.
 * - A merchant gets at most CALLBACK_MERCHANT_CONCURRENCY attempts at a time from one
 *   sender, of CALLBACK_CONCURRENCY in all, so a slow or dead endpoint holds only its own slots.
 */

export interface ClaimedAttempt {
  eventId: string;
  merchantId: string;
  transactionId: string;
  type: string;
  body: string;
  /** This attempt's number (attempts after the claim). */
  number: number;
  /** Its number within the current round of the retry schedule. */
  roundNumber: number;
  claimedAt: number;
  /** When the status change happened (the callback body's createdAt), ms since the epoch. */
  createdAt: number;
  /** The trace and request id the event was ingested in (null for events stored before they were kept). */
  traceparent?: string | null;
  requestId?: string | null;
}

export interface ClaimLimits {
  /** Attempts to claim at most. */
  limit: number;
  /** How many more attempts each merchant may have now; merchants not in the map have the full allowance. */
  merchantRoom: (merchantId: string) => number;
  /** Merchants with no room at all, left out of the scan. */
  fullMerchants: readonly string[];
}

const LOST_ERROR = "the sender stopped before it recorded an answer; the event was sent again";

function due(qb: Knex.QueryBuilder, now: number): Knex.QueryBuilder {
  return qb.where({ status: "pending" }).where("next_attempt_at", "<=", now);
}

/**
 * The first sequence a callback carries: a transaction is created at 1 (no callback), and
 * every later status change adds one and is a callback (kit `applyStateMove`).
 */
export const FIRST_CALLBACK_SEQUENCE = 2;

/**
 * Per transaction, in `sequence` order: a change waits while an earlier change of the same
 * transaction is still pending (due, retrying or in flight), and, when its predecessor has not
 * been taken in at all, until `orderWaitMs` after it was (the predecessor may still be on its
 * way from the bus). A failed predecessor holds nothing back.
 */
function inSequence(qb: Knex.QueryBuilder, now: number, orderWaitMs: number): Knex.QueryBuilder {
  return qb
    .whereRaw(
      "NOT EXISTS (SELECT 1 FROM callback_events earlier WHERE earlier.transaction_id = callback_events.transaction_id AND earlier.sequence < callback_events.sequence AND earlier.status = 'pending')",
    )
    .whereRaw(
      "(callback_events.sequence <= ? OR callback_events.received_at <= ? OR EXISTS (SELECT 1 FROM callback_events previous WHERE previous.transaction_id = callback_events.transaction_id AND previous.sequence = callback_events.sequence - 1))",
      [FIRST_CALLBACK_SEQUENCE, now - orderWaitMs],
    );
}

/**
 * inSequence for an event being taken in, decided from the events of its transaction already
 * known (stored, or earlier in the same batch): none earlier still pending, and it is the
 * first callback or its predecessor is known. (Just received, it has not waited at all.)
 */
export function claimableAtIngest(event: { sequence: number }, known: ReadonlyArray<{ sequence: number; status: string }>): boolean {
  if (known.some((k) => k.sequence < event.sequence && k.status === "pending")) return false;
  return event.sequence <= FIRST_CALLBACK_SEQUENCE || known.some((k) => k.sequence === event.sequence - 1);
}

/** Claims up to `limit` due attempts, oldest due first, within each merchant's room. */
export async function claimDueAttempts(ctx: CallbackContext, limits: ClaimLimits): Promise<ClaimedAttempt[]> {
  if (limits.limit <= 0) return [];
  return claimTransaction(ctx.db, async (trx) => {
    const now = ctx.clock.now().getTime();
    const scan = inSequence(
      due(trx("callback_events").select("id", "merchant_id", "transaction_id", "type", "body", "attempts", "round_attempts", "in_flight_since", "created_at", "traceparent", "request_id"), now),
      now,
      ctx.config.CALLBACK_ORDER_WAIT,
    );
    if (limits.fullMerchants.length > 0) scan.whereNotIn("merchant_id", [...limits.fullMerchants]);
    const rows = (await forUpdateSkipLocked(trx, scan.orderBy("next_attempt_at").orderBy("id").limit(limits.limit))) as (Pick<
      EventRow,
      "id" | "merchant_id" | "transaction_id" | "type" | "body" | "attempts" | "round_attempts" | "in_flight_since" | "created_at"
    > & { traceparent: string | null; request_id: string | null })[];
    const taken: ClaimedAttempt[] = [];
    const takenBy = new Map<string, number>();
    const lost: typeof rows = [];
    for (const row of rows) {
      const merchantTaken = takenBy.get(row.merchant_id) ?? 0;
      if (merchantTaken >= limits.merchantRoom(row.merchant_id)) continue;
      takenBy.set(row.merchant_id, merchantTaken + 1);
      // The previous claim's lease ran out without a record: its sender died (or hung) after
      // claiming, maybe after POSTing. It is logged below; the merchant may see this event twice.
      if (row.in_flight_since !== null) lost.push(row);
      taken.push({
        eventId: row.id,
        merchantId: row.merchant_id,
        transactionId: row.transaction_id,
        type: row.type,
        body: row.body,
        number: Number(row.attempts) + 1,
        roundNumber: Number(row.round_attempts) + 1,
        claimedAt: now,
        createdAt: Number(row.created_at),
        traceparent: row.traceparent,
        requestId: row.request_id,
      });
    }
    if (taken.length === 0) return taken;
    // The rows are locked until this transaction ends (SKIP LOCKED kept other senders off
    // them), so one statement claims them all.
    await trx("callback_events")
      .whereIn(
        "id",
        taken.map((a) => a.eventId),
      )
      .update({
        attempts: trx.raw("attempts + 1"),
        round_attempts: trx.raw("round_attempts + 1"),
        in_flight_since: now,
        next_attempt_at: now + ctx.config.CALLBACK_CLAIM_TIMEOUT,
        updated_at: now,
      });
    if (lost.length > 0) {
      await trx("callback_attempts")
        .insert(
          lost.map((row) => ({
            event_id: row.id,
            number: Number(row.attempts),
            attempted_at: Number(row.in_flight_since),
            url: "",
            status_code: 0,
            latency_ms: 0,
            error: LOST_ERROR,
            outcome: "lost",
          })),
        )
        .onConflict(["event_id", "number"])
        .ignore();
    }
    return taken;
  });
}

/**
 * The callback's headers: the event's identity and the request signature scheme, over the
 * callback URL's path and query; and, when the merchant has webhook secrets, the Standard
 * Webhooks headers over the same timestamp and body (one `v1,` signature per secret, current
 * first, so during a rotation's grace period either secret verifies).
 */
export function callbackHeaders(
  secret: string,
  url: URL,
  attempt: Pick<ClaimedAttempt, "eventId" | "type" | "body">,
  now: Date,
  webhookSecrets: readonly string[] = [],
): Record<string, string> {
  const timestamp = unixTimestamp(now);
  return {
    ...(webhookSecrets.length > 0 ? standardWebhookHeaders(webhookSecrets, attempt.eventId, timestamp, attempt.body) : {}),
    "content-type": "application/json",
    "user-agent": "payments-callback-sender/1",
    "x-event-id": attempt.eventId,
    "x-event-type": attempt.type,
    "x-timestamp": timestamp,
    "x-signature": sign(secret, { timestamp, method: "POST", path: `${url.pathname}${url.search}`, body: attempt.body }),
  };
}

export interface AttemptRecord {
  url: string;
  result: PostResult;
}

/** What an attempt's answer makes of its event: the outcome and the change to its row. */
function decide(ctx: CallbackContext, attempt: ClaimedAttempt, result: PostResult): { outcome: AttemptOutcome; nextAttemptAt?: number } {
  if (result.delivered) return { outcome: "delivered" };
  const step = nextStep(attempt.roundNumber, ctx.config.CALLBACK_RETRY_SCHEDULE, result.retryAfterMs, ctx.config.CALLBACK_MAX_RETRY_AFTER);
  return step.kind === "retry" ? { outcome: "retry", nextAttemptAt: ctx.clock.now().getTime() + step.delayMs } : { outcome: "failed" };
}

/** Only the claim that made the attempt: `attempts` and `in_flight_since` as it left them, still pending. */
function byTheirClaims(qb: Knex.QueryBuilder, attempts: readonly ClaimedAttempt[]): Knex.QueryBuilder {
  return qb
    .whereIn(
      "id",
      attempts.map((a) => a.eventId),
    )
    .where("status", "pending")
    .where((any) => {
      for (const a of attempts) any.orWhere({ id: a.eventId, attempts: a.number, in_flight_since: a.claimedAt });
    });
}

/**
 * Records attempts' answers in one transaction: every attempt row in one INSERT, the events
 * delivered in one UPDATE, those failed for good in another, and each retry's next attempt
 * (its own time). Only the claim that made an attempt changes its event; a claim whose lease
 * ran out keeps just its attempt row.
 */
export async function recordAttempts(ctx: CallbackContext, records: ReadonlyArray<{ attempt: ClaimedAttempt; record: AttemptRecord }>): Promise<AttemptOutcome[]> {
  if (records.length === 0) return [];
  const decided = records.map(({ attempt, record }) => ({ attempt, record, ...decide(ctx, attempt, record.result) }));
  const now = ctx.clock.now().getTime();
  await transactionWithRetry(ctx.db, async (trx) => {
    await trx("callback_attempts")
      .insert(
        decided.map(({ attempt, record, outcome }) => ({
          event_id: attempt.eventId,
          number: attempt.number,
          attempted_at: attempt.claimedAt,
          url: record.url.slice(0, 2048),
          status_code: record.result.statusCode,
          latency_ms: Math.min(record.result.latencyMs, 2_147_483_647),
          error: record.result.error.slice(0, 500),
          outcome,
        })),
      )
      .onConflict(["event_id", "number"])
      .merge();
    const delivered = decided.filter((d) => d.outcome === "delivered").map((d) => d.attempt);
    if (delivered.length > 0) await byTheirClaims(trx("callback_events"), delivered).update({ status: "delivered", delivered_at: now, next_attempt_at: null, in_flight_since: null, updated_at: now });
    const failed = decided.filter((d) => d.outcome === "failed").map((d) => d.attempt);
    if (failed.length > 0) await byTheirClaims(trx("callback_events"), failed).update({ status: "failed", next_attempt_at: null, in_flight_since: null, updated_at: now });
    for (const d of decided) {
      if (d.outcome !== "retry") continue;
      await byTheirClaims(trx("callback_events"), [d.attempt]).update({ next_attempt_at: d.nextAttemptAt, in_flight_since: null, updated_at: now });
    }
  });
  return decided.map((d) => d.outcome);
}

/** Tries of a record before the attempt is left to its lease. */
const RECORD_TRIES = 4;

/**
 * recordAttempts, tried again on any failure (a connection the pool kept across a database
 * restart, a failover): an unrecorded attempt is sent again when its lease ends, so the
 * merchant would get it twice. Safe to repeat even when a failed try did commit: the attempt
 * rows are upserts and the events' updates are conditional on their claims, which a
 * committed try has already released.
 */
async function recordWithRetries(ctx: CallbackContext, records: ReadonlyArray<{ attempt: ClaimedAttempt; record: AttemptRecord }>): Promise<AttemptOutcome[]> {
  for (let tried = 1; ; tried++) {
    try {
      return await recordAttempts(ctx, records);
    } catch (err) {
      if (tried >= RECORD_TRIES) throw err;
      ctx.logger.warn({ err, events: records.map((r) => r.attempt.eventId).slice(0, 10), tried }, "recording attempts failed; trying again");
      await new Promise((resolve) => setTimeout(resolve, 100 * tried));
    }
  }
}

/** Most answers recorded in one transaction. */
const RECORD_BATCH = 200;

/** Records one answer and gives its outcome, or throws when the record failed every try. */
export type AttemptRecorder = (attempt: ClaimedAttempt, record: AttemptRecord) => Promise<AttemptOutcome>;

/**
 * Records answers as they come, together (kit `createBatcher`): the first answer is recorded
 * at once, and those that come while a record is under way go in the next, one transaction
 * for all of them.
 */
export function createAttemptRecorder(ctx: CallbackContext): AttemptRecorder {
  const record = createBatcher<{ attempt: ClaimedAttempt; record: AttemptRecord }, AttemptOutcome>({
    maxBatch: RECORD_BATCH,
    handle: (batch) => recordWithRetries(ctx, batch),
  });
  return (attempt, answer) => record({ attempt, record: answer });
}

/** Gives a claim back without counting it (our side failed before anything was sent). */
export async function releaseClaim(ctx: CallbackContext, attempt: ClaimedAttempt, retryInMs: number): Promise<void> {
  const now = ctx.clock.now().getTime();
  await ctx.db("callback_events")
    .where({ id: attempt.eventId, attempts: attempt.number, in_flight_since: attempt.claimedAt, status: "pending" })
    .update({
      attempts: attempt.number - 1,
      round_attempts: attempt.roundNumber - 1,
      in_flight_since: null,
      next_attempt_at: now + retryInMs,
      updated_at: now,
    });
}

/** The POST of one attempt to where the merchant's callbacks go now; a missing or broken URL is an attempt that failed saying so. */
async function postToMerchant(ctx: CallbackContext, attempt: ClaimedAttempt, target: CallbackTarget): Promise<AttemptRecord> {
  const unsent = (error: string): AttemptRecord => ({ url: target.callbackUrl, result: { delivered: false, statusCode: 0, latencyMs: 0, error } });
  if (target.callbackUrl === "") return unsent("the merchant has no callback URL set");
  if (!URL.canParse(target.callbackUrl)) return unsent("the merchant's callback URL is not a URL");
  const url = new URL(target.callbackUrl);
  const now = ctx.clock.now();
  const headers = callbackHeaders(target.signingSecret, url, attempt, now, webhookSecretsAt(target, now.getTime()));
  return { url: url.toString(), result: await ctx.poster.post({ url: url.toString(), headers, body: attempt.body }) };
}

/**
 * Makes one claimed attempt: looks up where the merchant's callbacks go now and the secret
 * that signs them (kept until the merchant changes, src/callback-target.ts), POSTs, records.
 * Never throws. When the lookup fails (our side) the claim is given back uncounted; when the
 * record fails the lease runs out and the event is sent again.
 */
export function deliverAttempt(ctx: CallbackContext, attempt: ClaimedAttempt, recorder: AttemptRecorder): Promise<AttemptOutcome | "released" | "unrecorded"> {
  // In the trace (and under the request id) of the event's ingest: the callback can be
  // followed back to the request that caused it. Each attempt is a span of that trace.
  return withRequestIdOrNone(attempt.requestId, () =>
    withSpan(
      "callback.deliver",
      {
        parent: extractTraceContext((key) => (key === "traceparent" ? (attempt.traceparent ?? undefined) : undefined)),
        attributes: { "callback.event_id": attempt.eventId, "callback.attempt": attempt.number, "merchant.id": attempt.merchantId },
      },
      async (span) => {
        const outcome = await deliverAttemptNow(ctx, attempt, recorder);
        span.setAttribute("callback.outcome", outcome);
        return outcome;
      },
    ),
  );
}

async function deliverAttemptNow(ctx: CallbackContext, attempt: ClaimedAttempt, recorder: AttemptRecorder): Promise<AttemptOutcome | "released" | "unrecorded"> {
  // Fields of every line below (not a child logger: making one per attempt showed in the profile).
  const about = { job: "callback-sender", eventId: attempt.eventId, merchantId: attempt.merchantId, attempt: attempt.number };
  const log = ctx.logger;
  const attempts = ctx.metrics.counter("callback_attempts_total", "Callback attempts, by outcome", ["outcome"]);
  let target: CallbackTarget;
  try {
    target = await callbackTargetOf(ctx, attempt.merchantId);
  } catch (err) {
    const retryIn = Math.min(ctx.config.CALLBACK_RETRY_SCHEDULE[0] ?? 5_000, 5_000);
    log.error({ ...about, err }, "could not look up the merchant's callback target; the attempt is given back and tried again");
    await releaseClaim(ctx, attempt, retryIn).catch((releaseErr: unknown) => log.error({ ...about, err: releaseErr }, "could not give the claim back; it is retried when its lease ends"));
    attempts.inc({ outcome: "released" });
    return "released";
  }

  const { url, result } = await postToMerchant(ctx, attempt, target);
  // A merchant whose endpoint fails may be changing it (its URL, its secret): its next
  // attempt asks the merchant service rather than trust the cache.
  if (!result.delivered) forgetCallbackTarget(ctx, attempt.merchantId);

  let outcome: AttemptOutcome;
  try {
    outcome = await recorder(attempt, { url, result });
  } catch (err) {
    log.error({ ...about, err, statusCode: result.statusCode, delivered: result.delivered }, "could not record the attempt; the event is sent again when its lease ends");
    attempts.inc({ outcome: "unrecorded" });
    return "unrecorded";
  }
  attempts.inc({ outcome });
  if (outcome === "delivered") {
    ctx.metrics
      .histogram("callback_delivery_duration_seconds", "From a status change to its callback's delivery to the merchant", [], DELIVERY_BUCKETS)
      .observe(Math.max(0, ctx.clock.now().getTime() - attempt.createdAt) / 1000);
  }
  const fields = { ...about, type: attempt.type, url, statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error || undefined };
  if (outcome === "delivered") log.info(fields, "callback delivered");
  else if (outcome === "retry") log.info(fields, "callback not delivered; retrying on the schedule");
  else log.warn(fields, "callback failed: the retry schedule is used up");
  return outcome;
}

/** Delivery takes from milliseconds (first attempt) to the retry schedule's hours. */
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/**
 * A sender's slots, for the ingest to claim events as it stores them (src/ingest.ts): reserve
 * a slot for an event of a merchant before the ingest's transaction, then send the attempt
 * once it committed, or release the slot when it did not claim it after all.
 */
export interface SenderSlots {
  /** Takes a slot for one of the merchant's events when one is free (in all and for that merchant). */
  reserve(merchantId: string): boolean;
  release(merchantId: string): void;
  /** Sends an attempt claimed with a reserved slot; the slot is freed when it ends. */
  send(attempt: ClaimedAttempt): void;
}

export interface CallbackSender extends Stoppable, SenderSlots {
  /**
   * Look for due attempts now (a new event, a redelivery). With transaction ids: events of those
   * transactions were stored but wait for an earlier change of theirs (or a free slot), so the
   * end of an attempt of such a transaction looks again at once too.
   */
  wake(transactionIds?: readonly string[]): void;
}

/**
 * Runs the sender until stopped: every CALLBACK_POLL_INTERVAL, when woken, and when an attempt
 * ends while events may be waiting for it, it claims what fits in its free slots and sends
 * it. Most events do not wait for it: the ingest claims them as it stores them (slots). stop()
 * claims no more and waits for the attempts under way (each bounded by CALLBACK_TIMEOUT).
 */
export function startCallbackSender(ctx: CallbackContext): CallbackSender {
  const total = ctx.config.CALLBACK_CONCURRENCY;
  const perMerchant = ctx.config.CALLBACK_MERCHANT_CONCURRENCY;
  const interval = ctx.config.CALLBACK_POLL_INTERVAL;
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<unknown>>();
  const recorder = createAttemptRecorder(ctx);
  /** Slots reserved by the ingest and not yet sending or released. */
  let reserved = 0;
  /**
   * Whether a claim may find something now that the last one did not: set by every wake and
   * by a claim that filled its slots; an attempt's end claims again only then (or when an
   * event of its transaction waits), not after every delivery.
   */
  let maybeDue = true;
  /** Transactions with a stored event that waits for an earlier one (or a slot): their attempts' ends claim again. */
  const waiting = new Set<string>();
  let stopped = false;

  const free = () => total - inFlight.size - reserved;
  const take = (merchantId: string) => busy.set(merchantId, (busy.get(merchantId) ?? 0) + 1);
  const give = (merchantId: string) => {
    const left = (busy.get(merchantId) ?? 1) - 1;
    if (left <= 0) busy.delete(merchantId);
    else busy.set(merchantId, left);
  };
  const send = (attempt: ClaimedAttempt) => {
    const sending: Promise<unknown> = deliverAttempt(ctx, attempt, recorder).finally(() => {
      inFlight.delete(sending);
      give(attempt.merchantId);
      if (waiting.delete(attempt.transactionId)) maybeDue = true;
      if (maybeDue) job.wake();
    });
    inFlight.add(sending);
  };

  const claim = async (): Promise<JobResult> => {
    const room = free();
    if (stopped || room <= 0) return {};
    // Cleared before the query: whatever is stored after it started sets it again.
    maybeDue = false;
    const fullMerchants = [...busy].filter(([, n]) => n >= perMerchant).map(([id]) => id);
    let claimed: ClaimedAttempt[];
    try {
      claimed = await claimDueAttempts(ctx, { limit: room, fullMerchants, merchantRoom: (id) => perMerchant - (busy.get(id) ?? 0) });
    } catch (err) {
      maybeDue = true;
      return { failed: { err, message: "claiming due callbacks failed; will retry" } };
    }
    for (const attempt of claimed) {
      take(attempt.merchantId);
      send(attempt);
    }
    // Anything claimed: more may be due (other merchants' events passed over for room, a full batch).
    if (claimed.length > 0) maybeDue = true;
    return { more: claimed.length > 0 };
  };

  // While claims fail it backs off up to ten poll intervals and warns once per failure streak.
  const job = startJob({
    name: "callback-sender",
    intervalMs: interval,
    backoff: { initialMs: interval, maxMs: interval * 10 },
    logger: ctx.logger,
    metrics: ctx.metrics,
    runAtStart: true,
    recoveryMessage: "claiming due callbacks recovered",
    run: async () => {
      // The poll: whatever happened since (a retry came due, a lease ran out) may be due.
      maybeDue = true;
      return claim();
    },
  });

  return {
    wake: (transactionIds) => {
      for (const id of transactionIds ?? []) waiting.add(id);
      // Bounded: a transaction forgotten here is found by the poll.
      if (waiting.size > 10_000) waiting.clear();
      maybeDue = true;
      job.wake();
    },
    reserve(merchantId) {
      if (stopped || free() <= 0 || (busy.get(merchantId) ?? 0) >= perMerchant) return false;
      reserved++;
      take(merchantId);
      return true;
    },
    release(merchantId) {
      reserved--;
      give(merchantId);
    },
    send(attempt) {
      reserved--;
      send(attempt);
    },
    async stop() {
      stopped = true;
      await job.stop();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
