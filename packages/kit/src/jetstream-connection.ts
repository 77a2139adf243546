import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import type { Logger } from "./logger.js";

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
  /**
   * Pause between the client's attempts to reconnect after losing NATS (plus up to 100 ms of
   * jitter). Default 250 ms: NATS that comes back is found again within about that.
   */
  reconnectWaitMs?: number;
  /**
   * How long a publish waits for JetStream's ack before it fails (the client's default is
   * 5 s). Default 2000 ms. A publish under way when the connection drops fails at once anyway.
   */
  publishTimeoutMs?: number;
}

export const DEFAULT_RECONNECT_WAIT_MS = 250;
export const DEFAULT_PUBLISH_TIMEOUT_MS = 2_000;

export const SECOND_NS = 1_000_000_000;
export const MAX_RETRY_MS = 5_000;

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

export class Closed extends Error {
  constructor() {
    super("the event bus is closed");
  }
}

/**
 * The connection half of JetStreamBus: the first connection, retried until NATS answers;
 * the stream set up (again after a reconnect); disconnects and reconnects logged and
 * followed; waiting for the connection, pauses that end when the bus closes, and closing.
 * Publishing and consuming are JetStreamBus's (jetstream-bus.ts).
 */
export abstract class JetStreamConnection {
  readonly stream: string;
  readonly prefix: string;
  /** Where NATS is, without credentials. */
  readonly address: string;
  protected readonly running = new Set<Promise<void>>();
  protected readonly logger?: Logger;
  private nc?: NatsConnection;
  protected js?: JetStreamClient;
  protected jsm?: JetStreamManager;
  protected connected = false;
  protected closing = false;
  /** Read through a call so that a check after an `await` is not narrowed by the one before it. */
  protected isClosing(): boolean {
    return this.closing;
  }
  private waiters = new Set<{ resolve: () => void; reject: (err: Error) => void }>();
  /** Told each time the bus becomes usable: the first connection, and every reconnect. */
  private readonly connectedListeners = new Set<() => void>();
  /** Failers of the publishes under way, called when the connection drops. */
  private readonly onDisconnect = new Set<(err: Error) => void>();
  private readonly connecting: Promise<void>;
  private readonly sleepers = new Set<() => void>();

  protected constructor(private readonly options: JetStreamOptions) {
    this.stream = options.stream ?? "PAYMENTS";
    this.prefix = options.subjectPrefix ?? "payments";
    this.address = natsAddress(options.url);
    this.logger = options.logger?.child({ component: "bus" });
    this.connecting = this.connectLoop();
    this.running.add(this.connecting);
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

  protected waitConnected(): Promise<void> {
    if (this.closing) return Promise.reject(new Closed());
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.add({ resolve, reject }));
  }

  /**
   * Calls `listener` each time the bus becomes usable again (connected with its stream set up):
   * the first connection and every reconnect. Returns the unsubscribe. The outbox relay uses it
   * to publish at once instead of sleeping out its back-off.
   */
  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener);
    return () => void this.connectedListeners.delete(listener);
  }

  private setConnected(value: boolean): void {
    const was = this.connected;
    this.connected = value;
    if (value) {
      for (const w of this.waiters) w.resolve();
      this.waiters.clear();
      if (!was && !this.closing) {
        for (const listener of [...this.connectedListeners]) {
          try {
            listener();
          } catch (err) {
            this.logger?.warn({ err }, "a NATS connected listener failed");
          }
        }
      }
    }
  }

  /** The connection dropped: readiness goes, and every publish waiting for an ack fails now. */
  private setDisconnected(): void {
    this.connected = false;
    const err = new Error(`NATS disconnected (${this.address})`);
    for (const fail of [...this.onDisconnect]) fail(err);
    this.onDisconnect.clear();
  }

  /**
   * `work` (a publish), failed at once if the connection drops before it settles: its ack
   * would never come, and waiting out the timeout would hold the outbox back after NATS is back.
   */
  protected failOnDisconnect<T>(work: Promise<T>): Promise<T> {
    let fail: ((err: Error) => void) | undefined;
    const dropped = new Promise<never>((_, reject) => {
      fail = reject;
    });
    this.onDisconnect.add(fail!);
    // The abandoned publish still settles (by its timeout): nobody waits for it.
    work.catch(() => undefined);
    return Promise.race([work, dropped]).finally(() => this.onDisconnect.delete(fail!));
  }

  /** Pauses ms, or less when the bus closes (or `cancel.wake()` is called). */
  protected pause(ms: number, cancel?: { wake?: () => void }): Promise<void> {
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
          reconnectTimeWait: this.options.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS,
          timeout: 5000,
        });
        if (this.isClosing()) {
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
        if (this.isClosing()) return;
        attempt++;
        const reason = err instanceof Error ? err.message : String(err);
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
          this.setDisconnected();
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
      this.setDisconnected();
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
  protected async ensureStream(): Promise<void> {
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
    const wasConnected = this.connected;
    this.setDisconnected();
    this.connectedListeners.clear();
    for (const w of this.waiters) w.reject(new Closed());
    this.waiters.clear();
    for (const wake of [...this.sleepers]) wake();
    const nc = this.nc;
    if (nc && !nc.isClosed()) {
      // Drained when connected (for at most DRAIN_LIMIT_MS), closed in any case: a drain while
      // NATS is away waits for a reconnection that may never come, or gives up without closing,
      // and the client's reconnect loop would keep a stopped process alive for ever.
      if (wasConnected) await boundedDrain(nc);
      if (!nc.isClosed()) await nc.close().catch(() => undefined);
    }
    await Promise.allSettled([...this.running]);
  }
}

/** How long closing waits for the connection's drain before it closes it anyway. */
const DRAIN_LIMIT_MS = 2_000;

async function boundedDrain(nc: NatsConnection): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_LIMIT_MS)));
  await Promise.race([nc.drain().catch(() => undefined), limit]);
  clearTimeout(timer);
}
