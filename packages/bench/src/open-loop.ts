import { cpuMillis } from "./proc-stats.js";

/**
 * An open-loop driver: call i is started at `start + i / rate` whether or not the earlier ones
 * were answered, so a slow server meets a growing queue of calls, as it would meet a bank's
 * reports or merchants' requests, instead of being asked less (the closed loop of autocannon).
 * Only `maxInFlight` unanswered calls hold the schedule back; when that happens the figures
 * say so (`heldBack`), since the rate asked was then not the rate offered.
 */

/** What one call came to: nothing for a success, else a code to count it under and a sample line. */
export type CallOutcome = { code?: undefined } | { code: string; sample: string };

export interface OpenLoopFigures {
  /** Calls per second asked for. */
  targetRate: number;
  /** Calls started ÷ the sending window: the rate actually offered. */
  achievedRate: number;
  sendSeconds: number;
  /** First call started → last answer. */
  totalSeconds: number;
  sent: number;
  ok: number;
  /** Every call that did not come to the expected outcome (a failed call, a timeout, a wrong answer). */
  errors: number;
  errorsByCode: Record<string, number>;
  failureSamples: string[];
  /** Each call's own time, start → answer. */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** How late calls were started against the schedule (the driver's own lag, or held back). */
  scheduleLagMs: { p99: number; max: number };
  /** Calls whose start waited because maxInFlight calls were unanswered. */
  heldBack: number;
  /** The index of every call that did not come to the expected outcome (not in the JSON: the caller's to use). */
  failedIndexes: number[];
  maxInFlight: number;
  peakInFlight: number;
  /** CPU (user + system) of the server processes from the first call to the last answer. */
  serverCpuMs: number;
  serverCpuMsPerCall: number;
  /** The same per product process (by name), from the first call to the last answer: where the CPU went. */
  cpuMsPerCallByProcess?: Record<string, number>;
  /** The same for the shared MariaDB and NATS servers, when found (other users of them count too). */
  mysqlCpuMsPerCall?: number;
  natsCpuMsPerCall?: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;

export async function runOpenLoop(options: {
  count: number;
  rate: number;
  maxInFlight: number;
  serverPids: readonly number[];
  /** The product's processes by name, for the per-process CPU figures (split target). */
  processes?: ReadonlyArray<{ name: string; pid: number }>;
  mysqlPid?: number | undefined;
  natsPid?: number | undefined;
  /** Makes call i; resolves with its outcome (it should not throw: a throw counts as "exception"). */
  call(i: number): Promise<CallOutcome>;
}): Promise<OpenLoopFigures> {
  const { count, rate, maxInFlight } = options;
  const latencies = new Float64Array(count);
  const lags = new Float64Array(count);
  const errorsByCode: Record<string, number> = {};
  const failureSamples: string[] = [];
  let ok = 0;
  let errors = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  /** 1 for every call that was due while maxInFlight calls were unanswered. */
  const held = new Uint8Array(count);
  let answered = 0;
  let lastAnswer = 0;
  const failedIndexes: number[] = [];
  const fail = (n: number, code: string, sample: string) => {
    failedIndexes.push(n);
    errors++;
    errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
    if (failureSamples.length < 8) failureSamples.push(sample);
  };
  const cpuBefore = cpuMillis(options.serverPids);
  const named = options.processes ?? [];
  const perProcessBefore = named.map((p) => cpuMillis([p.pid]));
  const mysqlBefore = options.mysqlPid ? cpuMillis([options.mysqlPid]) : 0;
  const natsBefore = options.natsPid ? cpuMillis([options.natsPid]) : 0;

  let allAnswered: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allAnswered = resolve));
  const start = performance.now();
  let i = 0;
  while (i < count) {
    const now = performance.now();
    while (i < count && start + (i * 1000) / rate <= now) {
      if (inFlight >= maxInFlight) {
        const due = Math.min(count, Math.floor(((now - start) * rate) / 1000) + 1);
        held.fill(1, i, due);
        break;
      }
      const n = i++;
      const startedAt = performance.now();
      lags[n] = startedAt - (start + (n * 1000) / rate);
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      void options
        .call(n)
        .catch((err: unknown): CallOutcome => ({ code: "exception", sample: `call ${n}: ${(err as Error).stack ?? String(err)}` }))
        .then((outcome) => {
          lastAnswer = performance.now();
          latencies[n] = lastAnswer - startedAt;
          if (outcome.code === undefined) ok++;
          else fail(n, outcome.code, outcome.sample);
          inFlight--;
          if (++answered === count) allAnswered();
        });
    }
    // Sleep until the next call is due (timers have about 1 ms resolution).
    const nextAt = start + (i * 1000) / rate;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(50, nextAt - performance.now()))));
  }
  const sendSeconds = Math.max((performance.now() - start) / 1000, count / rate);
  if (count > 0) await done;
  const serverCpuMs = cpuMillis(options.serverPids) - cpuBefore;
  const perProcessMs = named.map((p, k) => cpuMillis([p.pid]) - perProcessBefore[k]!);
  const mysqlCpuMs = options.mysqlPid ? cpuMillis([options.mysqlPid]) - mysqlBefore : undefined;
  const natsCpuMs = options.natsPid ? cpuMillis([options.natsPid]) - natsBefore : undefined;

  const sorted = Float64Array.from(latencies).sort();
  const sortedLags = Float64Array.from(lags).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const perCall = (ms: number | undefined) => (ms === undefined || count === 0 ? undefined : round(ms / count, 3));
  return {
    targetRate: rate,
    achievedRate: round(count / sendSeconds, 1),
    sendSeconds: round(sendSeconds, 2),
    totalSeconds: round((Math.max(lastAnswer, start) - start) / 1000, 2),
    sent: count,
    ok,
    errors,
    errorsByCode,
    failureSamples,
    latencyMs: {
      p50: round(percentile(sorted, 50)),
      p90: round(percentile(sorted, 90)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted.length ? sorted[sorted.length - 1]! : 0),
      mean: round(sorted.length ? sum / sorted.length : 0),
    },
    scheduleLagMs: { p99: round(percentile(sortedLags, 99)), max: round(sortedLags.length ? sortedLags[sortedLags.length - 1]! : 0) },
    heldBack: held.reduce((a, b) => a + b, 0),
    failedIndexes,
    maxInFlight,
    peakInFlight,
    serverCpuMs: Math.round(serverCpuMs),
    serverCpuMsPerCall: perCall(serverCpuMs) ?? 0,
    ...(named.length > 1 ? { cpuMsPerCallByProcess: Object.fromEntries(named.map((p, k) => [p.name, perCall(perProcessMs[k]) ?? 0])) } : {}),
    ...(mysqlCpuMs !== undefined ? { mysqlCpuMsPerCall: perCall(mysqlCpuMs) } : {}),
    ...(natsCpuMs !== undefined ? { natsCpuMsPerCall: perCall(natsCpuMs) } : {}),
  };
}
