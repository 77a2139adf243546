import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { withRequestIdOrNone, type Logger } from "./logger.js";
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
        await handleTraced("consume", durable, { topic, data, msgId, deliveryCount, headers: { ...headers } }, handler);
        group.deliveries.delete(msgId);
      } catch (err) {
        this.logger?.warn({ err, topic, durable, msgId }, "event handler failed; the outbox will retry");
        throw err;
      }
    }
  }

  async consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription> {
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

export interface JetStreamOptions {
  url: string;
  /** Stream holding every event of this deployment. */
  stream?: string;
  /** First subject token; topics are published as "<prefix>.<topic>". */
  subjectPrefix?: string;
  name?: string;
  logger?: Logger;
  /** Pause between connection attempts before the first connection, doubling up to 5 s. Default 250 ms. */
  retryMs?: number;
}

const SECOND_NS = 1_000_000_000;
const MAX_RETRY_MS = 5_000;

/** The server part of a NATS URL, without credentials, for logs: "nats://host:port". */
export function natsAddress(url: string): string {
  return url
    .split(",")
    .map((one) => {
      try {
        const u = new URL(one.includes("://") ? one.trim() : `nats://${one.trim()}`);
        return `${u.protocol}//${u.hostname.includes(":") ? `[${u.hostname}]` : u.hostname}:${u.port || "4222"}`;
      } catch {
        return "nats://?";
      }
    })
    .join(",");
}

class Closed extends Error {
  constructor() {
    super("the event bus is closed");
  }
}

/**
 * JetStream: one stream for all events, durable pull consumers with explicit acks.
 *
 * Survives NATS being away. `open` returns at once and connects in the background, retrying
 * until NATS answers (logged once as "waiting for NATS (nats://host:port)"), then sets the
 * stream up; the client then reconnects by itself forever, and every disconnect and
 * reconnect is logged. Until connected, `publish` fails fast (the outbox keeps the rows and
 * retries) and `consume`/`watch` return subscriptions that start once connected. A consumer
 * whose message iterator ends (its consumer deleted on the server, the stream lost) is
 * re-created with back-off. `isReady()` says whether events can travel now.
 */
export class JetStreamBus implements EventBus {
  readonly kind = "jetstream" as const;
  readonly stream: string;
  readonly prefix: string;
  /** Where NATS is, without credentials. */
  readonly address: string;
  private readonly running = new Set<Promise<void>>();
  private readonly logger?: Logger;
  private nc?: NatsConnection;
  private js?: JetStreamClient;
  private jsm?: JetStreamManager;
  private connected = false;
  private closing = false;
  private waiters = new Set<{ resolve: () => void; reject: (err: Error) => void }>();
  /** Durable consumers not running right now (starting, or being re-created). */
  private readonly idleConsumers = new Map<string, number>();
  private readonly connecting: Promise<void>;
  private readonly sleepers = new Set<() => void>();

  private constructor(private readonly options: JetStreamOptions) {
    this.stream = options.stream ?? "PAYMENTS";
    this.prefix = options.subjectPrefix ?? "payments";
    this.address = natsAddress(options.url);
    this.logger = options.logger?.child({ component: "bus" });
    this.connecting = this.connectLoop();
    this.running.add(this.connecting);
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

  /** Whether connected (stream set up); false until then. */
  isConnected(): boolean {
    return this.connected && !this.closing;
  }

  /** Resolves true once connected, false after timeoutMs (or when closed). */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.isConnected()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      // Not unref()ed: a process waiting for NATS must not exit for want of anything else to do.
      this.waitConnected().then(
        () => (clearTimeout(timer), resolve(true)),
        () => (clearTimeout(timer), resolve(false)),
      );
    });
  }

  private waitConnected(): Promise<void> {
    if (this.closing) return Promise.reject(new Closed());
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.add({ resolve, reject }));
  }

  private setConnected(value: boolean): void {
    this.connected = value;
    if (value) {
      for (const w of this.waiters) w.resolve();
      this.waiters.clear();
    }
  }

  /** Pauses ms, or less when the bus closes (or `cancel.wake()` is called). */
  private pause(ms: number, cancel?: { wake?: () => void }): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      // Not unref()ed: a process waiting for NATS must not exit for want of anything else to do.
      this.sleepers.add(done);
      if (cancel) cancel.wake = done;
    });
  }

  /** First connection, retried until it works; then the stream, then status events. */
  private async connectLoop(): Promise<void> {
    let attempt = 0;
    while (!this.closing) {
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({
          servers: this.options.url.split(",").map((s) => s.trim()),
          name: this.options.name,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 1000,
          timeout: 5000,
        });
        if (this.closing) {
          await nc.close().catch(() => undefined);
          return;
        }
        this.nc = nc;
        this.jsm = await jetstreamManager(nc);
        this.js = jetstream(nc);
        await this.ensureStream();
        this.watchStatus(nc);
        this.setConnected(true);
        if (attempt > 0) this.logger?.info({ nats: this.address }, `NATS connected (${this.address})`);
        else this.logger?.debug({ nats: this.address }, `NATS connected (${this.address})`);
        return;
      } catch (err) {
        if (nc) await nc.close().catch(() => undefined);
        this.nc = undefined;
        if (this.closing) return;
        attempt++;
        const reason = (err as Error)?.message ?? String(err);
        if (attempt === 1) this.logger?.warn({ nats: this.address, reason }, `waiting for NATS (${this.address}): ${reason}; retrying until it answers`);
        else this.logger?.debug({ nats: this.address, reason, attempt }, `still waiting for NATS (${this.address})`);
        await this.pause(Math.min(MAX_RETRY_MS, (this.options.retryMs ?? 250) * 2 ** Math.min(attempt - 1, 10)));
      }
    }
  }

  /** Logs disconnects and reconnects; readiness follows them. A connection closed under us starts over. */
  private watchStatus(nc: NatsConnection): void {
    const statusLoop = (async () => {
      for await (const s of nc.status()) {
        if (this.closing) break;
        if (s.type === "disconnect") {
          this.connected = false;
          this.logger?.warn({ nats: this.address, server: s.server }, `NATS disconnected (${this.address})`);
        } else if (s.type === "reconnect") {
          this.logger?.info({ nats: this.address, server: s.server }, `NATS reconnected (${this.address})`);
          // The server may have come back without the stream (a new store): set it up again.
          try {
            await this.ensureStream();
            this.setConnected(true);
          } catch (err) {
            this.logger?.error({ err, nats: this.address, stream: this.stream }, "JetStream stream set-up failed after reconnecting");
            // Retry shortly; the status iterator gives no further event while connected.
            void this.retryStreamSetup(nc);
          }
        } else if (s.type === "error") {
          this.logger?.warn({ nats: this.address, err: s.error }, "NATS error");
        }
      }
    })().catch(() => undefined);
    this.running.add(statusLoop);
    void nc.closed().then((err) => {
      if (this.closing) return;
      this.connected = false;
      this.logger?.error({ nats: this.address, err }, `NATS connection closed (${this.address}); connecting again`);
      const again = this.connectLoop();
      this.running.add(again);
    });
  }

  private async retryStreamSetup(nc: NatsConnection): Promise<void> {
    let attempt = 0;
    while (!this.closing && this.nc === nc && !this.connected) {
      await this.pause(Math.min(MAX_RETRY_MS, 500 * 2 ** attempt++));
      try {
        await this.ensureStream();
        this.setConnected(true);
        this.logger?.info({ stream: this.stream }, "JetStream stream set up again");
      } catch {
        // next round
      }
    }
  }

  /** Stream set-up, kept apart from publishing and consuming. */
  private async ensureStream(): Promise<void> {
    const jsm = this.jsm!;
    const config = {
      name: this.stream,
      subjects: [`${this.prefix}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: 14 * 24 * 3600 * SECOND_NS,
      duplicate_window: 10 * 60 * SECOND_NS,
    };
    try {
      await jsm.streams.info(this.stream);
    } catch {
      try {
        await jsm.streams.add(config);
      } catch (err) {
        // Another replica may have created it in between.
        await jsm.streams.info(this.stream).catch(() => {
          throw err;
        });
      }
    }
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
    await this.js.publish(this.subject(topic), data, { msgID: msgId, ...(h ? { headers: h } : {}) });
  }

  private async ensureConsumer(durable: string, topics: string[]): Promise<void> {
    const jsm = this.jsm!;
    try {
      await jsm.consumers.add(this.stream, {
        durable_name: durable,
        ...this.filter(topics),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30 * SECOND_NS,
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
  private async supervise(what: { kind: string; durable?: string }, open: () => Promise<ConsumerMessages>, each: (m: JsMsg) => Promise<void>): Promise<Subscription> {
    // Connected now: return once the first attempt is made (started, as before this could
    // wait). Not connected: return at once; it starts when NATS comes.
    let firstAttempt: () => void = () => undefined;
    const attempted = new Promise<void>((resolve) => (firstAttempt = resolve));
    const state = { stopped: false, messages: undefined as ConsumerMessages | undefined, cancel: {} as { wake?: () => void } };
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
        while (!state.stopped && !this.closing) {
          try {
            await this.waitConnected();
            if (state.stopped) break;
            state.messages = await open();
            if (state.stopped) {
              await state.messages.close();
              break;
            }
            firstAttempt();
            if (failures > 0) this.logger?.info({ ...what }, `JetStream ${what.kind} re-created`);
            failures = 0;
            if (idle) markIdle(false);
            idle = false;
            for await (const m of state.messages) await each(m);
            if (state.stopped || this.closing) break;
            this.logger?.warn({ ...what }, `JetStream ${what.kind} ended unexpectedly; re-creating it`);
          } catch (err) {
            if (state.stopped || this.closing || err instanceof Closed) break;
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

  async consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription> {
    return this.supervise(
      { kind: "consumer", durable },
      async () => {
        await this.ensureConsumer(durable, topics);
        const consumer = await this.js!.consumers.get(this.stream, durable);
        // A deleted consumer or stream ends the iterator instead of waiting for someone else
        // to restore it: supervise() re-creates both.
        return consumer.consume({ max_messages: 64, abort_on_missing_resource: true });
      },
      async (m) => {
        const msgId = m.headers?.get("Nats-Msg-Id") || `${this.stream}:${m.seq}`;
        try {
          await handleTraced("consume", durable, { topic: this.topic(m.subject), data: m.data, msgId, deliveryCount: m.info.deliveryCount, headers: traceHeadersOf(m) }, handler);
          m.ack();
        } catch (err) {
          this.logger?.warn({ err, subject: m.subject, msgId, durable }, "event handler failed; redelivering");
          m.nak(Math.min(30_000, 500 * 2 ** Math.min(m.info.deliveryCount, 6)));
        }
      },
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
      async (m) => {
        await handleTraced(
          "watch",
          undefined,
          { topic: this.topic(m.subject), data: m.data, msgId: m.headers?.get("Nats-Msg-Id") ?? String(m.seq), deliveryCount: 1, headers: traceHeadersOf(m) },
          handler,
        ).catch(
          (err: unknown) => this.logger?.warn({ err, subject: m.subject }, "watcher failed"),
        );
      },
    );
  }

  /** For tests and tools: the JetStream manager, once connected. */
  async manager(): Promise<JetStreamManager> {
    await this.waitConnected();
    return this.jsm!;
  }

  /** For tests: removes this deployment's stream. */
  async deleteStream(): Promise<void> {
    await this.waitConnected().catch(() => undefined);
    await this.jsm?.streams.delete(this.stream).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.connected = false;
    for (const w of this.waiters) w.reject(new Closed());
    this.waiters.clear();
    for (const wake of [...this.sleepers]) wake();
    await this.nc?.drain().catch(() => undefined);
    await Promise.allSettled([...this.running]);
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
