import type { Knex } from "knex";
import type { EventBus } from "./bus.js";
import type { Clock } from "./clock.js";
import { claimTransaction, forUpdateSkipLocked } from "./db.js";
import { newToken } from "./ids.js";
import { startJob, type JobResult } from "./job-runner.js";
import { withRequestIdOrNone, type Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { extractTraceContext, injectTraceContext, SpanKind, withSpan } from "./tracing.js";

/** The relay's longest pause after failures unless told otherwise. */
export const DEFAULT_MAX_BACKOFF_MS = 2_000;

/**
 * How long claimed outbox rows stay a relay's by default: a relay killed holding rows delays
 * them this long (then another relay takes them over). Many times a publish's longest wait.
 */
export const OUTBOX_LEASE_MS = 15_000;

/**
 * Rows a relay claims and publishes per pass by default. A pass costs a few statements and two
 * round trips to NATS whatever its size (the rows after the first are pipelined), and under
 * load each of its steps waits its turn in a busy process: 100 a pass held 500 status changes a
 * second seconds behind on the bench (issue 22), 500 keeps up.
 */
export const OUTBOX_BATCH = 500;

export interface OutboxRelay {
  /** Publish soon, without waiting for the next poll (call after a commit). Waits out a back-off. */
  nudge(): void;
  /** Publishes whatever is pending now, back-off or not; resolves when done. */
  flush(): Promise<void>;
  /** Finishes the publish under way, hands back the rows still leased, and stops. */
  stop(): Promise<void>;
}

export interface OutboxRelayOptions {
  db: Knex;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  pollMs?: number;
  batchSize?: number;
  /** Published rows older than this are deleted. */
  retentionMs?: number;
  /**
   * How long claimed rows stay this relay's. Another relay takes them over only after this,
   * so it must outlast a slow publish: the JetStream bus gives up on an ack after its
   * publishTimeoutMs (2 s by default) and at once when the connection drops; a relay starts
   * no publish after half of it. The default, 15 s (OUTBOX_LEASE_MS), is many times either,
   * and short enough that a relay killed holding rows delays them little (it was 60 s: the
   * chaos run's kill -9 of a payout replica held a withdrawal's processing event a minute).
   */
  leaseMs?: number;
  /**
   * The longest pause after failures; the pause starts at pollMs and doubles per failure.
   * Default 2 s. A bus that says when it is back (`onConnected`) ends the pause at once.
   */
  maxBackoffMs?: number;
  /**
   * With it: `payments_outbox_backlog{service}` (unpublished rows, counted at most every
   * few seconds when scraped) and the relay's passes as job `outbox-relay`.
   */
  metrics?: Metrics;
  /** The service whose outbox this is (the backlog's label). */
  service?: string;
}

interface ClaimedRow {
  seq: number;
  event_id: string;
  topic: string;
  payload: Buffer;
  traceparent: string | null;
  request_id: string | null;
}

interface BatchResult {
  /** The batch was full and went through: there may be more right now. */
  more: boolean;
  published: number;
  failed?: { err: unknown; row: ClaimedRow };
}

/** How far publishing a batch got: every row before `done` was accepted by the bus; `failed` (when set) is rows[done]. */
interface PublishOutcome {
  done: number;
  failed?: { err: unknown; row: ClaimedRow };
}

/**
 * Publishes outbox rows in order. A short READ COMMITTED transaction leases a batch (SKIP
 * LOCKED, so replicas take different rows); the rows are published with no transaction open,
 * so nothing that records an event ever waits for the bus; each is marked published after
 * the bus accepted it, only while its lease is still this relay's. The bus deduplicates on
 * the event id, so a crash (or an expired lease) between the two publishes twice at worst,
 * never loses. The first failure ends the batch and hands its rows back, so later rows wait
 * for it; the relay then backs off, until the bus says it is connected again.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const pollMs = options.pollMs ?? 250;
  const maxBackoffMs = Math.max(options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS, pollMs);
  const batches = new OutboxBatches(options);
  const stopSampling = sampleBacklog(options);
  const job = startJob({
    name: "outbox-relay",
    intervalMs: pollMs,
    run: () => batches.run(),
    backoff: { initialMs: pollMs, maxMs: maxBackoffMs },
    logger: options.logger,
    metrics: options.metrics,
    failureMessage: "outbox relay failed; retrying with back-off",
    recoveryMessage: "outbox publishing recovered",
  });
  // The bus is back (NATS reconnected): publish now, not when the back-off would have ended.
  const stopListening = options.bus.onConnected?.(() => {
    job.runNow().catch((err: unknown) => options.logger.warn({ err }, "outbox relay run after reconnecting failed"));
  });

  return {
    nudge() {
      job.wake();
    },
    flush() {
      return job.runNow();
    },
    async stop() {
      stopListening?.();
      batches.stop();
      stopSampling?.();
      await job.stop();
    },
  };
}

/** `payments_outbox_backlog{service}`, with metrics: the unpublished rows, counted when scraped. Returns its stop. */
function sampleBacklog(options: OutboxRelayOptions): (() => void) | undefined {
  const { db } = options;
  return options.metrics?.sampleGauge(
    "outbox_backlog",
    "Outbox events not yet published to the bus, by service",
    ["service"],
    async () => {
      const found: unknown = await db("outbox").whereNull("published_at").count({ n: "*" }).first();
      const row = found as { n?: number | string } | undefined;
      return [{ labels: { service: options.service ?? "unknown" }, value: Number(row?.n ?? 0) }];
    },
  );
}

/** Publishes one row in the trace and under the request id it was recorded in (never those of whatever nudged the relay). */
function publishRow(bus: EventBus, row: ClaimedRow): Promise<void> {
  return withRequestIdOrNone(row.request_id, () =>
    withSpan(
      `publish ${row.topic}`,
      {
        kind: SpanKind.PRODUCER,
        parent: extractTraceContext((key) => (key === "traceparent" ? row.traceparent : undefined)),
        attributes: { "messaging.system": bus.kind === "jetstream" ? "nats" : "in-process", "messaging.destination.name": row.topic, "messaging.message.id": row.event_id },
      },
      () => {
        const headers: Record<string, string> = {};
        injectTraceContext((key, value) => (headers[key] = value));
        if (row.request_id) headers["x-request-id"] = row.request_id;
        return bus.publish(row.topic, new Uint8Array(row.payload), row.event_id, headers);
      },
    ),
  );
}

/** The relay's passes: each claims a batch, publishes it in order, marks what went and hands back the rest. */
class OutboxBatches {
  private readonly db: Knex;
  private readonly bus: EventBus;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly retentionMs: number;
  private readonly leaseMs: number;
  private stopped = false;
  private lastCleanup = 0;
  /**
   * Leases whose end this relay could not write (the claim's COMMIT, or the mark or hand-back
   * after the publish, failed: the database restarting). The claim may well have committed, so
   * rows may sit leased to a token nobody works on; they are handed back as soon as the
   * database answers again, not when the lease runs out (OUTBOX_LEASE_MS later, which would
   * hold them, and every later event of their transactions at the consumers, that long).
   */
  private readonly unsettledLeases = new Set<string>();

  constructor(options: OutboxRelayOptions) {
    this.db = options.db;
    this.bus = options.bus;
    this.clock = options.clock;
    this.logger = options.logger;
    this.batchSize = options.batchSize ?? OUTBOX_BATCH;
    this.retentionMs = options.retentionMs ?? 7 * 24 * 3600 * 1000;
    this.leaseMs = options.leaseMs ?? OUTBOX_LEASE_MS;
  }

  /** No publish starts after this; the one under way finishes. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * One batch. The job runner goes on at once while a full batch says there may be more, and
   * after a failure backs off (the pause starts at pollMs and doubles) and warns once per streak.
   */
  async run(): Promise<JobResult> {
    const batch = await this.publishBatch();
    if (batch.failed) {
      const { err, row } = batch.failed;
      return { failed: { err, fields: { eventId: row.event_id, topic: row.topic }, message: "outbox publish failed; retrying with back-off until it succeeds" } };
    }
    const more = !this.stopped && batch.more;
    if (!more) await this.cleanup();
    // Finding nothing to take (another replica holds it) neither ends nor extends a streak.
    return { more, idle: batch.published === 0 };
  }

  private async publishBatch(): Promise<BatchResult> {
    await this.releaseUnsettled();
    const token = newToken(12);
    const claimedAt = this.clock.now().getTime();
    let rows: ClaimedRow[];
    try {
      rows = await this.claim(token, claimedAt);
    } catch (err) {
      this.unsettled(token);
      throw err;
    }
    let settled = 0;
    let lost: boolean;
    let result: PublishOutcome;
    try {
      result = await this.publishInOrder(rows, claimedAt);
      settled = result.done;
      lost = !(await this.markPublished(token, rows.slice(0, result.done)));
      if (result.failed) {
        await this.markFailed(token, result.failed);
        settled++;
      }
    } catch (err) {
      this.unsettled(token);
      throw err;
    } finally {
      // Keep order: after a failure the later rows wait for the failed one, under any relay.
      await this.release(token, rows.slice(settled)).catch((err: unknown) => {
        this.unsettled(token);
        throw err;
      });
    }
    const complete = !result.failed && result.done === rows.length;
    return { more: !result.failed && !lost && (!complete || rows.length === this.batchSize), published: result.done, failed: result.failed };
  }

  private unsettled(token: string): void {
    this.unsettledLeases.add(token);
    // Bounded: a lease this relay forgets runs out by itself.
    if (this.unsettledLeases.size > 100) this.unsettledLeases.delete(this.unsettledLeases.values().next().value!);
  }

  /** Hands back every row still leased to a lease whose end could not be written (published or not: the bus deduplicates on the event id). */
  private async releaseUnsettled(): Promise<void> {
    for (const token of [...this.unsettledLeases]) {
      const released = await this.db("outbox").whereNull("published_at").where({ lease_token: token }).update({ lease_token: null, leased_until: null });
      this.unsettledLeases.delete(token);
      if (released > 0) this.logger.info({ released }, "outbox rows of an interrupted lease handed back");
    }
  }

  /** Marks `published` as published, in one statement and only the rows whose lease is still ours; false when some were not. */
  private async markPublished(token: string, published: ClaimedRow[]): Promise<boolean> {
    if (published.length === 0) return true;
    const { db } = this;
    const marked = await db("outbox")
      .whereIn(
        "seq",
        published.map((r) => r.seq),
      )
      .where({ lease_token: token })
      .update({ published_at: this.clock.now().getTime(), attempts: db.raw("attempts + 1"), lease_token: null, leased_until: null });
    // The lease ran out and another relay took rows: what is left is its to publish.
    if (marked < published.length) {
      this.logger.debug({ marked, published: published.length }, "outbox lease taken over; leaving the rest to its new holder");
      return false;
    }
    return true;
  }

  /** Counts the failed attempt, keeps its error and hands the row back. */
  private async markFailed(token: string, failed: { err: unknown; row: ClaimedRow }): Promise<void> {
    const { db } = this;
    await db("outbox")
      .where({ seq: failed.row.seq, lease_token: token })
      .update({ attempts: db.raw("attempts + 1"), last_error: errorText(failed.err), lease_token: null, leased_until: null });
  }

  private async claim(token: string, now: number): Promise<ClaimedRow[]> {
    const { db } = this;
    return claimTransaction(db, async (trx) => {
      const rows = await forUpdateSkipLocked(
        db,
        trx<ClaimedRow>("outbox")
          .select("seq", "event_id", "topic", "payload", "traceparent", "request_id")
          .whereNull("published_at")
          .where((q) => {
            q.whereNull("leased_until").orWhere("leased_until", "<", now);
          })
          .orderBy("seq")
          .limit(this.batchSize),
      );
      if (rows.length > 0) {
        await trx("outbox")
          .whereIn(
            "seq",
            rows.map((r) => r.seq),
          )
          .update({ lease_token: token, leased_until: now + this.leaseMs });
      }
      return rows;
    });
  }

  /** Hands back what this lease still holds, so any relay can take it at once. */
  private async release(token: string, rows: ClaimedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db("outbox")
      .whereIn(
        "seq",
        rows.map((r) => r.seq),
      )
      .where({ lease_token: token })
      .update({ lease_token: null, leased_until: null });
  }

  /**
   * Publishes `rows` in order and says how far it got: every row before `done` was accepted
   * by the bus; `failed` (when set) is rows[done]. On JetStream the first row goes alone and
   * the rest are pipelined: sent back to back on the one connection, in order, and their
   * acks awaited together, so a batch costs about one round trip instead of one per row,
   * while a bus that is down still sees only the first row tried. On the in-process bus
   * publishing runs the consumers themselves, so rows go one at a time.
   */
  private publishInOrder(rows: ClaimedRow[], claimedAt: number): Promise<PublishOutcome> {
    // On the in-process bus the consumers run inside each row's trace and request id.
    return this.bus.kind === "in-process" ? this.publishOneByOne(rows, claimedAt) : this.publishPipelined(rows);
  }

  private async publishOneByOne(rows: ClaimedRow[], claimedAt: number): Promise<PublishOutcome> {
    let done = 0;
    for (const row of rows) {
      if (this.stopped) break;
      // Too little lease left for a slow publish: the rest is handed back and claimed afresh.
      if (done > 0 && this.clock.now().getTime() >= claimedAt + this.leaseMs / 2) break;
      try {
        await publishRow(this.bus, row);
      } catch (err) {
        return { done, failed: { err, row } };
      }
      done++;
    }
    return { done };
  }

  private async publishPipelined(rows: ClaimedRow[]): Promise<PublishOutcome> {
    const [first, ...rest] = rows;
    if (!first || this.stopped) return { done: 0 };
    try {
      await publishRow(this.bus, first);
    } catch (err) {
      return { done: 0, failed: { err, row: first } };
    }
    const outcomes = await Promise.allSettled(rest.map((row) => publishRow(this.bus, row)));
    const firstFailure = outcomes.findIndex((o) => o.status === "rejected");
    if (firstFailure === -1) return { done: rows.length };
    // Rows after the failed one may have reached the stream too; they are handed back and
    // published again after it (the bus drops the repeat by its event id), so none is marked
    // published before an earlier one.
    const failure = outcomes[firstFailure] as PromiseRejectedResult;
    return { done: 1 + firstFailure, failed: { err: failure.reason, row: rest[firstFailure]! } };
  }

  private async cleanup(): Promise<void> {
    const now = this.clock.now().getTime();
    if (now - this.lastCleanup < 3600_000) return;
    this.lastCleanup = now;
    await this.db("outbox").whereNotNull("published_at").where("published_at", "<", now - this.retentionMs).delete();
  }
}

function errorText(err: unknown): string {
  return String((err as Error | undefined)?.message ?? err).slice(0, 500);
}
