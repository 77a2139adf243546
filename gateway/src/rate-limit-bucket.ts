import { performance } from "node:perf_hooks";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { natsAddress, type Logger } from "@payments/kit";
import type { BucketState } from "./token-bucket.js";

export interface RateLimitBucketOptions {
  /** NATS_URL (one server or a comma-separated list). */
  url: string;
  /** The key-value bucket every replica shares; created when missing. */
  bucket: string;
  /** The bucket's TTL: a key nobody wrote for this long vanishes (a missing key is a full bucket). */
  ttlMs: number;
  /** A request's wait for the shared bucket: its client waits four times that (at least 250 ms). */
  timeoutMs: number;
  /** Pause before the first reconnection attempt, doubling up to 5 s. Default 250 ms. */
  retryMs?: number;
  /** The rate limits' logger (component "rate-limits"). */
  logger?: Logger;
  /** Called when the connection comes back, before the bucket is looked at again. */
  onReconnect?: () => void;
}

const MAX_RETRY_MS = 5_000;

/** A key as NATS KV accepts it: the limit's name, a dot, then the id with every byte outside [A-Za-z0-9_-] as =XX. */
export function kvKey(name: string, id: string): string {
  const escaped = Array.from(Buffer.from(id, "utf8"), (byte) => {
    const c = String.fromCharCode(byte);
    return /[A-Za-z0-9_-]/.test(c) ? c : `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
  return `${name}.${escaped || "="}`;
}

/** A key's value: its bucket's level and time. */
export function encode(state: BucketState): string {
  return `${state.level} ${state.at}`;
}

export function decode(text: string): BucketState | undefined {
  const [level, at] = text.split(" ").map(Number);
  return Number.isFinite(level) && Number.isFinite(at) ? { level: level!, at: at! } : undefined;
}

/**
 * The shared rate limits' NATS connection and key-value bucket, over their lifetime: connects
 * in the background (retrying, doubling the pause), creates the bucket when missing (history 1,
 * the TTL; a bucket made with another TTL follows the setting), looks again after a reconnect,
 * and starts over when the connection closes for good. `kv` is undefined while there is none
 * to ask.
 */
export class RateLimitBucket {
  readonly address: string;
  private nc?: NatsConnection;
  private bucketKv?: KV;
  private connected = false;
  private closing = false;
  private settingUp?: Promise<void>;
  private lastSetupAt = -Infinity;
  private readonly running = new Set<Promise<unknown>>();
  private readonly sleepers = new Set<() => void>();
  private readonly readyWaiters = new Set<() => void>();

  /** Connects in the background and returns at once. */
  constructor(private readonly options: RateLimitBucketOptions) {
    this.address = natsAddress(options.url);
    this.track(this.connectLoop());
  }

  /** The bucket, once set up (and until the connection closes). */
  get kv(): KV | undefined {
    return this.bucketKv;
  }

  /** Whether the shared bucket can be asked now. */
  isReady(): boolean {
    return this.connected && this.bucketKv !== undefined && !this.closing;
  }

  /** Resolves true once the shared bucket is ready, false after timeoutMs (start-up, tests). */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.readyWaiters.delete(onReady);
        resolve(ready);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.readyWaiters.add(onReady);
    });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.connected = false;
    for (const wake of [...this.sleepers]) wake();
    await this.nc?.close().catch(() => undefined);
    await Promise.allSettled([...this.running]);
  }

  /** Creates the bucket when missing (once at a time, at most once a second unless `force`). */
  setUp(force = false): Promise<void> {
    const nc = this.nc;
    if (!nc || this.closing || this.settingUp || (!force && performance.now() - this.lastSetupAt < 1_000)) return this.settingUp ?? Promise.resolve();
    this.lastSetupAt = performance.now();
    const { bucket, ttlMs } = this.options;
    const work = (async () => {
      try {
        // Set-up may take a while on a busy server; requests use a client whose wait is short.
        const admin = jetstream(nc, { timeout: 5_000 });
        const created = await new Kvm(admin).create(bucket, { history: 1, ttl: ttlMs });
        const status = await created.status();
        if (status.ttl !== ttlMs) {
          // RATE_LIMIT_NATS_TTL changed since the bucket was made: follow the setting.
          const jsm = await admin.jetstreamManager();
          await jsm.streams.update(status.streamInfo.config.name, { max_age: ttlMs * 1_000_000, duplicate_window: Math.min(ttlMs, 120_000) * 1_000_000 });
        }
        const fast = jetstream(nc, { timeout: Math.max(250, this.options.timeoutMs * 4) });
        const kv = await new Kvm(fast).open(bucket, { allow_direct: status.streamInfo.config.allow_direct });
        // One read first, so that the first request does not pay for the client's first use.
        await kv.get("warm-up");
        this.bucketKv = kv;
        this.options.logger?.debug({ nats: this.address, bucket }, "shared rate-limit bucket ready");
        for (const ready of [...this.readyWaiters]) ready();
      } catch (err) {
        this.options.logger?.warn({ err, nats: this.address, bucket }, "shared rate-limit bucket could not be set up; retrying on the next requests");
      } finally {
        this.settingUp = undefined;
      }
    })();
    this.settingUp = work;
    this.track(work);
    return work;
  }

  /** Read through a call, so that a check after an `await` is not narrowed by the one before it. */
  private isClosing(): boolean {
    return this.closing;
  }

  private track(work: Promise<unknown>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  private async connectLoop(): Promise<void> {
    let attempt = 0;
    while (!this.closing) {
      try {
        const nc = await connect({
          servers: this.options.url.split(",").map((s) => s.trim()),
          name: "gateway-rate-limits",
          maxReconnectAttempts: -1,
          reconnectTimeWait: 1000,
          timeout: 5000,
          // A NATS that stops answering is noticed within seconds, not minutes.
          pingInterval: 5_000,
          maxPingOut: 2,
        });
        if (this.isClosing()) {
          await nc.close().catch(() => undefined);
          return;
        }
        this.nc = nc;
        this.connected = true;
        this.watch(nc);
        await this.setUp();
        return;
      } catch (err) {
        if (this.isClosing()) return;
        attempt++;
        const reason = err instanceof Error ? err.message : String(err);
        if (attempt === 1) this.options.logger?.warn({ nats: this.address, reason }, `shared rate limits: waiting for NATS (${this.address}); the local limiter answers meanwhile`);
        await this.pause(Math.min(MAX_RETRY_MS, (this.options.retryMs ?? 250) * 2 ** Math.min(attempt - 1, 10)));
      }
    }
  }

  private watch(nc: NatsConnection): void {
    this.track(
      (async () => {
        for await (const s of nc.status()) {
          if (this.closing) break;
          if (s.type === "disconnect") this.connected = false;
          else if (s.type === "reconnect") {
            this.connected = true;
            this.options.onReconnect?.();
            void this.setUp(true);
          }
        }
      })().catch(() => undefined),
    );
    void nc.closed().then(() => {
      if (this.closing) return;
      this.connected = false;
      this.bucketKv = undefined;
      this.track(this.connectLoop());
    });
  }
}
