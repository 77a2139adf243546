import type { Clock } from "@payments/kit";
import { TokenBuckets, type BucketLimit, type Take } from "./token-bucket.js";

/**
 * One family of token buckets by key (the merchants, or the client IPs of one budget). The
 * in-memory one answers at once; the shared one (nats-rate-limits.ts) asks NATS, within a
 * bounded wait.
 */
export interface RateLimiter {
  /** Spends one token of `key` if there is one; otherwise says how long until there is. */
  take(key: string, limit: BucketLimit): Promise<Take>;
  /** How long until `key` has a token: 0 when it has one now. Spends nothing. */
  waitMs(key: string, limit: BucketLimit): Promise<number>;
}

/** Where the gateway's rate limits keep their buckets: this process, or a store every replica shares. */
export interface RateLimitStore {
  readonly kind: "memory" | "nats";
  /** The buckets of one limit (`merchant`, `auth-failure`, `checkout`), apart from the others'. */
  limiter(name: string): RateLimiter;
  close(): Promise<void>;
}

/** A limiter over in-memory buckets: per process, so per gateway replica. */
export function memoryLimiter(options: { clock: Clock; maxKeys?: number }): RateLimiter & { buckets: TokenBuckets } {
  const buckets = new TokenBuckets(options);
  return {
    buckets,
    take: (key, limit) => Promise.resolve(buckets.take(key, limit)),
    waitMs: (key, limit) => Promise.resolve(buckets.waitMs(key, limit)),
  };
}

/** Every limit in this process's memory: the all-in-one's, and the default without NATS. */
export class MemoryRateLimits implements RateLimitStore {
  readonly kind = "memory" as const;
  constructor(private readonly options: { clock: Clock; maxKeys?: number }) {}

  limiter(): RateLimiter {
    return memoryLimiter(this.options);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
