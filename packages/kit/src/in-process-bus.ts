import { handleTraced, handleTracedBatch, topicMatches, type BusBatchHandler, type BusHandler, type BusHeaders, type EventBus, type Subscription } from "./bus.js";
import type { Logger } from "./logger.js";

/**
 * The all-in-one bus. `publish` hands the message to every durable group and resolves only
 * once each group's handler succeeded, so the outbox keeps a row until its effects are
 * committed: nothing is lost across a crash, as with JetStream.
 */
export class InProcessBus implements EventBus {
  readonly kind = "in-process" as const;
  private readonly groups = new Map<string, { topics: string[]; handlers: BusHandler[]; next: number; deliveries: Map<string, number> }>();
  private readonly watchers = new Set<{ topics: string[]; handler: BusHandler }>();

  constructor(private readonly logger?: Logger) {}

  async publish(topic: string, data: Uint8Array, msgId: string, headers?: BusHeaders): Promise<void> {
    for (const watcher of this.watchers) {
      if (watcher.topics.some((f) => topicMatches(f, topic))) {
        handleTraced("watch", undefined, { topic, data, msgId, deliveryCount: 1, headers: { ...headers } }, watcher.handler).catch((err: unknown) => this.logger?.warn({ err, topic }, "watcher failed"));
      }
    }
    for (const [durable, group] of this.groups) {
      if (group.handlers.length === 0 || !group.topics.some((f) => topicMatches(f, topic))) continue;
      const handler = group.handlers[group.next++ % group.handlers.length]!;
      const deliveryCount = (group.deliveries.get(msgId) ?? 0) + 1;
      group.deliveries.set(msgId, deliveryCount);
      try {
        await handler({ topic, data, msgId, deliveryCount, headers: { ...headers } });
        group.deliveries.delete(msgId);
      } catch (err) {
        this.logger?.warn({ err, topic, durable, msgId }, "event handler failed; the outbox will retry");
        throw err;
      }
    }
  }

  async consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription> {
    return this.join(durable, topics, (message) => handleTraced("consume", durable, message, handler));
  }

  /** Joins a durable group with a handler that does its own tracing. */
  private join(durable: string, topics: string[], handler: BusHandler): Subscription {
    let group = this.groups.get(durable);
    if (!group) {
      group = { topics, handlers: [], next: 0, deliveries: new Map() };
      this.groups.set(durable, group);
    }
    group.handlers.push(handler);
    const g = group;
    return {
      stop: async () => {
        g.handlers = g.handlers.filter((h) => h !== handler);
      },
    };
  }

  /** Each message goes alone: `publish` hands over one message and waits for its handlers. */
  async consumeBatches(durable: string, topics: string[], handler: BusBatchHandler): Promise<Subscription> {
    return this.join(durable, topics, (message) => handleTracedBatch(durable, [message], handler));
  }

  async watch(topics: string[], handler: BusHandler): Promise<Subscription> {
    const watcher = { topics, handler };
    this.watchers.add(watcher);
    return { stop: async () => void this.watchers.delete(watcher) };
  }

  isReady(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.groups.clear();
    this.watchers.clear();
  }
}
