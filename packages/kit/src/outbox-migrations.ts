import type { Migration } from "./db.js";

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
