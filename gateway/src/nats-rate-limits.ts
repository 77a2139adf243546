import { performance } from "node:perf_hooks";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { Clock, Logger, Metrics } from "@payments/kit";
import { decode, encode, RateLimitBucket } from "./rate-limit-bucket.js";
import type { RateLimiter, RateLimitStore } from "./rate-limit-store.js";
import { SharedLimiter, type FallbackReason, type Shared, type SharedStore } from "./shared-limiter.js";
import { DEFAULT_MAX_KEYS, refill, TokenBuckets, UNIT, waitMs, type BucketLimit } from "./token-bucket.js";

export { kvKey } from "./rate-limit-bucket.js";

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
export class NatsRateLimits implements RateLimitStore, SharedStore {
  readonly kind = "nats" as const;
  readonly address: string;
  private readonly bucket: RateLimitBucket;
  private failuresInARow = 0;
  private openUntil = -Infinity;
  private degraded = false;
  private readonly logger?: Logger;
  private readonly fallbacks?: ReturnType<Metrics["counter"]>;
  private readonly conflicts?: ReturnType<Metrics["counter"]>;

  private constructor(private readonly options: NatsRateLimitsOptions) {
    this.logger = options.logger?.child({ component: "rate-limits" });
    this.fallbacks = options.metrics?.counter(
      "gateway_rate_limit_fallbacks_total",
      "Requests a gateway's local limiter answered because the shared rate-limit bucket (NATS) did not answer in time, by limit and reason",
      ["limiter", "reason"],
    );
    this.conflicts = options.metrics?.counter("gateway_rate_limit_conflicts_total", "Compare-and-set conflicts on the shared rate-limit bucket (another replica wrote first), by limit", ["limiter"]);
    this.bucket = new RateLimitBucket({
      url: options.url,
      bucket: options.bucket,
      ttlMs: options.ttlMs,
      timeoutMs: options.timeoutMs,
      retryMs: options.retryMs,
      logger: this.logger,
      // NATS is back: ask it again at once, whatever failed before.
      onReconnect: () => {
        this.openUntil = -Infinity;
      },
    });
    this.address = this.bucket.address;
  }

  /** Connects in the background and returns at once: until NATS answers, the local limiter answers. */
  static open(options: NatsRateLimitsOptions): NatsRateLimits {
    return new NatsRateLimits(options);
  }

  /** Whether the shared bucket can be asked now. */
  isReady(): boolean {
    return this.bucket.isReady();
  }

  /** Resolves true once the shared bucket is ready, false after timeoutMs (start-up, tests). */
  whenReady(timeoutMs: number): Promise<boolean> {
    return this.bucket.whenReady(timeoutMs);
  }

  limiter(name: string): RateLimiter {
    const maxKeys = this.options.maxKeys ?? DEFAULT_MAX_KEYS;
    return new SharedLimiter(this, name, new TokenBuckets({ clock: this.options.clock, maxKeys }), this.options.leaseMs ?? 0, maxKeys);
  }

  close(): Promise<void> {
    return this.bucket.close();
  }

  // ------------------------------------------------------------------ the shared bucket

  /** Why the shared bucket cannot be asked right now, if it cannot. */
  unavailable(): FallbackReason | undefined {
    if (!this.bucket.isReady()) {
      void this.bucket.setUp();
      return "unreachable";
    }
    if (performance.now() < this.openUntil) return "unreachable";
    return undefined;
  }

  /** Spends up to `n` tokens of `key`; within `budgetMs`, or it fails with "timeout". */
  async sharedTake(limiter: string, key: string, limit: BucketLimit, n: number, budgetMs: number): Promise<Shared> {
    const kv = this.bucket.kv;
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
    const kv = this.bucket.kv;
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
    void this.bucket.setUp();
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

  // ------------------------------------------------------------------ for its limiters

  /** The clock's milliseconds. */
  now(): number {
    return this.options.clock.now().getTime();
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }
}
