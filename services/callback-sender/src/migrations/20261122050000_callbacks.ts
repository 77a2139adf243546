import type { Migration } from "@payments/kit";

/**
 * Callback events and their delivery attempts. Times are BIGINT epoch milliseconds.
 *
 * An event row is both the record and the queue: a pending event is due when
 * `next_attempt_at` has passed. A sender claims it (`FOR UPDATE SKIP LOCKED`) by bumping
 * `attempts` and pushing `next_attempt_at` past the attempt's lease, so a sender that dies
 * mid-attempt leaves the event due again once the lease ends: nothing lives in a timer.
 */
export const callbacksMigration: Migration = {
  name: "20261122050000_callbacks",
  async up(db) {
    await db.schema.createTable("callback_events", (t) => {
      // The status-change event's id: X-Event-Id, the same on every attempt.
      t.string("id", 40).primary();
      t.string("merchant_id", 100).notNullable();
      t.string("type", 40).notNullable();
      t.string("transaction_type", 16).notNullable();
      t.string("transaction_id", 40).notNullable();
      t.bigInteger("sequence").notNullable();
      // The exact bytes every attempt sends, so a retry is the same callback.
      t.text("body", "mediumtext").notNullable();
      t.string("status", 16).notNullable();
      // Attempts in all, and in the current round (a redelivery starts a new round on the schedule).
      t.integer("attempts").notNullable().defaultTo(0);
      t.integer("round_attempts").notNullable().defaultTo(0);
      t.bigInteger("next_attempt_at").nullable();
      // Set while an attempt is under way (its claim time); cleared when its answer is recorded.
      t.bigInteger("in_flight_since").nullable();
      t.bigInteger("created_at").notNullable();
      t.bigInteger("received_at").notNullable();
      t.bigInteger("delivered_at").nullable();
      t.bigInteger("updated_at").notNullable();
      // The senders' scan for due events.
      t.index(["status", "next_attempt_at"], "callback_events_due");
      t.index(["merchant_id", "created_at", "id"], "callback_events_merchant_created");
      t.index(["merchant_id", "status", "created_at", "id"], "callback_events_merchant_status_created");
      t.index(["transaction_id", "created_at"], "callback_events_transaction");
      t.index(["created_at", "id"], "callback_events_created");
    });
    await db.schema.createTable("callback_attempts", (t) => {
      t.string("event_id", 40).notNullable();
      t.integer("number").notNullable();
      t.bigInteger("attempted_at").notNullable();
      t.string("url", 2048).notNullable().defaultTo("");
      t.integer("status_code").notNullable().defaultTo(0);
      t.integer("latency_ms").notNullable().defaultTo(0);
      t.string("error", 500).notNullable().defaultTo("");
      // delivered, retry, failed or lost.
      t.string("outcome", 16).notNullable();
      t.primary(["event_id", "number"]);
    });
  },
};
