import { withRequestIdOrNone } from "./logger.js";
import { extractTraceContext, SpanKind, startDetachedSpan, withSpan } from "./tracing.js";

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

/** A message of a batch: with the trace and request id its handling goes on in. */
export interface BatchMessage extends BusMessage {
  /** The `traceparent` of this message's consumer span (store it with what it leads to); undefined when tracing is off. */
  traceparent?: string;
  /** The request id it travelled with (`x-request-id`). */
  requestId?: string;
}

/**
 * Takes in a batch at once (one transaction for all of it): all or nothing. When it throws,
 * the bus hands the messages to it again one at a time, so one bad message holds back only itself.
 */
export type BusBatchHandler = (messages: BatchMessage[]) => Promise<void>;

export interface BatchOptions {
  /** Messages handed over at once at most (default 100). */
  maxBatch?: number;
}

/** The most messages a batch handler gets at once unless told otherwise. */
export const DEFAULT_MAX_BATCH = 100;

/**
 * Runs a batch handler the way `handleTraced` runs one handler: every message gets a consumer
 * span of its own in its own trace (ended when the batch is), whose traceparent and request
 * id the handler is given per message; the handler itself runs under none of them.
 */
export async function handleTracedBatch(group: string, messages: readonly BusMessage[], handler: BusBatchHandler): Promise<void> {
  const spans = messages.map((message) => {
    const headers = message.headers ?? {};
    return startDetachedSpan(`process ${message.topic}`, {
      kind: SpanKind.CONSUMER,
      parent: extractTraceContext((key) => headers[key]),
      attributes: {
        "messaging.destination.name": message.topic,
        "messaging.message.id": message.msgId,
        "messaging.consumer.group.name": group,
        "messaging.message.delivery_count": message.deliveryCount,
        "messaging.batch.message_count": messages.length,
      },
    });
  });
  const batch = messages.map((message, i) => {
    const requestId = message.headers?.["x-request-id"];
    return { ...message, traceparent: spans[i]!.traceparent, ...(requestId ? { requestId } : {}) };
  });
  try {
    await withRequestIdOrNone(undefined, () => handler(batch));
  } catch (err) {
    for (const span of spans) span.end(err);
    throw err;
  }
  for (const span of spans) span.end();
}

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
  /**
   * `consume` for a handler that takes in many messages at once: whatever has arrived while
   * the previous batch was handled (up to `maxBatch`) goes in the next, so a quiet consumer
   * handles each message as it comes and a busy one does many per transaction. Each message
   * is acked when its batch succeeded. A batch that throws is handed over again one message
   * at a time; a message that fails alone comes back later, as with `consume`.
   */
  consumeBatches(durable: string, topics: string[], handler: BusBatchHandler, options?: BatchOptions): Promise<Subscription>;
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
