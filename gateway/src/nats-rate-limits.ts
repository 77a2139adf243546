import { performance } from "node:perf_hooks";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { natsAddress, type Clock, type Logger, type Metrics } from "@payments/kit";
import type { RateLimiter, RateLimitStore } from "./rate-limit-store.js";
import { DEFAULT_MAX_KEYS, refill, TokenBuckets, UNIT, waitMs, type BucketLimit, type BucketState, type Take } from "./token-bucket.js";

export interface NatsRateLimitsOptions {
  /** NATS_URL (one server or a comma-separated list). */
  url: string;
  /** The key-value bucket every replica shares; created when missing. */
  bucket: string;
  /** The bucket's TTL: a key nobody wrote for this long vanishes (a missing key is a full bucket). */
  ttlMs: number;
  /** The most a request waits for the shared bucket before the local limiter answers it. */
  timeoutMs: number;
  clock: Clock;
  /** Keys each limit keeps at most in this process (its leases, and its local fallback limiter). */
  maxKeys?: number;
  /**
   * How long tokens taken ahead from the shared bucket may serve this gateway's next requests
   * of a key (0: none, a round trip per request). Over-admission is at most rate · leaseMs.
   */
  leaseMs?: number;
  logger?: Logger;
  metrics?: Metrics;
  /** Pause before the first reconnection attempt, doubling up to 5 s. Default 250 ms. */
  retryMs?: number;
}

/** After this many failed round trips in a row the store is skipped for OPEN_MS: a stalled NATS then costs a request nothing. */
const FAILURES_TO_OPEN = 3;
const OPEN_MS = 1_000;
/** Most compare-and-set attempts for one batch (the time bound usually ends it first). */
const MAX_ATTEMPTS = 20;
const MAX_RETRY_MS = 5_000;

/** What the shared bucket gave: tokens, and the wait after them, as of clock time `at`. */
type Shared = { granted: number; retryAfterMs: number; at: number } | { failed: FallbackReason };
type FallbackReason = "unreachable" | "timeout" | "error";

interface Waiter {
  resolve(take: Take): void;
  /** performance.now() by which it must be answered. */
  deadline: number;
}

/** A key as NATS KV accepts it: the limit's name, a dot, then the id with every byte outside [A-Za-z0-9_-] as =XX. */
export function kvKey(name: string, id: string): string {
  const escaped = Array.from(Buffer.from(id, "utf8"), (byte) => {
    const c = String.fromCharCode(byte);
    return /[A-Za-z0-9_-]/.test(c) ? c : `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }).join("");
  return `${name}.${escaped || "="}`;
}

function encode(state: BucketState): string {
  return `${state.level} ${state.at}`;
}

function decode(text: string): BucketState | undefined {
  const [level, at] = text.split(" ").map(Number);
  return Number.isFinite(level) && Number.isFinite(at) ? { level: level!, at: at! } : undefined;
}

function isConflict(err: unknown): boolean {
  return err instanceof JetStreamApiError && (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

/**
 * The gateway's rate limits in a NATS JetStream key-value bucket that every replica shares,
 * so that N gateways together admit what one would: at most `burst + rate · t` of a key in
 * any t seconds, `burst + rate · (t + leaseMs)` with leases (SharedLimiter), up to the
 * replicas' clock skew (gateway/README.md, "Rate limits across replicas").
 *
 * A key holds its bucket's level and time. A request reads it, refills it by the time since,
 * spends, and writes it back on the condition that its revision has not changed (compare
 * and set); on a conflict it reads again. Requests for the same key that arrive while one
 * round trip is under way wait for it and then go together, one read and one write for all
 * of them, so a gateway never races itself. A refused request writes nothing.
 *
 * Never a stall: a request waits at most `timeoutMs` for the shared bucket; then, or at once
 * while NATS is disconnected or has just failed several times in a row, a local in-memory
 * limiter of the same limits answers it (per replica, as before), counted in
 * payments_gateway_rate_limit_fallbacks_total and logged when it starts and when it ends.
 */
export class NatsRateLimits implements RateLimitStore {
  readonly kind = "nats" as const;
  readonly address: string;
  private nc?: NatsConnection;
  private kv?: KV;
  private connected = false;
  private closing = false;
  private settingUp?: Promise<void>;
  private lastSetupAt = -Infinity;
  private failuresInARow = 0;
  private openUntil = -Infinity;
  private degraded = false;
  private readonly running = new Set<Promise<unknown>>();
  private readonly sleepers = new Set<() => void>();
  private readonly readyWaiters = new Set<() => void>();
  private readonly logger?: Logger;
  private readonly fallbacks?: ReturnType<Metrics["counter"]>;
  private readonly conflicts?: ReturnType<Metrics["counter"]>;

  private constructor(private readonly options: NatsRateLimitsOptions) {
    this.address = natsAddress(options.url);
    this.logger = options.logger?.child({ component: "rate-limits" });
    this.fallbacks = options.metrics?.counter(
      "gateway_rate_limit_fallbacks_total",
      "Requests a gateway's local limiter answered because the shared rate-limit bucket (NATS) did not answer in time, by limit and reason",
      ["limiter", "reason"],
    );
    this.conflicts = options.metrics?.counter("gateway_rate_limit_conflicts_total", "Compare-and-set conflicts on the shared rate-limit bucket (another replica wrote first), by limit", ["limiter"]);
    this.track(this.connectLoop());
  }

  /** Connects in the background and returns at once: until NATS answers, the local limiter answers. */
  static open(options: NatsRateLimitsOptions): NatsRateLimits {
    return new NatsRateLimits(options);
  }

  /** Whether the shared bucket can be asked now. */
  isReady(): boolean {
    return this.connected && this.kv !== undefined && !this.closing;
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

  limiter(name: string): RateLimiter {
    const maxKeys = this.options.maxKeys ?? DEFAULT_MAX_KEYS;
    return new SharedLimiter(this, name, new TokenBuckets({ clock: this.options.clock, maxKeys }), this.options.leaseMs ?? 0, maxKeys);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.connected = false;
    for (const wake of [...this.sleepers]) wake();
    await this.nc?.close().catch(() => undefined);
    await Promise.allSettled([...this.running]);
  }

  // ------------------------------------------------------------------ the shared bucket

  /** Why the shared bucket cannot be asked right now, if it cannot. */
  unavailable(): FallbackReason | undefined {
    if (!this.isReady()) {
      void this.setUp();
      return "unreachable";
    }
    if (performance.now() < this.openUntil) return "unreachable";
    return undefined;
  }

  /** Spends up to `n` tokens of `key`; within `budgetMs`, or it fails with "timeout". */
  async sharedTake(limiter: string, key: string, limit: BucketLimit, n: number, budgetMs: number): Promise<Shared> {
    const kv = this.kv;
    if (!kv || budgetMs <= 0) return { failed: budgetMs <= 0 ? "timeout" : "unreachable" };
    const state = { abandoned: false };
    // Read through a call: the timer flips it while this awaits, which narrowing cannot see.
    const abandoned = () => state.abandoned;
    const deadline = performance.now() + budgetMs;
    const work = async (): Promise<Shared> => {
      for (let attempt = 1; ; attempt++) {
        const entry = await kv.get(key);
        if (abandoned()) return { failed: "timeout" };
        const stored = entry && entry.operation === "PUT" ? decode(entry.string()) : undefined;
        const now = this.options.clock.now().getTime();
        const { level, at } = refill(stored, limit, now);
        const granted = Math.min(n, Math.floor(level / UNIT));
        const after = level - granted * UNIT;
        const retryAfterMs = after >= UNIT ? 0 : waitMs(after, limit);
        // Refused: nothing to write (the refill is recomputed by whoever reads next).
        if (granted === 0) return { granted, retryAfterMs, at: now };
        try {
          await kv.put(key, encode({ level: after, at }), { previousSeq: entry?.revision ?? 0, timeout: Math.max(1, Math.ceil(deadline - performance.now())) });
          return { granted, retryAfterMs, at: now };
        } catch (err) {
          if (!isConflict(err) || attempt >= MAX_ATTEMPTS || abandoned()) throw err;
          this.conflicts?.inc({ limiter });
        }
      }
    };
    return this.bounded(work, budgetMs, state);
  }

  /** How long until `key` has a token, within `budgetMs`. */
  async sharedWait(key: string, limit: BucketLimit, budgetMs: number): Promise<{ waitMs: number; at: number } | { failed: FallbackReason }> {
    const kv = this.kv;
    if (!kv) return { failed: "unreachable" };
    const state = { abandoned: false };
    return this.bounded(
      async () => {
        const entry = await kv.get(key);
        const stored = entry && entry.operation === "PUT" ? decode(entry.string()) : undefined;
        const now = this.options.clock.now().getTime();
        const { level } = refill(stored, limit, now);
        return { waitMs: level >= UNIT ? 0 : waitMs(level, limit), at: now };
      },
      budgetMs,
      state,
    );
  }

  private async bounded<T>(work: () => Promise<T>, budgetMs: number, state: { abandoned: boolean }): Promise<T | { failed: FallbackReason }> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<{ failed: FallbackReason }>((resolve) => {
      // Declared after the event loop's next poll: an answer already in the socket, behind a
      // busy stretch of this process, is read first (timers run before I/O in Node's loop).
      timer = setTimeout(() => {
        setImmediate(() => {
          state.abandoned = true;
          resolve({ failed: "timeout" });
        });
      }, budgetMs);
    });
    const answer = await Promise.race([
      work().catch((err: unknown): { failed: FallbackReason } => {
        this.logger?.debug({ err }, "shared rate-limit bucket failed");
        return { failed: "error" };
      }),
      timedOut,
    ]);
    clearTimeout(timer);
    if (typeof answer === "object" && answer !== null && "failed" in answer) this.failed();
    else this.succeeded();
    return answer;
  }

  private succeeded(): void {
    this.failuresInARow = 0;
    if (this.degraded) {
      this.degraded = false;
      this.logger?.info({ nats: this.address, bucket: this.options.bucket }, "shared rate limits answer again; every replica counts in one bucket");
    }
  }

  private failed(): void {
    // The bucket may be gone (a NATS with a new store answers "jetstream is not enabled" or not
    // at all): look, and make it again if so (at most once a second).
    void this.setUp();
    if (++this.failuresInARow >= FAILURES_TO_OPEN) {
      this.failuresInARow = 0;
      this.openUntil = performance.now() + OPEN_MS;
    }
  }

  /** A request the local limiter answered: counted, and logged once per outage. */
  fellBack(limiter: string, reason: FallbackReason): void {
    this.fallbacks?.inc({ limiter, reason });
    if (!this.degraded) {
      this.degraded = true;
      this.logger?.warn(
        { nats: this.address, bucket: this.options.bucket, reason, timeoutMs: this.options.timeoutMs },
        "shared rate limits unavailable; each gateway limits on its own until NATS answers (payments_gateway_rate_limit_fallbacks_total counts the requests)",
      );
    }
  }

  // ------------------------------------------------------------------ connection and bucket

  /** Read through a call, so that a check after an `await` is not narrowed by the one before it. */
  private isClosing(): boolean {
    return this.closing;
  }

  /** The clock's milliseconds. */
  now(): number {
    return this.options.clock.now().getTime();
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
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
        if (attempt === 1) this.logger?.warn({ nats: this.address, reason }, `shared rate limits: waiting for NATS (${this.address}); the local limiter answers meanwhile`);
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
            this.openUntil = -Infinity;
            void this.setUp(true);
          }
        }
      })().catch(() => undefined),
    );
    void nc.closed().then(() => {
      if (this.closing) return;
      this.connected = false;
      this.kv = undefined;
      this.track(this.connectLoop());
    });
  }

  /** Creates the bucket when missing (once at a time, at most once a second unless `force`). */
  private setUp(force = false): Promise<void> {
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
        this.kv = kv;
        this.logger?.debug({ nats: this.address, bucket }, "shared rate-limit bucket ready");
        for (const ready of [...this.readyWaiters]) ready();
      } catch (err) {
        this.logger?.warn({ err, nats: this.address, bucket }, "shared rate-limit bucket could not be set up; retrying on the next requests");
      } finally {
        this.settingUp = undefined;
      }
    })();
    this.settingUp = work;
    this.track(work);
    return work;
  }
}

/** What one gateway knows of one key of the shared bucket. */
interface Local {
  /** Tokens this gateway took from the shared bucket ahead of its requests (a lease), usable until `leaseUntil`. */
  tokens: number;
  leaseUntil: number;
  /** Requests served since the last round trip: the size of the next lease. */
  served: number;
  /** The shared bucket had less than a token at a time from which refill needs until then: exact, since only time adds tokens. */
  emptyUntil: number;
  /** The shared bucket had a token at most `leaseMs` ago (the failed-authentication check may pass without asking). */
  availableUntil: number;
  waiting: Waiter[];
  running: boolean;
}

/**
 * One limit's buckets in the shared store, with a local limiter for when it does not answer.
 *
 * Leases (`leaseMs` > 0): a round trip for a key also takes, when the shared bucket has them,
 * as many tokens as this gateway served of that key since its previous round trip (at most a
 * quarter of the burst), and serves the key's next requests from them without asking, for
 * up to `leaseMs`; tokens left then are dropped. A token is spent at most `leaseMs` after
 * the shared bucket gave it, so in any t seconds at most `burst + rate · (t + leaseMs)` of a
 * key pass across all replicas. A key used by one request now and then costs a round trip
 * per request, exactly as without leases; a busy key, about one per `leaseMs`.
 */
class SharedLimiter implements RateLimiter {
  private readonly keys = new Map<string, Local>();

  constructor(
    private readonly store: NatsRateLimits,
    private readonly name: string,
    private readonly fallback: TokenBuckets,
    private readonly leaseMs: number,
    private readonly maxKeys: number,
  ) {}

  take(id: string, limit: BucketLimit): Promise<Take> {
    const local = this.local(id, limit);
    const now = this.store.now();
    const known = this.fromLease(local, now);
    if (known) return Promise.resolve(known);
    const reason = this.store.unavailable();
    if (reason) return Promise.resolve(this.fallbackTake(id, limit, reason));
    return new Promise((resolve) => {
      local.waiting.push({ resolve, deadline: performance.now() + this.store.timeoutMs });
      if (!local.running) void this.drain(local, id, limit);
    });
  }

  async waitMs(id: string, limit: BucketLimit): Promise<number> {
    const local = this.local(id, limit);
    const now = this.store.now();
    if (now < local.emptyUntil) return local.emptyUntil - now;
    if ((local.tokens > 0 && now < local.leaseUntil) || now < local.availableUntil) return 0;
    const reason = this.store.unavailable();
    if (reason) return this.fallbackWait(id, limit, reason);
    const answer = await this.store.sharedWait(kvKey(this.name, id), limit, this.store.timeoutMs);
    if ("failed" in answer) return this.fallbackWait(id, limit, answer.failed);
    if (answer.waitMs > 0) local.emptyUntil = Math.max(local.emptyUntil, answer.at + answer.waitMs);
    else local.availableUntil = answer.at + this.leaseMs;
    return answer.waitMs;
  }

  /** The key's state, most recently used last; the least recently used beyond maxKeys are forgotten (their leases dropped). */
  private local(id: string, limit: BucketLimit): Local {
    const mapKey = `${id} ${limit.perSecond} ${limit.burst}`;
    let local = this.keys.get(mapKey);
    if (local) {
      this.keys.delete(mapKey);
    } else {
      local = { tokens: 0, leaseUntil: 0, served: 0, emptyUntil: 0, availableUntil: 0, waiting: [], running: false };
      for (const [oldKey, old] of this.keys) {
        if (this.keys.size < this.maxKeys) break;
        if (!old.running) this.keys.delete(oldKey);
      }
    }
    this.keys.set(mapKey, local);
    return local;
  }

  /** An answer without a round trip: a leased token, or a bucket known to be empty. */
  private fromLease(local: Local, now: number): Take | undefined {
    if (local.tokens > 0 && now < local.leaseUntil) {
      local.tokens--;
      local.served++;
      return { allowed: true };
    }
    if (now < local.emptyUntil) return { allowed: false, retryAfterMs: local.emptyUntil - now };
    return undefined;
  }

  /** One round trip at a time per key: those that arrive meanwhile are served from its lease, or go together in the next. */
  private async drain(local: Local, id: string, limit: BucketLimit): Promise<void> {
    local.running = true;
    try {
      while (local.waiting.length > 0) {
        const now = this.store.now();
        while (local.waiting.length > 0) {
          const known = this.fromLease(local, now);
          if (!known) break;
          local.waiting.shift()!.resolve(known);
        }
        if (local.waiting.length === 0) break;
        const batch = local.waiting.splice(0);
        const budget = Math.min(...batch.map((w) => w.deadline)) - performance.now();
        const extra = this.leaseMs > 0 ? Math.min(local.served, Math.floor(Math.max(1, limit.burst) / 4)) : 0;
        const reason = this.store.unavailable();
        const answer: Shared = reason ? { failed: reason } : await this.store.sharedTake(this.name, kvKey(this.name, id), limit, batch.length + extra, Math.floor(budget));
        if ("failed" in answer) {
          for (const waiter of batch) waiter.resolve(this.fallbackTake(id, limit, answer.failed));
          continue;
        }
        const served = Math.min(answer.granted, batch.length);
        batch.forEach((waiter, i) => waiter.resolve(i < served ? { allowed: true } : { allowed: false, retryAfterMs: answer.retryAfterMs }));
        local.tokens = answer.granted - served;
        local.leaseUntil = answer.at + this.leaseMs;
        local.served = served;
        if (answer.retryAfterMs > 0) {
          local.emptyUntil = answer.at + answer.retryAfterMs;
          local.availableUntil = 0;
        }
      }
    } finally {
      local.running = false;
    }
  }

  private fallbackTake(id: string, limit: BucketLimit, reason: FallbackReason): Take {
    this.store.fellBack(this.name, reason);
    return this.fallback.take(id, limit);
  }

  private fallbackWait(id: string, limit: BucketLimit, reason: FallbackReason): number {
    this.store.fellBack(this.name, reason);
    return this.fallback.waitMs(id, limit);
  }
}
