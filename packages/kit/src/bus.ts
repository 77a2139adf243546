import { withRequestIdOrNone } from "./logger.js";
import { extractTraceContext, SpanKind, withSpan } from "./tracing.js";

export interface BusMessage {
  /** The topic without the deployment prefix, e.g. "merchant.v1.merchant_changed". */
  topic: string;
  data: Uint8Array;
  /** The outbox event id; the same on every redelivery. */
  msgId: string;
  /** 1 on first delivery. */
  deliveryCount: number;
  /** Headers it was published with: `traceparent`, `x-request-id` (lowercase names). */
  headers?: Record<string, string>;
}

/** Message headers an event travels with: where it came from (trace, request id). */
export type BusHeaders = Record<string, string>;

/**
 * Runs a handler the way every consumer and watcher does: in a consumer span continuing the
 * trace of the message's `traceparent`, under the request id of its `x-request-id` (or none:
 * never whatever context the delivery loop happens to be in).
 */
export function handleTraced(kind: "consume" | "watch", group: string | undefined, message: BusMessage, handler: BusHandler): Promise<void> {
  const headers = message.headers ?? {};
  return withRequestIdOrNone(headers["x-request-id"], () =>
    withSpan(
      `${kind === "consume" ? "process" : "watch"} ${message.topic}`,
      {
        kind: SpanKind.CONSUMER,
        parent: extractTraceContext((key) => headers[key]),
        attributes: {
          "messaging.destination.name": message.topic,
          "messaging.message.id": message.msgId,
          ...(group ? { "messaging.consumer.group.name": group } : {}),
          "messaging.message.delivery_count": message.deliveryCount,
        },
      },
      () => handler(message),
    ),
  );
}

export type BusHandler = (message: BusMessage) => Promise<void>;

export interface Subscription {
  stop(): Promise<void>;
}

/**
 * Events between services. Topics are "<service>.v1.<event>"; the bus adds the
 * deployment's subject prefix ("payments" by default). Topic filters use NATS wildcards.
 */
export interface EventBus {
  readonly kind: "jetstream" | "in-process";
  /** Publishes once per msgId within the deduplication window; headers travel with it (NATS headers). */
  publish(topic: string, data: Uint8Array, msgId: string, headers?: BusHeaders): Promise<void>;
  /**
   * Durable, at-least-once: each message goes to one member of the named group, and comes
   * back when the handler throws. Handlers must be idempotent on msgId.
   */
  consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription>;
  /** Best-effort, from now on, to every watcher: for dropping caches. */
  watch(topics: string[], handler: BusHandler): Promise<Subscription>;
  /**
   * Whether events can travel now (readiness): the in-process bus always; JetStream once
   * connected with its stream set up, and while every durable consumer is running. A bus
   * without this method counts as usable.
   */
  isReady?(): boolean;
  /**
   * Calls `listener` each time the bus becomes usable again after being away (JetStream: the
   * first connection and every reconnect); returns the unsubscribe. The outbox relay publishes
   * at once on it. A bus without this method is never away.
   */
  onConnected?(listener: () => void): () => void;
  close(): Promise<void>;
}

/** NATS subject matching: `*` is one token, `>` the rest. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split(".");
  const t = topic.split(".");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === ">") return t.length > i;
    if (i >= t.length) return false;
    if (f[i] !== "*" && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

export { InProcessBus } from "./in-process-bus.js";
export { CONSUMER_ACK_WAIT_MS, JetStreamBus, natsAddress, type JetStreamOptions } from "./jetstream-bus.js";
