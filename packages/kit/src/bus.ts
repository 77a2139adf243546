import { connect, type NatsConnection } from "@nats-io/transport-node";
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
import type { Logger } from "./logger.js";

export interface BusMessage {
  /** The topic without the deployment prefix, e.g. "merchant.v1.merchant_changed". */
  topic: string;
  data: Uint8Array;
  /** The outbox event id; the same on every redelivery. */
  msgId: string;
  /** 1 on first delivery. */
  deliveryCount: number;
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
  /** Publishes once per msgId within the deduplication window. */
  publish(topic: string, data: Uint8Array, msgId: string): Promise<void>;
  /**
   * Durable, at-least-once: each message goes to one member of the named group, and comes
   * back when the handler throws. Handlers must be idempotent on msgId.
   */
  consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription>;
  /** Best-effort, from now on, to every watcher: for dropping caches. */
  watch(topics: string[], handler: BusHandler): Promise<Subscription>;
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

  async publish(topic: string, data: Uint8Array, msgId: string): Promise<void> {
    for (const watcher of this.watchers) {
      if (watcher.topics.some((f) => topicMatches(f, topic))) {
        watcher.handler({ topic, data, msgId, deliveryCount: 1 }).catch((err: unknown) => this.logger?.warn({ err, topic }, "watcher failed"));
      }
    }
    for (const [durable, group] of this.groups) {
      if (group.handlers.length === 0 || !group.topics.some((f) => topicMatches(f, topic))) continue;
      const handler = group.handlers[group.next++ % group.handlers.length]!;
      const deliveryCount = (group.deliveries.get(msgId) ?? 0) + 1;
      group.deliveries.set(msgId, deliveryCount);
      try {
        await handler({ topic, data, msgId, deliveryCount });
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
}

const SECOND_NS = 1_000_000_000;

/** JetStream: one stream for all events, durable pull consumers with explicit acks. */
export class JetStreamBus implements EventBus {
  readonly kind = "jetstream" as const;
  private readonly running = new Set<Promise<void>>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly stream: string,
    readonly prefix: string,
    private readonly logger?: Logger,
  ) {}

  static async connect(options: JetStreamOptions): Promise<JetStreamBus> {
    const nc = await connect({
      servers: options.url,
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
    });
    const jsm = await jetstreamManager(nc);
    const bus = new JetStreamBus(nc, jetstream(nc), jsm, options.stream ?? "PAYMENTS", options.subjectPrefix ?? "payments", options.logger);
    await bus.ensureStream();
    return bus;
  }

  /** Stream set-up, kept apart from publishing and consuming. */
  private async ensureStream(): Promise<void> {
    const config = {
      name: this.stream,
      subjects: [`${this.prefix}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: 14 * 24 * 3600 * SECOND_NS,
      duplicate_window: 10 * 60 * SECOND_NS,
    };
    try {
      await this.jsm.streams.info(this.stream);
    } catch {
      try {
        await this.jsm.streams.add(config);
      } catch (err) {
        // Another replica may have created it in between.
        await this.jsm.streams.info(this.stream).catch(() => {
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

  async publish(topic: string, data: Uint8Array, msgId: string): Promise<void> {
    await this.js.publish(this.subject(topic), data, { msgID: msgId });
  }

  async consume(durable: string, topics: string[], handler: BusHandler): Promise<Subscription> {
    try {
      await this.jsm.consumers.add(this.stream, {
        durable_name: durable,
        ...this.filter(topics),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: 30 * SECOND_NS,
        max_deliver: -1,
      });
    } catch (err) {
      await this.jsm.consumers.info(this.stream, durable).catch(() => {
        throw err;
      });
    }
    const consumer = await this.js.consumers.get(this.stream, durable);
    const messages = await consumer.consume({ max_messages: 64 });
    const loop = (async () => {
      for await (const m of messages) {
        const msgId = m.headers?.get("Nats-Msg-Id") || `${this.stream}:${m.seq}`;
        try {
          await handler({ topic: this.topic(m.subject), data: m.data, msgId, deliveryCount: m.info.deliveryCount });
          m.ack();
        } catch (err) {
          this.logger?.warn({ err, subject: m.subject, msgId, durable }, "event handler failed; redelivering");
          m.nak(Math.min(30_000, 500 * 2 ** Math.min(m.info.deliveryCount, 6)));
        }
      }
    })();
    this.running.add(loop);
    const stop = async () => {
      await messages.close();
      await loop.catch(() => undefined);
      this.running.delete(loop);
    };
    return { stop };
  }

  async watch(topics: string[], handler: BusHandler): Promise<Subscription> {
    const subjects = topics.map((t) => this.subject(t));
    const consumer = await this.js.consumers.get(this.stream, {
      // A single string keeps to filter_subject, which NATS 2.9 understands.
      filter_subjects: subjects.length === 1 ? subjects[0]! : subjects,
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    const loop = (async () => {
      for await (const m of messages) {
        await handler({ topic: this.topic(m.subject), data: m.data, msgId: m.headers?.get("Nats-Msg-Id") ?? String(m.seq), deliveryCount: 1 }).catch(
          (err: unknown) => this.logger?.warn({ err, subject: m.subject }, "watcher failed"),
        );
      }
    })();
    this.running.add(loop);
    return {
      stop: async () => {
        await messages.close();
        await loop.catch(() => undefined);
        this.running.delete(loop);
      },
    };
  }

  /** For tests: removes this deployment's stream. */
  async deleteStream(): Promise<void> {
    await this.jsm.streams.delete(this.stream).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => undefined);
    await Promise.allSettled([...this.running]);
  }
}
