/**
 * Items handed over together as they come: the first goes at once, and those that come while a
 * batch is being handled go in the next, up to `maxBatch`. A quiet caller waits for nothing; a
 * busy one gets many items per call of `handle` (one transaction for all of them). Each item's
 * caller gets its own result, or the error.
 */
export interface BatcherOptions<T, R> {
  /** Handles a batch, all or nothing; its results in the order of `batch`. */
  handle(batch: T[]): Promise<R[]>;
  /**
   * Handles one item on its own: a batch of one, and each item of a batch that failed, so an
   * item that cannot be handled holds back only itself. Without it a failed batch fails each
   * of its items with the batch's error.
   */
  alone?: (item: T) => Promise<R>;
  /** Items in one batch at most (default 100). */
  maxBatch?: number;
  /** Items with the same key never share a batch: a later one waits for the next. */
  key?: (item: T) => string;
  /**
   * Start a batch after the current turn of the event loop instead of at once, so items that
   * come in the same turn (work started together) go in one batch.
   */
  afterTurn?: boolean;
  /** Told when a batch failed and its items go alone. */
  onBatchFailure?: (err: unknown, size: number) => void;
}

/** Each pending item with its caller's settlement. */
interface Pending<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export function createBatcher<T, R>(options: BatcherOptions<T, R>): (item: T) => Promise<R> {
  const maxBatch = Math.max(1, options.maxBatch ?? 100);
  const queue: Array<Pending<T, R>> = [];
  let running = false;

  const take = (): Array<Pending<T, R>> => {
    if (!options.key) return queue.splice(0, maxBatch);
    const batch: Array<Pending<T, R>> = [];
    const keys = new Set<string>();
    for (let i = 0; i < queue.length && batch.length < maxBatch; ) {
      const key = options.key(queue[i]!.item);
      if (keys.has(key)) {
        i++;
        continue;
      }
      keys.add(key);
      batch.push(...queue.splice(i, 1));
    }
    return batch;
  };

  const settle = async (pending: Pending<T, R>, run: () => Promise<R>) => {
    try {
      pending.resolve(await run());
    } catch (err) {
      pending.reject(err);
    }
  };

  const drain = async () => {
    try {
      while (queue.length > 0) {
        const batch = take();
        const { alone } = options;
        if (batch.length === 1 && alone) {
          await settle(batch[0]!, () => alone(batch[0]!.item));
          continue;
        }
        try {
          const results = await options.handle(batch.map((p) => p.item));
          batch.forEach((pending, i) => pending.resolve(results[i]!));
        } catch (err) {
          if (!alone) {
            for (const pending of batch) pending.reject(err);
            continue;
          }
          options.onBatchFailure?.(err, batch.length);
          await Promise.all(batch.map((pending) => settle(pending, () => alone(pending.item))));
        }
      }
    } finally {
      running = false;
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (running) return;
      running = true;
      // Not awaited: every item's own promise settles when its batch is handled (drain settles
      // every item it takes and never throws).
      if (options.afterTurn) setImmediate(() => void drain());
      else void drain();
    });
}
