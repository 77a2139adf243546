import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Seconds buckets shared by the latency histograms (1 ms … 10 s). */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type RpcLabels = "rpc_system" | "rpc_service" | "rpc_method" | "rpc_grpc_status_code";

/** One reading of a sampled gauge: its labels and value. */
export interface GaugeSample {
  labels: Record<string, string>;
  value: number;
}

export interface Metrics {
  registry: Registry;
  /**
   * `rpc_server_duration_seconds` (OpenTelemetry `rpc.server.duration`): every handled
   * RPC, by `rpc_system` (grpc, connect_rpc), `rpc_service`, `rpc_method` and
   * `rpc_grpc_status_code` (the numeric gRPC code, 0 = OK; Connect's codes are the same numbers).
   */
  rpcDuration: Histogram<RpcLabels>;
  /** `rpc_client_duration_seconds` (OpenTelemetry `rpc.client.duration`): every call a kit client made, same labels. */
  rpcClientDuration: Histogram<RpcLabels>;
  /**
   * `http_server_request_duration_seconds` (OpenTelemetry `http.server.request.duration`):
   * the gateway's and the console's requests by `http_request_method`, `http_route` (the route
   * pattern) and `http_response_status_code`; observed with `observeHttpRequest`.
   */
  httpDuration: Histogram<"http_request_method" | "http_route" | "http_response_status_code">;
  /** A counter named `payments_<name>`, made once per registry. */
  counter(name: string, help: string, labelNames?: string[]): Counter<string>;
  /** A histogram named `payments_<name>` (seconds buckets unless given), made once per registry. */
  histogram(name: string, help: string, labelNames?: string[], buckets?: number[]): Histogram<string>;
  /**
   * Adds a sampler to the gauge `payments_<name>`, read when /metrics is scraped and at most
   * once per `minIntervalMs` (the last reading is served in between; a failed reading is
   * left out). Several samplers may feed one gauge (one per service in the all-in-one).
   * Returns a function that removes the sampler (call it when the job stops).
   */
  sampleGauge(
    name: string,
    help: string,
    labelNames: string[],
    sampler: () => Promise<GaugeSample[]> | GaugeSample[],
    minIntervalMs?: number,
  ): () => void;
}

/** How often a sampled gauge may query its source at most, by default. */
export const DEFAULT_SAMPLE_INTERVAL_MS = 5_000;

interface Sampler {
  read(): Promise<GaugeSample[]>;
}

function cachedSampler(sampler: () => Promise<GaugeSample[]> | GaugeSample[], minIntervalMs: number): Sampler {
  let last: GaugeSample[] = [];
  let lastAt = -Infinity;
  let inFlight: Promise<GaugeSample[]> | undefined;
  return {
    read() {
      if (performance.now() - lastAt < minIntervalMs) return Promise.resolve(last);
      inFlight ??= (async () => {
        try {
          last = await sampler();
        } catch {
          last = [];
        } finally {
          lastAt = performance.now();
          inFlight = undefined;
        }
        return last;
      })();
      return inFlight;
    },
  };
}

/** HTTP methods reported as they are; anything else is `_OTHER` (OpenTelemetry's rule, bounding the label). */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]);

/**
 * One served request in `http_server_request_duration_seconds`, with the status the client
 * finally got. `route` is the pattern that matched, never the raw path; none matched: empty.
 */
export function observeHttpRequest(metrics: Metrics, request: { method: string; route: string | undefined; status: number }, seconds: number): void {
  metrics.httpDuration.observe(
    {
      http_request_method: KNOWN_METHODS.has(request.method) ? request.method : "_OTHER",
      http_route: request.route ?? "",
      http_response_status_code: String(request.status),
    },
    seconds,
  );
}

/**
 * One Prometheus registry per process: Node's default metrics (prefixed `payments_`), the
 * RPC server and client histograms and the HTTP server histogram (OpenTelemetry semantic
 * convention names, unprefixed), and the domain metrics services add (`payments_…`).
 */
export function createMetrics(prefix = "payments_"): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  const rpcLabels = ["rpc_system", "rpc_service", "rpc_method", "rpc_grpc_status_code"] as const;
  const rpcDuration = new Histogram({
    name: "rpc_server_duration_seconds",
    help: "Duration of RPCs handled, by system, service, method and gRPC status code",
    labelNames: rpcLabels,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const rpcClientDuration = new Histogram({
    name: "rpc_client_duration_seconds",
    help: "Duration of RPCs made to other services, by system, service, method and gRPC status code",
    labelNames: rpcLabels,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP requests served, by method, route pattern and response status code",
    labelNames: ["http_request_method", "http_route", "http_response_status_code"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const counters = new Map<string, Counter<string>>();
  const histograms = new Map<string, Histogram<string>>();
  const gauges = new Map<string, Set<Sampler>>();
  return {
    registry,
    rpcDuration,
    rpcClientDuration,
    httpDuration,
    counter(name, help, labelNames = []) {
      const full = `${prefix}${name}`;
      let c = counters.get(full);
      if (!c) {
        c = new Counter({ name: full, help, labelNames, registers: [registry] });
        counters.set(full, c);
      }
      return c;
    },
    histogram(name, help, labelNames = [], buckets = DURATION_BUCKETS) {
      const full = `${prefix}${name}`;
      let h = histograms.get(full);
      if (!h) {
        h = new Histogram({ name: full, help, labelNames, buckets, registers: [registry] });
        histograms.set(full, h);
      }
      return h;
    },
    sampleGauge(name, help, labelNames, sampler, minIntervalMs = DEFAULT_SAMPLE_INTERVAL_MS) {
      const full = `${prefix}${name}`;
      let samplers = gauges.get(full);
      if (!samplers) {
        const set = new Set<Sampler>();
        samplers = set;
        gauges.set(full, set);
        new Gauge({
          name: full,
          help,
          labelNames,
          registers: [registry],
          async collect() {
            const readings = await Promise.all([...set].map((s) => s.read()));
            this.reset();
            for (const sample of readings.flat()) this.set(sample.labels, sample.value);
          },
        });
      }
      const entry = cachedSampler(sampler, minIntervalMs);
      samplers.add(entry);
      return () => {
        samplers.delete(entry);
      };
    },
  };
}
