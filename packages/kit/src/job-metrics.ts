import { JetStreamBus, type EventBus } from "./bus.js";
import type { Metrics } from "./metrics.js";

/**
 * Runs one pass of a background job and records it: `payments_job_runs_total{job,result}`
 * (result `ok` or `error`, or what `resultOf` says) and `payments_job_duration_seconds{job}`. The pass's result or
 * error is passed through.
 */
export async function recordJobRun<T>(
  metrics: Metrics | undefined,
  job: string,
  fn: () => Promise<T>,
  /** The result of a pass that returned (a pass that reports its failure instead of throwing it); `ok` without it. */
  resultOf?: (value: T) => string,
): Promise<T> {
  if (!metrics) return fn();
  const started = performance.now();
  let result = "error";
  try {
    const value = await fn();
    result = resultOf ? resultOf(value) : "ok";
    return value;
  } finally {
    metrics.counter("job_runs_total", "Passes of background jobs, by job and result", ["job", "result"]).inc({ job, result });
    metrics.histogram("job_duration_seconds", "Duration of background job passes, by job", ["job"]).observe({ job }, (performance.now() - started) / 1000);
  }
}

/** How long a scrape waits for JetStream's consumer info before leaving the reading out. */
const CONSUMER_INFO_TIMEOUT_MS = 1_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `payments_consumer_pending_messages{consumer}`: the messages each durable consumer has not
 * been delivered yet (JetStream's num_pending), read at most every few seconds when
 * scraped; 0 on the in-process bus, which delivers as it publishes. While JetStream is not
 * reachable the reading is left out. Returns a function that stops sampling.
 */
export function sampleConsumerPending(metrics: Metrics, bus: EventBus, durables: readonly string[]): () => void {
  return metrics.sampleGauge("consumer_pending_messages", "Messages not yet delivered to a durable event consumer, by consumer", ["consumer"], async () => {
    if (!(bus instanceof JetStreamBus)) return durables.map((consumer) => ({ labels: { consumer }, value: 0 }));
    const jsm = await withTimeout(bus.manager(), CONSUMER_INFO_TIMEOUT_MS);
    const readings = await Promise.allSettled(
      durables.map(async (consumer) => {
        const info = await withTimeout(jsm.consumers.info(bus.stream, consumer), CONSUMER_INFO_TIMEOUT_MS);
        return { labels: { consumer }, value: info.num_pending };
      }),
    );
    return readings.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  });
}
