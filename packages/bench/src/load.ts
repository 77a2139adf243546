import autocannon from "autocannon";
import { sign } from "@payments/signing";
import { statementsPer, type MysqlStatus, type StatementFigures } from "./mysql-status.js";
import { cpuMillis } from "./proc-stats.js";

export interface Merchant {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
}

/** One request of a scenario: what to send, on behalf of which merchant. */
export interface PlannedRequest {
  path: string;
  body: string;
  merchant: Merchant;
}

export interface LoadPlan {
  method: "GET" | "POST";
  /** Called once per request, so every request is signed afresh (and carries its own processId). */
  next(): PlannedRequest;
  /** Sees every answer (status and body); used to keep the ids of created deposits. */
  onResponse?(status: number, body: string): void;
}

export interface LoadFigures {
  /** Responses in the measured window, whatever their status. */
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** The same counts during the unmeasured warm-up: failures there fail the run too. */
  warmup: { requests: number; non2xx: number; errors: number };
  /** CPU (user + system) of the server processes during the measured window. */
  serverCpuMs: number;
  serverCpuMsPerRequest: number;
  /** CPU of the shared MariaDB and NATS servers during the window, when they could be found (other users of them count too). */
  mysqlCpuMsPerRequest?: number;
  natsCpuMsPerRequest?: number;
  /** MariaDB statements (global `Questions`, and its breakdown) during the window ÷ responses; shared like the CPU figure. */
  mysqlStatements?: StatementFigures;
  /** A few answers that were not 2xx, for the report. */
  failureSamples: string[];
}

export interface LoadSettings {
  url: string;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Whose CPU counts: the server pids (their descendants included). */
  serverPids: readonly number[];
  mysqlPid?: number | undefined;
  natsPid?: number | undefined;
  /** Where to read MariaDB's statement counters, when the bench could connect. */
  mysqlStatus?: MysqlStatus | undefined;
}

/** The autocannon instance running now, so Ctrl-C can stop it. */
let current: autocannon.Instance | undefined;

export function stopCurrentLoad(): void {
  current?.stop();
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

interface Pass {
  result: autocannon.Result;
  latencies: Float64Array;
  count: number;
  failureSamples: string[];
}

function onePass(settings: LoadSettings, plan: LoadPlan, seconds: number): Promise<Pass> {
  let latencies = new Float64Array(65_536);
  let count = 0;
  const failureSamples: string[] = [];
  const request: autocannon.Request = {
    method: plan.method,
    setupRequest: (req) => {
      const planned = plan.next();
      const timestamp = String(Math.floor(Date.now() / 1000));
      req.method = plan.method;
      req.path = planned.path;
      req.body = planned.body;
      req.headers = {
        "x-api-key": planned.merchant.apiKey,
        "x-timestamp": timestamp,
        "x-signature": sign(planned.merchant.apiSecret, { timestamp, method: plan.method, path: planned.path, body: planned.body }),
        ...(planned.body === "" ? {} : { "content-type": "application/json" }),
      };
      return req;
    },
    onResponse: (status, body) => {
      if ((status < 200 || status > 299) && failureSamples.length < 5) failureSamples.push(`${status} ${body.slice(0, 300)}`);
      plan.onResponse?.(status, body);
    },
  };
  return new Promise<Pass>((resolve, reject) => {
    const instance = autocannon(
      { url: settings.url, connections: settings.connections, duration: seconds, requests: [request], timeout: 10 },
      (err: Error | null, result: autocannon.Result) => {
        current = undefined;
        if (err) reject(err);
        else resolve({ result, latencies: latencies.subarray(0, count), count, failureSamples });
      },
    );
    current = instance;
    instance.on("response", (_client, _status, _bytes, responseTime: number) => {
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[count++] = responseTime;
    });
  });
}

/**
 * A warm-up pass (not measured), then the measured pass: `connections` keep-alive
 * connections, each sending its next request as soon as the previous answer arrived.
 * Latencies are every response's own time in ms (autocannon's histogram rounds to whole ms).
 */
export async function runLoad(settings: LoadSettings, plan: LoadPlan): Promise<LoadFigures> {
  const warm = settings.warmupSeconds > 0 ? await onePass(settings, plan, settings.warmupSeconds) : undefined;
  const cpuBefore = cpuMillis(settings.serverPids);
  const mysqlBefore = settings.mysqlPid ? cpuMillis([settings.mysqlPid]) : 0;
  const natsBefore = settings.natsPid ? cpuMillis([settings.natsPid]) : 0;
  const statusBefore = await settings.mysqlStatus?.read();
  const pass = await onePass(settings, plan, settings.durationSeconds);
  const statusAfter = await settings.mysqlStatus?.read();
  const serverCpuMs = cpuMillis(settings.serverPids) - cpuBefore;
  const mysqlCpuMs = settings.mysqlPid ? cpuMillis([settings.mysqlPid]) - mysqlBefore : undefined;
  const natsCpuMs = settings.natsPid ? cpuMillis([settings.natsPid]) - natsBefore : undefined;

  const { result } = pass;
  const sorted = Float64Array.from(pass.latencies).sort();
  const requests = pass.count;
  const seconds = result.duration;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  const perRequest = (ms: number | undefined) => (ms === undefined || requests === 0 ? undefined : round(ms / requests, 3));
  const statements = statementsPer(statusBefore, statusAfter, requests);
  let mean = 0;
  for (const v of sorted) mean += v;
  return {
    requests,
    seconds: round(seconds, 3),
    requestsPerSecond: round(requests / seconds, 1),
    latencyMs: {
      p50: round(percentile(sorted, 50)),
      p90: round(percentile(sorted, 90)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted.length ? sorted[sorted.length - 1]! : 0),
      mean: round(sorted.length ? mean / sorted.length : 0),
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    warmup: { requests: warm?.count ?? 0, non2xx: warm?.result.non2xx ?? 0, errors: warm?.result.errors ?? 0 },
    serverCpuMs: round(serverCpuMs, 0),
    serverCpuMsPerRequest: perRequest(serverCpuMs) ?? 0,
    ...(mysqlCpuMs !== undefined ? { mysqlCpuMsPerRequest: perRequest(mysqlCpuMs) } : {}),
    ...(natsCpuMs !== undefined ? { natsCpuMsPerRequest: perRequest(natsCpuMs) } : {}),
    ...(statements ? { mysqlStatements: statements } : {}),
    failureSamples: [...(warm?.failureSamples ?? []), ...pass.failureSamples].slice(0, 5),
  };
}
