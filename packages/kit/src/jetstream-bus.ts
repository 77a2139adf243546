import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";
import {
  DEFAULT_MAX_BATCH,
  handleTraced,
  handleTracedBatch,
  type BatchOptions,
  type BusBatchHandler,
  type BusHandler,
  type BusHeaders,
  type BusMessage,
  type EventBus,
  type Subscription,
} from "./bus.js";
import { Closed, DEFAULT_PUBLISH_TIMEOUT_MS, JetStreamConnection, MAX_RETRY_MS, SECOND_NS, type JetStreamOptions } from "./jetstream-connection.js";

export { natsAddress, type JetStreamOptions } from "./jetstream-connection.js";

/** Messages a consumer asks JetStream for at a time (the client asks for more as they are handled). */
const CONSUMER_MAX_MESSAGES = 256;

/** How long JetStream waits for a consumer's ack before it hands the message out again (to any replica). */
export const CONSUMER_ACK_WAIT_MS = 30_000;

/**
 * JetStream: one stream for all events, durable pull consumers with explicit acks.
 *
 * Survives NATS being away. `open` returns at once and connects in the background, retrying
 * until NATS answers (logged once as "waiting for NATS (nats://host:port)"), then sets the
 * stream up; the client then reconnects by itself forever, and every disconnect and
 * reconnect is logged. Until connected, `publish` fails fast (the outbox keeps the rows and
 * retries; `onConnected` tells it when to try again); a publish waits for its ack at most
 * `publishTimeoutMs` and fails at once when the connection drops under it; and `consume`/`watch` return subscriptions that start once connected. A consumer
 * whose message iterator ends (its consumer deleted on the server, the stream lost) is
 * re-created with back-off. `isReady()` says whether events can travel now.
 */
export class JetStreamBus extends JetStreamConnection implements EventBus {
  readonly kind = "jetstream" as const;
  /** Durable consumers not running right now (starting, or being re-created). */
  private readonly idleConsumers = new Map<string, number>();

  private readonly publishTimeoutMs: number;

  private constructor(options: JetStreamOptions) {
    super(options);
    this.publishTimeoutMs = options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
  }

  /**
   * Connects in the background and returns at once: a service starts while NATS is down and
   * becomes ready by itself when it comes. See `whenReady`.
   */
  static open(options: JetStreamOptions): JetStreamBus {
    return new JetStreamBus(options);
  }

  /** Connects and waits for the first connection (tools and tests); fails after timeoutMs (default 10 s). */
  static async connect(options: JetStreamOptions & { timeoutMs?: number }): Promise<JetStreamBus> {
    const bus = new JetStreamBus({ ...options, logger: options.logger });
    if (!(await bus.whenReady(options.timeoutMs ?? 10_000))) {
      await bus.close();
      throw new Error(`NATS is not reachable at ${bus.address}`);
    }
    return bus;
  }

  isReady(): boolean {
    return this.connected && !this.closing && this.idleConsumers.size === 0;
  }

  /** Why isReady() is false ("ok" when it is true), for /readyz. */
  notReadyReason(): string {
    if (this.closing) return "closed";
    if (!this.connected) return `NATS not connected (${this.address})`;
    if (this.idleConsumers.size > 0) return `JetStream consumer not running: ${[...this.idleConsumers.keys()].join(", ")}`;
    return "ok";
  }

  private subject(topic: string): string {
    return `${this.prefix}.${topic}`;
  }

  private topic(subject: string): string {
    return subject.slice(this.prefix.length + 1);
  }

  /** NATS before 2.10 (Debian 12 ships 2.9) knows only one filter subject per consumer. */
  private filter(topics: string[]): { filter_subject: string } | { filter_subjects: string[] } {
    const subjects = topics.map((t) => this.subject(t));
    return subjects.length === 1 ? { filter_subject: subjects[0]! } : { filter_subjects: subjects };
  }

  async publish(topic: string, data: Uint8Array, msgId: string, headers?: BusHeaders): Promise<void> {
    // Fail fast while NATS is away: the outbox keeps the row and retries with back-off.
    if (!this.connected || !this.js) throw new Error(`NATS is not connected (${this.address})`);
    const entries = Object.entries(headers ?? {});
    let h: ReturnType<typeof natsHeaders> | undefined;
    if (entries.length > 0) {
      h = natsHeaders();
      for (const [key, value] of entries) h.set(key, value);
    }
    await this.failOnDisconnect(this.js.publish(this.subject(topic), data, { msgID: msgId, timeout: this.publishTimeoutMs, ...(h ? { headers: h } : {}) }));
  }

  private async ensureConsumer(durable: string, topics: string[]): Promise<void> {
    const jsm = this.jsm!;
    try {
      await jsm.consumers.add(this.stream, {
        durable_name: durable,
        ...this.filter(topics),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: (CONSUMER_ACK_WAIT_MS / 1000) * SECOND_NS,
        max_deliver: -1,
      });
    } catch (err) {
      await jsm.consumers.info(this.stream, durable).catch(() => {
        throw err;
      });
    }
  }

  /**
   * Runs `open` → iterate until the iterator ends, again and again (with back-off) until
   * stopped: once connected, and again whenever the iterator ends while not stopped.
   */
  private async supervise(what: { kind: string; durable?: string }, open: () => Promise<ConsumerMessages>, drain: (messages: ConsumerMessages) => Promise<void>): Promise<Subscription> {
    // Connected now: return once the first attempt is made (started, as before this could
    // wait). Not connected: return at once; it starts when NATS comes.
    let firstAttempt: () => void = () => undefined;
    const attempted = new Promise<void>((resolve) => (firstAttempt = resolve));
    const state = { stopped: false, messages: undefined as ConsumerMessages | undefined, cancel: {} as { wake?: () => void } };
    // Read through a call: `stop()` flips it while this loop awaits, which narrowing cannot see.
    const stopping = (): boolean => state.stopped || this.isClosing();
    const key = what.durable ? `${what.durable}` : undefined;
    const markIdle = (idle: boolean) => {
      if (!key) return;
      if (idle) this.idleConsumers.set(key, (this.idleConsumers.get(key) ?? 0) + 1);
      else {
        const n = (this.idleConsumers.get(key) ?? 1) - 1;
        if (n <= 0) this.idleConsumers.delete(key);
        else this.idleConsumers.set(key, n);
      }
    };
    const loop = (async () => {
      let failures = 0;
      let idle = true;
      markIdle(true);
      try {
        while (!stopping()) {
          try {
            await this.waitConnected();
            if (stopping()) break;
            state.messages = await open();
            if (stopping()) {
              await state.messages.close();
              break;
            }
            firstAttempt();
            if (failures > 0) this.logger?.info({ ...what }, `JetStream ${what.kind} re-created`);
            failures = 0;
            markIdle(false);
            idle = false;
            await drain(state.messages);
            if (stopping()) break;
            this.logger?.warn({ ...what }, `JetStream ${what.kind} ended unexpectedly; re-creating it`);
          } catch (err) {
            if (stopping() || err instanceof Closed) break;
            if (failures === 0 || failures % 10 === 0) this.logger?.warn({ err, ...what }, `JetStream ${what.kind} failed; re-creating it with back-off`);
          }
          firstAttempt();
          if (!idle) markIdle(true);
          idle = true;
          failures++;
          await this.pause(Math.min(MAX_RETRY_MS, 250 * 2 ** Math.min(failures - 1, 10)), state.cancel);
        }
      } finally {
        firstAttempt();
        if (idle) markIdle(false);
      }
    })();
    this.running.add(loop);
    if (this.connected) await attempted;
    return {
      stop: async () => {
        state.stopped = true;
        state.cancel.wake?.();
        await state.messages?.close().catch(() => undefined);
        await loop.catch(() => undefined);
        this.running.delete(loop);
      },
    };
  }

  /** The durable consumer's messages: the consumer made (or found) first. */
  private async openConsumer(durable: string, topics: string[]): Promise<ConsumerMessages> {
    await this.ensureConsumer(durable, topics);
    const consumer = await this.js!.consumers.get(this.stream, durable);
    // A deleted consumer or stream ends the iterator instead of waiting for someone else
    // to restore it: supervise() re-creates both.
    return consumer.consume({ max_messages: CONSUMER_MAX_MESSAGES, abort_on_missing_resource: true });
  }

  private busMessage(m: JsMsg): BusMessage {
    const msgId = m.headers?.get("Nats-Msg-Id") || `${this.stream}:${m.seq}`;
    return { topic: this.topic(m.subject), data: m.data, msgId, deliveryCount: m.info.deliveryCount, headers: traceHeadersOf(m) };
  }

  /** Runs `handle` for one message: acked when it succeeds, handed back with back-off when it throws. */
  private async handleOne(durable: string, m: JsMsg, handle: (message: BusMessage) => Promise<void>): Promise<void> {
    const message = this.busMessage(m);
    try {
      await handle(message);
      m.ack();
    } catch (err) {
      this.logger?.warn({ err, subject: m.subject, msgId: message.msgId, durable }, "event handler failed; redelivering");
      m.nak(Math.min(30_000, 500 * 2 ** Math.min(m.info.deliveryCount, 6)));
    }
  }

  async consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription> {
    return this.supervise(
      { kind: "consumer", durable },
      () => this.openConsumer(durable, topics),
      async (messages) => {
        for await (const m of messages) await this.handleOne(durable, m, (message) => handleTraced("consume", durable, message, handler));
      },
    );
  }

  async consumeBatches(durable: string, topics: string[], handler: BusBatchHandler, options: BatchOptions = {}): Promise<Subscription> {
    const maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH);
    const alone = (message: BusMessage) => handleTracedBatch(durable, [message], handler);
    const handleBatch = async (batch: JsMsg[]) => {
      if (batch.length === 1) return this.handleOne(durable, batch[0]!, alone);
      try {
        await handleTracedBatch(
          durable,
          batch.map((m) => this.busMessage(m)),
          handler,
        );
      } catch (err) {
        // One bad message must not hold back the rest: each goes again on its own.
        this.logger?.warn({ err, durable, messages: batch.length }, "event batch failed; handling its messages one at a time");
        for (const m of batch) await this.handleOne(durable, m, alone);
        return;
      }
      // The acks go out together (the client writes what was queued in one go).
      for (const m of batch) m.ack();
    };
    return this.supervise(
      { kind: "consumer", durable },
      () => this.openConsumer(durable, topics),
      (messages) => drainInBatches(messages, maxBatch, handleBatch),
    );
  }

  async watch(topics: string[], handler: BusHandler): Promise<Subscription> {
    const subjects = topics.map((t) => this.subject(t));
    return this.supervise(
      { kind: "watcher" },
      async () => {
        await this.ensureStream();
        const consumer = await this.js!.consumers.get(this.stream, {
          // A single string keeps to filter_subject, which NATS 2.9 understands.
          filter_subjects: subjects.length === 1 ? subjects[0]! : subjects,
          deliver_policy: DeliverPolicy.New,
        });
        return consumer.consume();
      },
      async (messages) => {
        for await (const m of messages) await this.watched(m, handler);
      },
    );
  }

  private async watched(m: JsMsg, handler: BusHandler): Promise<void> {
    await handleTraced(
      "watch",
      undefined,
      { topic: this.topic(m.subject), data: m.data, msgId: m.headers?.get("Nats-Msg-Id") ?? String(m.seq), deliveryCount: 1, headers: traceHeadersOf(m) },
      handler,
    ).catch((err: unknown) => this.logger?.warn({ err, subject: m.subject }, "watcher failed"));
  }
}

/**
 * Iterates `messages` and hands them to `handle` in batches: what arrived while the previous
 * batch was handled, up to `maxBatch`, so a batch never waits for more to come. Reading
 * stops while `maxBatch` wait (the client asks JetStream for more only as they are read), and
 * the last batch is handled before it returns.
 */
export async function drainInBatches<T>(messages: AsyncIterable<T>, maxBatch: number, handle: (batch: T[]) => Promise<void>): Promise<void> {
  const queue: T[] = [];
  let ended = false;
  const isEnded = (): boolean => ended;
  let failure: { err: unknown } | undefined;
  // Read through a call: the handling loop sets it while the reader awaits, which narrowing cannot see.
  const failed = (): { err: unknown } | undefined => failure;
  let wakeHandler: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  const handling = (async () => {
    try {
      for (;;) {
        while (queue.length === 0 && !isEnded()) await new Promise<void>((resolve) => (wakeHandler = resolve));
        if (queue.length === 0) return;
        const batch = queue.splice(0, maxBatch);
        wakeReader?.();
        await handle(batch);
      }
    } catch (err) {
      // Reading stops at its next step and throws it: the caller starts over (what was not
      // acked comes again).
      failure = { err };
      wakeReader?.();
    }
  })();
  try {
    for await (const m of messages) {
      if (failed()) throw failed()!.err;
      queue.push(m);
      wakeHandler?.();
      while (queue.length >= maxBatch && !failed()) await new Promise<void>((resolve) => (wakeReader = resolve));
      if (failed()) throw failed()!.err;
    }
  } finally {
    ended = true;
    wakeHandler?.();
    await handling;
  }
}

/** The headers of a JetStream message that say where it came from. */
function traceHeadersOf(m: JsMsg): BusHeaders {
  const out: BusHeaders = {};
  for (const key of ["traceparent", "tracestate", "x-request-id"]) {
    const value = m.headers?.get(key);
    if (value) out[key] = value;
  }
  return out;
}
