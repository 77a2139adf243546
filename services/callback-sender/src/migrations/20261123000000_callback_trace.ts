import type { Migration } from "@payments/kit";

/**
 * Where a callback came from: the `traceparent` and request id of the event's consumer span
 * (which continues the trace of the request that caused the status change). The sender's
 * POST spans continue that trace and its log lines carry that request id, however much
 * later an attempt is made.
 */
export const callbackTraceMigration: Migration = {
  name: "20261123000000_callback_trace",
  async up(db) {
    await db.schema.alterTable("callback_events", (t) => {
      t.string("traceparent", 64).nullable();
      t.string("request_id", 128).nullable();
    });
  },
  async down(db) {
    await db.schema.alterTable("callback_events", (t) => {
      t.dropColumn("traceparent");
      t.dropColumn("request_id");
    });
  },
};
