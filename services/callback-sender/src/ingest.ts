import { sampleConsumerPending, type Subscription } from "@payments/kit";
import { callbackEventOf, CONSUMED_TOPICS } from "./callback-event.js";
import type { CallbackContext } from "./context.js";
import { storeEvent } from "./store.js";

/**
 * Takes in every deposit and withdrawal status change: durable consumers (JetStream, or the
 * in-process bus in all-in-one), acknowledged only once the event is stored, so a crash
 * of this service, NATS or the database in between loses nothing; the bus delivers again
 * and the event id makes the second store a no-op.
 */
export async function startIngest(ctx: CallbackContext, wake: () => void): Promise<Subscription[]> {
  const log = ctx.logger.child({ job: "callback-ingest" });
  const stored = ctx.metrics.counter("callback_events_total", "Status-change events taken in for callbacks, by type", ["type"]);
  const subscriptions: Subscription[] = [];
  for (const { durable, topic } of CONSUMED_TOPICS) {
    subscriptions.push(
      await ctx.bus.consume(durable, [topic], async (message) => {
        const event = callbackEventOf(message.topic, message.data, ctx.config.PUBLIC_BASE_URL);
        if (!event) return;
        if (await storeEvent(ctx.db, ctx.clock, event)) {
          stored.inc({ type: event.type });
          log.debug({ eventId: event.id, type: event.type, merchantId: event.merchantId }, "event taken in");
          wake();
        }
      }),
    );
  }
  const stopSampling = sampleConsumerPending(
    ctx.metrics,
    ctx.bus,
    CONSUMED_TOPICS.map((c) => c.durable),
  );
  subscriptions.push({ stop: async () => stopSampling() });
  return subscriptions;
}
