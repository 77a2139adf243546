import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { Knex } from "knex";
import type { EventBus } from "./bus.js";
import type { Clock } from "./clock.js";
import { forUpdateSkipLocked, type Migration } from "./db.js";
import { newId } from "./ids.js";
import type { Logger } from "./logger.js";

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
  });
  return eventId;
}

export interface OutboxRelay {
  /** Publish soon, without waiting for the next poll (call after a commit). */
  nudge(): void;
  /** Publishes whatever is pending now; resolves when done. */
  flush(): Promise<void>;
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
}

/**
 * Publishes outbox rows in order. Rows are claimed with SKIP LOCKED so replicas share the
 * work; a row is marked published only after the bus accepted it, and the bus deduplicates
 * on the event id, so a crash between the two publishes twice at worst, never loses.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, bus, clock, logger } = options;
  const pollMs = options.pollMs ?? 250;
  const batchSize = options.batchSize ?? 100;
  const retentionMs = options.retentionMs ?? 7 * 24 * 3600 * 1000;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let lastCleanup = 0;

  async function publishBatch(): Promise<number> {
    return db.transaction(async (trx) => {
      const rows: Array<{ seq: number; event_id: string; topic: string; payload: Buffer }> = await forUpdateSkipLocked(
        db,
        trx("outbox").select("seq", "event_id", "topic", "payload").whereNull("published_at").orderBy("seq").limit(batchSize),
      );
      let published = 0;
      for (const row of rows) {
        try {
          await bus.publish(row.topic, new Uint8Array(row.payload), row.event_id);
        } catch (err) {
          await trx("outbox")
            .where({ seq: row.seq })
            .update({ attempts: trx.raw("attempts + 1"), last_error: String((err as Error)?.message ?? err).slice(0, 500) });
          logger.warn({ err, eventId: row.event_id, topic: row.topic }, "outbox publish failed; will retry");
          break; // keep order: later rows wait for this one
        }
        await trx("outbox").where({ seq: row.seq }).update({ published_at: clock.now().getTime(), attempts: trx.raw("attempts + 1") });
        published++;
      }
      return rows.length === batchSize && published === rows.length ? published : -published - 1;
    });
  }

  async function cleanup(): Promise<void> {
    const now = clock.now().getTime();
    if (now - lastCleanup < 3600_000) return;
    lastCleanup = now;
    await db("outbox").whereNotNull("published_at").where("published_at", "<", now - retentionMs).delete();
  }

  async function run(): Promise<void> {
    do {
      again = false;
      try {
        // A full batch means there may be more: go on at once.
        while (!stopped && (await publishBatch()) >= 0);
        await cleanup();
      } catch (err) {
        if (!stopped) logger.error({ err }, "outbox relay failed");
      }
    } while (again && !stopped);
  }

  function tick(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = run().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void tick().finally(schedule);
    }, pollMs);
    timer.unref?.();
  }
  schedule();

  return {
    nudge() {
      if (!stopped) void tick();
    },
    async flush() {
      await tick();
      if (again) await tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
