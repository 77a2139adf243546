import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { Knex } from "knex";
import type { EventBus } from "./bus.js";
import type { Clock } from "./clock.js";
import { claimTransaction, forUpdateSkipLocked, type Migration } from "./db.js";
import { newId, newToken } from "./ids.js";
import { startJob, type JobResult } from "./job-runner.js";
import { currentRequestId, withRequestIdOrNone, type Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { currentTraceparent, extractTraceContext, injectTraceContext, SpanKind, withSpan } from "./tracing.js";

/** Every service includes this migration: its own outbox table in its own database. */
export const outboxMigration: Migration = {
  name: "00000000000000_outbox",
  async up(db) {
    await db.schema.createTable("outbox", (t) => {
      t.bigIncrements("seq");
      t.string("event_id", 64).notNullable().unique();
      t.string("topic", 200).notNullable();
      t.binary("payload").notNullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("published_at").nullable();
      t.integer("attempts").notNullable().defaultTo(0);
      t.string("last_error", 500).nullable();
      t.index(["published_at", "seq"], "outbox_unpublished");
    });
  },
  async down(db) {
    await db.schema.dropTable("outbox");
  },
};

/**
 * A relay leases the rows it is about to publish instead of holding their locks while the
 * bus answers: `lease_token` says whose they are, `leased_until` when another relay may take
 * them (the holder died or hangs).
 */
export const outboxLeaseMigration: Migration = {
  name: "00000000000001_outbox_lease",
  async up(db) {
    await db.schema.alterTable("outbox", (t) => {
      t.string("lease_token", 32).nullable();
      t.bigInteger("leased_until").nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("outbox", (t) => {
      t.dropColumn("lease_token");
      t.dropColumn("leased_until");
    });
  },
};

/**
 * Where an event came from: the W3C `traceparent` and the request id current when it was
 * recorded. The relay publishes them as message headers, so the consumers' spans continue
 * the trace and their logs carry the request id.
 */
export const outboxTraceMigration: Migration = {
  name: "00000000000002_outbox_trace",
  async up(db) {
    await db.schema.alterTable("outbox", (t) => {
      t.string("traceparent", 64).nullable();
      t.string("request_id", 128).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("outbox", (t) => {
      t.dropColumn("traceparent");
      t.dropColumn("request_id");
    });
  },
};

/** The outbox's migrations, oldest first: every service's database gets all of them. */
export const outboxMigrations: readonly Migration[] = [outboxMigration, outboxLeaseMigration, outboxTraceMigration];

/**
 * Writes an event in the caller's transaction, so it exists exactly when the change does.
 * The event id is generated unless init sets `eventId`; it becomes the Nats-Msg-Id.
 */
export async function recordEvent<Desc extends DescMessage>(
  trx: Knex.Transaction | Knex,
  clock: Clock,
  topic: string,
  schema: Desc,
  init: MessageInitShape<Desc>,
): Promise<string> {
  const given = (init as { eventId?: unknown }).eventId;
  const eventId = typeof given === "string" && given !== "" ? given : newId("evt");
  const message = create(schema, { ...(init as object), eventId } as unknown as MessageInitShape<Desc>);
  await trx("outbox").insert({
    event_id: eventId,
    topic,
    payload: Buffer.from(toBinary(schema, message)),
    created_at: clock.now().getTime(),
    traceparent: currentTraceparent() ?? null,
    request_id: currentRequestId() ?? null,
  });
  return eventId;
}

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
   * so it must outlast a slow publish (JetStream gives up after 5 s); a relay starts no
   * publish after half of it.
   */
  leaseMs?: number;
  /** The longest pause after failures; the pause starts at pollMs and doubles per failure. */
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

/**
 * Publishes outbox rows in order. A short READ COMMITTED transaction leases a batch (SKIP
 * LOCKED, so replicas take different rows); the rows are published with no transaction open,
 * so nothing that records an event ever waits for the bus; each is marked published after
 * the bus accepted it, only while its lease is still this relay's. The bus deduplicates on
 * the event id, so a crash (or an expired lease) between the two publishes twice at worst,
 * never loses. The first failure ends the batch and hands its rows back, so later rows wait
 * for it; the relay then backs off.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, bus, clock, logger } = options;
  const pollMs = options.pollMs ?? 250;
  const batchSize = options.batchSize ?? 100;
  const retentionMs = options.retentionMs ?? 7 * 24 * 3600 * 1000;
  const leaseMs = options.leaseMs ?? 60_000;
  const maxBackoffMs = Math.max(options.maxBackoffMs ?? 5_000, pollMs);
  let stopped = false;
  let lastCleanup = 0;
  const stopSampling = options.metrics?.sampleGauge(
    "outbox_backlog",
    "Outbox events not yet published to the bus, by service",
    ["service"],
    async () => {
      const row = (await db("outbox").whereNull("published_at").count({ n: "*" }).first()) as { n?: number | string } | undefined;
      return [{ labels: { service: options.service ?? "unknown" }, value: Number(row?.n ?? 0) }];
    },
  );

  async function claim(token: string, now: number): Promise<ClaimedRow[]> {
    return claimTransaction(db, async (trx) => {
      const rows: ClaimedRow[] = await forUpdateSkipLocked(
        db,
        trx("outbox")
          .select("seq", "event_id", "topic", "payload", "traceparent", "request_id")
          .whereNull("published_at")
          .where((q) => q.whereNull("leased_until").orWhere("leased_until", "<", now))
          .orderBy("seq")
          .limit(batchSize),
      );
      if (rows.length > 0) {
        await trx("outbox")
          .whereIn(
            "seq",
            rows.map((r) => r.seq),
          )
          .update({ lease_token: token, leased_until: now + leaseMs });
      }
      return rows;
    });
  }

  /** Hands back what this lease still holds, so any relay can take it at once. */
  async function release(token: string, rows: ClaimedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await db("outbox")
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
  async function publishInOrder(rows: ClaimedRow[], claimedAt: number): Promise<{ done: number; failed?: { err: unknown; row: ClaimedRow } }> {
    // Each row is published in the trace and under the request id it was recorded in (never
    // those of whatever nudged the relay); on the in-process bus the consumers run inside it.
    const send = (row: ClaimedRow) =>
      withRequestIdOrNone(row.request_id, () =>
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
    if (bus.kind === "in-process") {
      let done = 0;
      for (const row of rows) {
        if (stopped) break;
        // Too little lease left for a slow publish: the rest is handed back and claimed afresh.
        if (done > 0 && clock.now().getTime() >= claimedAt + leaseMs / 2) break;
        try {
          await send(row);
        } catch (err) {
          return { done, failed: { err, row } };
        }
        done++;
      }
      return { done };
    }
    const [first, ...rest] = rows;
    if (!first || stopped) return { done: 0 };
    try {
      await send(first);
    } catch (err) {
      return { done: 0, failed: { err, row: first } };
    }
    const outcomes = await Promise.allSettled(rest.map(send));
    const firstFailure = outcomes.findIndex((o) => o.status === "rejected");
    if (firstFailure === -1) return { done: rows.length };
    // Rows after the failed one may have reached the stream too; they are handed back and
    // published again after it (the bus drops the repeat by its event id), so none is marked
    // published before an earlier one.
    const failure = outcomes[firstFailure] as PromiseRejectedResult;
    return { done: 1 + firstFailure, failed: { err: failure.reason, row: rest[firstFailure]! } };
  }

  async function publishBatch(): Promise<BatchResult> {
    const token = newToken(12);
    const claimedAt = clock.now().getTime();
    const rows = await claim(token, claimedAt);
    let settled = 0;
    let lost = false;
    let result: Awaited<ReturnType<typeof publishInOrder>> = { done: 0 };
    try {
      result = await publishInOrder(rows, claimedAt);
      const published = rows.slice(0, result.done);
      settled = result.done;
      if (published.length > 0) {
        // One statement marks the batch, and only the rows whose lease is still ours.
        const marked = await db("outbox")
          .whereIn(
            "seq",
            published.map((r) => r.seq),
          )
          .where({ lease_token: token })
          .update({ published_at: clock.now().getTime(), attempts: db.raw("attempts + 1"), lease_token: null, leased_until: null });
        // The lease ran out and another relay took rows: what is left is its to publish.
        if (marked < published.length) {
          lost = true;
          logger.debug({ marked, published: published.length }, "outbox lease taken over; leaving the rest to its new holder");
        }
      }
      if (result.failed) {
        await db("outbox")
          .where({ seq: result.failed.row.seq, lease_token: token })
          .update({ attempts: db.raw("attempts + 1"), last_error: errorText(result.failed.err), lease_token: null, leased_until: null });
        settled++;
      }
    } finally {
      // Keep order: after a failure the later rows wait for the failed one, under any relay.
      await release(token, rows.slice(settled));
    }
    const complete = !result.failed && result.done === rows.length;
    return { more: !result.failed && !lost && (!complete || rows.length === batchSize), published: result.done, failed: result.failed };
  }

  async function cleanup(): Promise<void> {
    const now = clock.now().getTime();
    if (now - lastCleanup < 3600_000) return;
    lastCleanup = now;
    await db("outbox").whereNotNull("published_at").where("published_at", "<", now - retentionMs).delete();
  }

  /**
   * One batch. The job runner goes on at once while a full batch says there may be more, and
   * after a failure backs off (the pause starts at pollMs and doubles) and warns once per streak.
   */
  async function run(): Promise<JobResult> {
    const batch = await publishBatch();
    if (batch.failed) {
      const { err, row } = batch.failed;
      return { failed: { err, fields: { eventId: row.event_id, topic: row.topic }, message: "outbox publish failed; retrying with back-off until it succeeds" } };
    }
    const more = !stopped && batch.more;
    if (!more) await cleanup();
    // Finding nothing to take (another replica holds it) neither ends nor extends a streak.
    return { more, idle: batch.published === 0 };
  }

  const job = startJob({
    name: "outbox-relay",
    intervalMs: pollMs,
    run,
    backoff: { initialMs: pollMs, maxMs: maxBackoffMs },
    logger,
    metrics: options.metrics,
    failureMessage: "outbox relay failed; retrying with back-off",
    recoveryMessage: "outbox publishing recovered",
  });

  return {
    nudge() {
      job.wake();
    },
    flush() {
      return job.runNow();
    },
    async stop() {
      stopped = true;
      stopSampling?.();
      await job.stop();
    },
  };
}

function errorText(err: unknown): string {
  return String((err as Error | undefined)?.message ?? err).slice(0, 500);
}
