import { sampleConsumerPending, transactionWithRetry, withRequestIdOrNone, type BatchMessage, type Subscription } from "@payments/kit";
import { callbackEventOf, CONSUMED_TOPICS, type NewCallbackEvent } from "./callback-event.js";
import type { CallbackContext } from "./context.js";
import { claimableAtIngest, type ClaimedAttempt, type SenderSlots } from "./sender.js";
import { eventRowOf, type EventRow } from "./store.js";

/** Events taken in at once at most: one transaction, one multi-row INSERT. */
export const INGEST_BATCH = 200;

/**
 * Takes in every deposit and withdrawal status change: durable consumers (JetStream, or the
 * in-process bus in all-in-one), acknowledged only once the event is stored, so a crash
 * of this service, NATS or the database in between loses nothing; the bus delivers again
 * and an event already stored is left as it is.
 *
 * What arrived while the last batch was stored goes in one transaction: the events of the
 * batch's transactions already stored are read (one query), the new events inserted (one
 * statement). When this process sends callbacks, each new event that may go now (in
 * `sequence` order, with a free slot for its merchant) is stored already claimed by this
 * sender, under the same lease as a claim, and sent as soon as the transaction commits:
 * no second transaction to claim it, no wait for a poll.
 */
export async function startIngest(ctx: CallbackContext, slots: SenderSlots | undefined, wake: (transactionIds: readonly string[]) => void): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  for (const { durable, topic } of CONSUMED_TOPICS) {
    subscriptions.push(await ctx.bus.consumeBatches(durable, [topic], async (messages) => void (await takeIn(ctx, messages, slots, wake)), { maxBatch: INGEST_BATCH }));
  }
  const stopSampling = sampleConsumerPending(
    ctx.metrics,
    ctx.bus,
    CONSUMED_TOPICS.map((c) => c.durable),
  );
  subscriptions.push({ stop: async () => stopSampling() });
  return subscriptions;
}

/**
 * Takes in one batch of messages (startIngest's handler): stores their events, sends those
 * claimed as they were stored, and wakes the sender for the rest. Returns what it stored.
 */
export async function takeIn(
  ctx: CallbackContext,
  messages: readonly BatchMessage[],
  slots: SenderSlots | undefined,
  wake: (transactionIds: readonly string[]) => void,
): Promise<{ stored: string[]; claimed: string[] }> {
  const events: Array<{ event: NewCallbackEvent; message: BatchMessage }> = [];
  for (const message of messages) {
    const event = callbackEventOf(message.topic, message.data, ctx.config.PUBLIC_BASE_URL);
    if (event) events.push({ event, message });
  }
  if (events.length === 0) return { stored: [], claimed: [] };
  const { inserted, claimed } = await storeBatch(ctx, events, slots);
  const counter = ctx.metrics.counter("callback_events_total", "Status-change events taken in for callbacks, by type", ["type"]);
  const debug = ctx.logger.isLevelEnabled("debug");
  for (const { event, message } of inserted) {
    counter.inc({ type: event.type });
    if (debug) withRequestIdOrNone(message.requestId, () => ctx.logger.debug({ job: "callback-ingest", eventId: event.id, type: event.type, merchantId: event.merchantId }, "event taken in"));
  }
  for (const attempt of claimed) slots!.send(attempt);
  // What was stored but not claimed here (no slot, an earlier change of its transaction still
  // pending, no sender in this process) is the sender's claim's.
  const claimedIds = new Set(claimed.map((a) => a.eventId));
  const left = inserted.filter(({ event }) => !claimedIds.has(event.id));
  if (left.length > 0) wake(left.map(({ event }) => event.transactionId));
  return { stored: inserted.map(({ event }) => event.id), claimed: [...claimedIds] };
}

type Known = Pick<EventRow, "id" | "transaction_id" | "sequence" | "status">;

/**
 * Stores the batch's new events in one transaction; those this sender may send now are stored
 * claimed. The slots reserved for events that end up not claimed (already stored, the
 * transaction failed) are given back. A racing replica inserting the same event makes the
 * INSERT fail: the bus then hands the batch over one event at a time, and each finds its
 * event stored.
 */
async function storeBatch(
  ctx: CallbackContext,
  events: ReadonlyArray<{ event: NewCallbackEvent; message: BatchMessage }>,
  slots: SenderSlots | undefined,
): Promise<{ inserted: Array<{ event: NewCallbackEvent; message: BatchMessage }>; claimed: ClaimedAttempt[] }> {
  let reserved: string[] = [];
  try {
    return await transactionWithRetry(ctx.db, async (trx) => {
      // A deadlock retried: what the failed try reserved is given back first.
      for (const merchantId of reserved) slots?.release(merchantId);
      reserved = [];
      const now = ctx.clock.now().getTime();
      const known = (await trx("callback_events")
        .select("id", "transaction_id", "sequence", "status")
        .whereIn("transaction_id", [...new Set(events.map(({ event }) => event.transactionId))])) as Known[];
      const byTransaction = new Map<string, Array<{ sequence: number; status: string }>>();
      const add = (transactionId: string, sequence: number, status: string) => {
        const list = byTransaction.get(transactionId) ?? [];
        list.push({ sequence, status });
        byTransaction.set(transactionId, list);
      };
      for (const row of known) add(row.transaction_id, Number(row.sequence), row.status);
      const seen = new Set(known.map((r) => r.id));
      const inserted: Array<{ event: NewCallbackEvent; message: BatchMessage }> = [];
      const rows: Array<Record<string, unknown>> = [];
      const claimed: ClaimedAttempt[] = [];
      // In sequence order, so an earlier change of the batch is known when a later one is decided.
      const ordered = [...events].sort((a, b) => a.event.sequence - b.event.sequence);
      for (const item of ordered) {
        const { event, message } = item;
        if (seen.has(event.id)) continue;
        seen.add(event.id);
        const claim = slots !== undefined && claimableAtIngest(event, byTransaction.get(event.transactionId) ?? []) && slots.reserve(event.merchantId);
        if (claim) reserved.push(event.merchantId);
        add(event.transactionId, event.sequence, "pending");
        inserted.push(item);
        const traceparent = message.traceparent ?? null;
        const requestId = message.requestId ?? null;
        rows.push(
          eventRowOf(event, now, {
            traceparent,
            requestId,
            claim: claim ? { leaseUntil: now + ctx.config.CALLBACK_CLAIM_TIMEOUT } : undefined,
          }),
        );
        if (claim) {
          claimed.push({
            eventId: event.id,
            merchantId: event.merchantId,
            transactionId: event.transactionId,
            type: event.type,
            body: event.body,
            number: 1,
            roundNumber: 1,
            claimedAt: now,
            createdAt: event.createdAt,
            traceparent,
            requestId,
          });
        }
      }
      if (rows.length > 0) await trx("callback_events").insert(rows);
      return { inserted, claimed };
    });
  } catch (err) {
    for (const merchantId of reserved) slots?.release(merchantId);
    throw err;
  }
}
