import type { Clock } from "@payments/kit";

/** A bucket fills at `perSecond` tokens a second and holds at most `burst` (at least one); a request costs one token. */
export interface BucketLimit {
  perSecond: number;
  burst: number;
}

export type Take = { allowed: true } | { allowed: false; retryAfterMs: number };

/**
 * Tokens are counted in thousandths, so that a bucket gains exactly `perSecond` units per
 * millisecond of the clock: with whole rates, bursts and milliseconds every step is integer
 * arithmetic, and no rounding can ever let one request more through than the limit allows.
 */
export const UNIT = 1000;

/** A bucket as stored: its level in units at a clock time. No state at all means a full bucket. */
export interface BucketState {
  /** Units in the bucket at `at`. */
  level: number;
  /** Clock milliseconds of the last update. */
  at: number;
}

interface Bucket extends BucketState {
  /** When the bucket is full again; from then on it is the same as no bucket at all. */
  fullAt: number;
}

/**
 * The bucket of `state` (undefined: full) at `now`, refilled at the rate up to the burst. A
 * clock that steps back refills nothing, and the bucket keeps its own later time, so several
 * clocks updating one bucket (gateway replicas) can only refill it less, never more.
 */
export function refill(state: BucketState | undefined, limit: BucketLimit, now: number): BucketState {
  // Callers treat a rate of 0 as "no limit" and never get here with one.
  if (!(limit.perSecond > 0 && Number.isFinite(limit.perSecond))) throw new RangeError(`a token bucket needs a positive rate, not ${limit.perSecond}`);
  const capacity = capacityOf(limit);
  if (!state) return { level: capacity, at: now };
  const elapsed = Math.max(0, now - state.at);
  return { level: Math.min(capacity, state.level + elapsed * limit.perSecond), at: Math.max(state.at, now) };
}

/** Whether a bucket at `level` is full, so that forgetting it changes nothing. */
export function isFull(level: number, limit: BucketLimit): boolean {
  return level >= capacityOf(limit);
}

export interface TokenBucketsOptions {
  clock: Clock;
  /**
   * Most keys kept. Past it the least recently used key is forgotten even if it is in
   * debt (it starts again full), so a flood of distinct keys costs bounded memory.
   */
  maxKeys?: number;
}

export const DEFAULT_MAX_KEYS = 100_000;

/**
 * Token buckets by key (a merchant, a client IP). In any interval of t seconds at most
 * `burst + perSecond · t` requests of one key are allowed. Time comes only from the
 * injected clock. A bucket that has filled up again is dropped, since a missing key
 * means a full bucket; keys are kept in least-recently-used order so those are found first.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly clock: Clock;
  private readonly maxKeys: number;

  constructor(options: TokenBucketsOptions) {
    this.clock = options.clock;
    this.maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_KEYS);
  }

  /** Keys currently remembered (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  /** Spends one token of `key` if there is one; otherwise says how long until there is. */
  take(key: string, limit: BucketLimit): Take {
    const now = this.clock.now().getTime();
    const { level, at } = this.levelAt(key, limit, now);
    const allowed = level >= UNIT;
    const after = allowed ? level - UNIT : level;
    this.store(key, limit, after, at, now);
    return allowed ? { allowed: true } : { allowed: false, retryAfterMs: waitMs(after, limit) };
  }

  /** How long until `key` has a token: 0 when it has one now. Spends nothing. */
  waitMs(key: string, limit: BucketLimit): number {
    const { level } = this.levelAt(key, limit, this.clock.now().getTime());
    return level >= UNIT ? 0 : waitMs(level, limit);
  }

  private levelAt(key: string, limit: BucketLimit, now: number): BucketState {
    return refill(this.buckets.get(key), limit, now);
  }

  private store(key: string, limit: BucketLimit, level: number, at: number, now: number): void {
    // Re-inserted, so the Map's order is least recently used first.
    this.buckets.delete(key);
    const missing = capacityOf(limit) - level;
    if (missing > 0) this.buckets.set(key, { level, at, fullAt: at + Math.ceil(missing / limit.perSecond) });
    this.evict(now);
  }

  private evict(now: number): void {
    // A couple of the oldest per call keeps up with any rate of new keys at constant cost.
    for (let i = 0; i < 2; i++) {
      const oldest = this.buckets.entries().next();
      if (oldest.done || oldest.value[1].fullAt > now) break;
      this.buckets.delete(oldest.value[0]);
    }
    while (this.buckets.size > this.maxKeys) {
      const oldest = this.buckets.keys().next();
      if (oldest.done) break;
      this.buckets.delete(oldest.value);
    }
  }
}

function capacityOf(limit: BucketLimit): number {
  // A bucket smaller than one token would refuse everything for ever.
  return Math.max(1, limit.burst) * UNIT;
}

/** How long until a bucket at `level` (below one token) has one. */
export function waitMs(level: number, limit: BucketLimit): number {
  return Math.ceil((UNIT - level) / limit.perSecond);
}
