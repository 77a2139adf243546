import { forUpdate, transactionWithRetry } from "@payments/kit";
import type { Knex } from "knex";
import type { CallbackContext } from "./context.js";
import { getEventRow, type EventRow } from "./store.js";

/**
 * Asks for a new delivery of one event. A delivered or failed event becomes pending, due
 * now, with a fresh round of the retry schedule; a pending one waiting for its next attempt
 * is brought forward to now; one with an attempt under way is left to that attempt. Every
 * change is conditional on the row as read, so a racing attempt's record wins and nothing
 * is sent twice at once.
 */
export async function redeliverEvent(ctx: CallbackContext, eventId: string, merchantId: string | undefined): Promise<EventRow> {
  const row = await getEventRow(ctx.db, eventId, merchantId);
  const now = ctx.clock.now().getTime();
  if (row.status !== "pending") {
    await ctx.db("callback_events")
      .where({ id: row.id, status: row.status, attempts: row.attempts })
      .update({ status: "pending", round_attempts: 0, next_attempt_at: now, in_flight_since: null, updated_at: now });
  } else if (row.in_flight_since === null) {
    await ctx.db("callback_events")
      .where({ id: row.id, status: "pending", attempts: row.attempts })
      .whereNull("in_flight_since")
      .where("next_attempt_at", ">", now)
      .update({ next_attempt_at: now, updated_at: now });
  }
  ctx.wakeSender();
  return getEventRow(ctx.db, eventId, merchantId);
}

/** Redelivers every failed event of a merchant whose status change happened at or after `since`; the ids redelivered, oldest first. */
export async function redeliverFailedEvents(ctx: CallbackContext, merchantId: string, since: number): Promise<string[]> {
  const now = ctx.clock.now().getTime();
  const ids = await transactionWithRetry(ctx.db, async (trx) => {
    const failed = (q: Knex.QueryBuilder) => q.where({ merchant_id: merchantId, status: "failed" }).where("created_at", ">=", since);
    const rows = (await forUpdate(trx, failed(trx("callback_events").select("id")).orderBy("created_at").orderBy("id"))) as Array<{ id: string }>;
    const taken = rows.map((r) => r.id);
    for (let i = 0; i < taken.length; i += 500) {
      await failed(trx("callback_events").whereIn("id", taken.slice(i, i + 500))).update({
        status: "pending",
        round_attempts: 0,
        next_attempt_at: now,
        in_flight_since: null,
        updated_at: now,
      });
    }
    return taken;
  });
  if (ids.length > 0) ctx.wakeSender();
  return ids;
}
