import { recordJobRun } from "./job-metrics.js";
import { withRequestIdOrNone, type Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";

/** What a pass of a job may say about itself; returning nothing is a pass that went through. */
export interface JobResult {
  /** There may be more to do right now: run again at once (stops on a failure, or when stopped). */
  more?: boolean;
  /** The pass found nothing to do: it neither ends a failure streak nor starts one. */
  idle?: boolean;
  /**
   * The pass failed without throwing (it cleaned up after itself): counted as `result="error"`,
   * backed off and logged like a throw; `fields` and `message` make the streak's one warning.
   */
  failed?: { err: unknown; fields?: Record<string, unknown>; message?: string };
}

/** Time and timers for the runner; real (and unref'd) unless a test gives its own. Not the kit's Clock. */
export interface JobClock {
  /** Milliseconds, as Date.now(). */
  now(): number;
  /** Calls fn after ms; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const realJobClock: JobClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface JobOptions {
  /** The `job` label of its metrics and the `job` field of its logs. */
  name: string;
  /** The pause between passes (from the end of one to the start of the next). */
  intervalMs: number;
  /** One pass. The signal aborts when the job is stopped. */
  run: (signal: AbortSignal) => Promise<JobResult | void>;
  /**
   * The pause after failures: initialMs after the first, doubling per failure up to maxMs.
   * wake() waits it out; runNow() does not. Without it a failing job just runs on its interval.
   */
  backoff?: { initialMs: number; maxMs: number };
  logger: Logger;
  /** `payments_job_runs_total{job,result}`, `payments_job_duration_seconds{job}` and, with backlog, `payments_job_backlog{job}`. */
  metrics?: Metrics;
  clock?: JobClock;
  /** The work waiting for the job, read when /metrics is scraped (at most every few seconds). */
  backlog?: () => Promise<number> | number;
  /** A shutdown shared by several jobs: aborting it stops this one (stop() still waits for it). */
  signal?: AbortSignal;
  /** Run once at start instead of waiting for the first interval. */
  runAtStart?: boolean;
  /** The warning for a failure streak that began with a throw (a failed result may carry its own). */
  failureMessage?: string;
  /** The info line when a pass goes through after a failure streak. */
  recoveryMessage?: string;
}

export interface Job {
  /** Run soon (at once, or right after the run in flight), unless backing off after failures. */
  wake(): void;
  /** Waits for the run in flight, then runs now, back-off or not; resolves when done. */
  runNow(): Promise<void>;
  /** No more runs; resolves when the run in flight is done. */
  stop(): Promise<void>;
}

/**
 * A background poll loop: runs `run` every intervalMs, one run at a time (a wake during a run
 * makes exactly one more run right after it), again at once while it says `more`. A failing
 * run (a throw or `failed`) is counted, backs the job off exponentially, and is logged once
 * per failure streak as a warning with the job's name; the first good pass after it logs the
 * recovery. Timers are unref'd, so a job never keeps the process alive.
 */
export function startJob(options: JobOptions): Job {
  const { name, intervalMs, logger, metrics } = options;
  const clock = options.clock ?? realJobClock;
  const initialMs = options.backoff?.initialMs ?? 0;
  const maxMs = Math.max(options.backoff?.maxMs ?? 0, initialMs);
  const controller = new AbortController();
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  // Read through a call: a tick during the pass sets `again`, which narrowing cannot see.
  const wantedAgain = (): boolean => again;
  let cancelTimer: (() => void) | undefined;
  /** Consecutive failed passes, and when (clock.now()) the next unforced pass may start. */
  let failures = 0;
  let retryAt = 0;

  const backlog = options.backlog;
  const stopSampling =
    backlog && metrics
      ? metrics.sampleGauge("job_backlog", "Work waiting for a background job, by job", ["job"], async () => [{ labels: { job: name }, value: Number(await backlog()) }])
      : undefined;

  function noteFailure(err: unknown, failed?: JobResult["failed"]): void {
    if (stopped) return;
    failures++;
    if (options.backoff) retryAt = clock.now() + Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
    if (failures > 1) return;
    logger.warn({ job: name, err, ...failed?.fields }, failed?.message ?? options.failureMessage ?? `job ${name} failed; retrying with back-off`);
  }

  function noteSuccess(): void {
    if (failures > 0) logger.info({ job: name, failedPasses: failures }, options.recoveryMessage ?? `job ${name} recovered`);
    failures = 0;
    retryAt = 0;
  }

  /**
   * One pass; says whether to go on at once. A pass is often woken from inside a request (an
   * outbox nudge after a commit): it runs with no request id, so its log lines never carry
   * that request's.
   */
  function pass(): Promise<boolean> {
    return withRequestIdOrNone(undefined, passInScope);
  }

  async function passInScope(): Promise<boolean> {
    let result: JobResult | void;
    try {
      result = await recordJobRun(metrics, name, () => options.run(controller.signal), (r) => (r?.failed ? "error" : "ok"));
    } catch (err) {
      noteFailure(err);
      return false;
    }
    if (result?.failed) {
      noteFailure(result.failed.err, result.failed);
      return false;
    }
    if (!result?.idle) noteSuccess();
    return Boolean(result?.more);
  }

  async function loop(force: boolean): Promise<void> {
    let forced = force;
    do {
      again = false;
      if (!forced && clock.now() < retryAt) return;
      forced = false;
      while (!stopped && (await pass()));
    } while (wantedAgain() && !stopped);
  }

  function tick(force = false): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = loop(force).finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    cancelTimer = clock.setTimer(
      () => {
        cancelTimer = undefined;
        void tick().finally(schedule);
      },
      Math.max(intervalMs, retryAt - clock.now()),
    );
  }

  const onShutdown = () => void stop();
  async function stop(): Promise<void> {
    stopped = true;
    controller.abort();
    options.signal?.removeEventListener("abort", onShutdown);
    stopSampling?.();
    cancelTimer?.();
    cancelTimer = undefined;
    while (running) await running;
  }

  if (options.signal?.aborted) stopped = true;
  else options.signal?.addEventListener("abort", onShutdown, { once: true });
  if (options.runAtStart && !stopped) void tick();
  schedule();

  return {
    wake() {
      if (!stopped && clock.now() >= retryAt) void tick();
    },
    async runNow() {
      while (running) await running;
      if (!stopped) await tick(true);
    },
    stop,
  };
}
