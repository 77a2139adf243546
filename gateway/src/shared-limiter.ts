import { performance } from "node:perf_hooks";
import type { RateLimiter } from "./rate-limit-store.js";
import { kvKey } from "./rate-limit-bucket.js";
import type { BucketLimit, Take, TokenBuckets } from "./token-bucket.js";

/** What the shared bucket gave: tokens, and the wait after them, as of clock time `at`. */
export type Shared = { granted: number; retryAfterMs: number; at: number } | { failed: FallbackReason };
export type FallbackReason = "unreachable" | "timeout" | "error";

/** What a SharedLimiter asks of the store it belongs to (NatsRateLimits). */
export interface SharedStore {
  /** The most a request waits for the shared bucket before the local limiter answers it. */
  readonly timeoutMs: number;
  /** The clock's milliseconds. */
  now(): number;
  /** Why the shared bucket cannot be asked right now, if it cannot. */
  unavailable(): FallbackReason | undefined;
  /** Spends up to `n` tokens of `key`; within `budgetMs`, or it fails with "timeout". */
  sharedTake(limiter: string, key: string, limit: BucketLimit, n: number, budgetMs: number): Promise<Shared>;
  /** How long until `key` has a token, within `budgetMs`. */
  sharedWait(key: string, limit: BucketLimit, budgetMs: number): Promise<{ waitMs: number; at: number } | { failed: FallbackReason }>;
  /** A request the local limiter answered: counted, and logged once per outage. */
  fellBack(limiter: string, reason: FallbackReason): void;
}

interface Waiter {
  resolve(take: Take): void;
  /** performance.now() by which it must be answered. */
  deadline: number;
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
export class SharedLimiter implements RateLimiter {
  private readonly keys = new Map<string, Local>();

  constructor(
    private readonly store: SharedStore,
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
