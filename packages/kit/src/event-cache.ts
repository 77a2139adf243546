import type { BusMessage, EventBus, Subscription } from "./bus.js";
import type { Clock } from "./clock.js";
import type { Logger } from "./logger.js";

export interface EventCacheOptions {
  clock: Clock;
  /**
   * How long a value is kept, counted from the moment its load started (so nothing is served
   * that was read longer ago than this). 0 turns the cache off: every get loads.
   */
  ttlMs: number;
  /** Most keys kept; past it the least recently used one is dropped. */
  maxEntries?: number;
  /** Names the cache in logs. */
  name?: string;
  logger?: Logger;
}

export interface EventCacheWatchOptions {
  /**
   * The keys an event is about, to drop only those. Without it, or when it throws (an event
   * that cannot be read), everything is dropped.
   */
  keysOf?: (message: BusMessage) => Iterable<string>;
  /**
   * A second drop this long after each event (the latest one, when they come in a burst).
   * For caches of another service's answers: a replica of that service may hear the same event
   * a moment later than this process, and a load that reached it in between would otherwise be
   * kept until the TTL. 0: no second drop.
   */
  settleMs?: number;
}

export interface EventCacheStats {
  hits: number;
  /** Gets that found nothing current and started a load or joined one in flight. */
  misses: number;
  /** Loads started. */
  loads: number;
  /** Times everything was dropped (events, clear()). */
  clears: number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

interface Load<V> {
  promise: Promise<V>;
  /** Set when its key was invalidated while it ran: its answer is not kept. */
  dropped: boolean;
}

/**
 * Values kept until an event on a topic says they changed, or a TTL passes (the fallback when
 * an event is lost), whichever comes first. Keyed by string, least recently used dropped past
 * `maxEntries`. Concurrent misses of one key share one load (single flight). A load that was
 * under way when the cache was invalidated still answers its callers but is not kept: it may
 * have read what the invalidation was about. Failed loads are not kept either.
 */
export class EventCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Load<V>>();
  /** Bumped by clear(); a load stores its value only when it is still the one it started under. */
  private generation = 0;
  private readonly maxEntries: number;
  private readonly counters: EventCacheStats = { hits: 0, misses: 0, loads: 0, clears: 0 };

  constructor(private readonly options: EventCacheOptions) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 10_000);
  }

  /** Whether anything is kept at all (ttlMs > 0). */
  get enabled(): boolean {
    return this.options.ttlMs > 0;
  }

  /** The value of `key`: kept, shared with a load in flight, or `load()`ed now. A failed load rejects every caller waiting on it. */
  get(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.enabled) {
      this.counters.misses++;
      this.counters.loads++;
      return (async () => load())();
    }
    const now = this.options.clock.now().getTime();
    const entry = this.entries.get(key);
    if (entry) {
      if (entry.expiresAt > now) {
        this.counters.hits++;
        // Most recently used last.
        this.entries.delete(key);
        this.entries.set(key, entry);
        return Promise.resolve(entry.value);
      }
      this.entries.delete(key);
    }
    this.counters.misses++;
    const pending = this.inflight.get(key);
    if (pending) return pending.promise;

    this.counters.loads++;
    const generation = this.generation;
    const expiresAt = now + this.options.ttlMs;
    const run = { dropped: false } as Load<V>;
    run.promise = (async () => {
      const value = await load();
      if (!run.dropped && generation === this.generation) this.store(key, { value, expiresAt });
      return value;
    })();
    this.inflight.set(key, run);
    const finished = () => {
      if (this.inflight.get(key) === run) this.inflight.delete(key);
    };
    run.promise.then(finished, finished);
    return run.promise;
  }

  /**
   * The value kept for `key` now, without loading: for code that must not wait on a load at
   * that moment (inside a transaction that holds row locks). Undefined on a miss.
   */
  peek(key: string): V | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(key);
    if (!entry || entry.expiresAt <= this.options.clock.now().getTime()) return undefined;
    this.counters.hits++;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  private store(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  /** Drops one key, and keeps any load of it already under way from storing its answer. */
  invalidate(key: string): void {
    this.entries.delete(key);
    const running = this.inflight.get(key);
    if (running) {
      running.dropped = true;
      this.inflight.delete(key);
    }
  }

  /** Drops everything, loads in flight included (their callers still get their answers). */
  clear(): void {
    this.generation++;
    this.counters.clears++;
    this.entries.clear();
    this.inflight.clear();
  }

  /** Keys kept now (expired ones included until they are next asked for). */
  get size(): number {
    return this.entries.size;
  }

  stats(): EventCacheStats {
    return { ...this.counters };
  }

  /**
   * Drops what an event on one of `topics` is about (everything, unless `keysOf` says which
   * keys), and once more `settleMs` later.
   */
  async watch(bus: EventBus, topics: string[], options: EventCacheWatchOptions = {}): Promise<Subscription> {
    const settleMs = options.settleMs ?? 0;
    let timer: NodeJS.Timeout | undefined;
    /** What the second drop will drop: "all", or the keys of the events since the last one. */
    let again: Set<string> | "all" = new Set();
    let stopped = false;
    const drop = (keys: Iterable<string> | "all") => {
      if (keys === "all") this.clear();
      else for (const key of keys) this.invalidate(key);
    };
    const subscription = await bus.watch(topics, async (message) => {
      let keys: string[] | "all" = "all";
      if (options.keysOf) {
        try {
          keys = [...options.keysOf(message)];
        } catch (err) {
          this.options.logger?.warn({ err, cache: this.options.name, topic: message.topic }, "unreadable event; cache cleared");
        }
      }
      drop(keys);
      this.options.logger?.debug({ cache: this.options.name, topic: message.topic, eventId: message.msgId, keys: keys === "all" ? "all" : keys.length }, "cache dropped on event");
      if (settleMs <= 0 || stopped) return;
      if (keys === "all" || again === "all") again = "all";
      else for (const key of keys) again.add(key);
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        const pending = again;
        timer = undefined;
        again = new Set();
        drop(pending);
      }, settleMs);
      timer.unref();
    });
    return {
      stop: async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        await subscription.stop();
      },
    };
  }
}
