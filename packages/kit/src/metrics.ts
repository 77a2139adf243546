import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface Metrics {
  registry: Registry;
  rpcDuration: Histogram<"service" | "method" | "code">;
  counter(name: string, help: string, labelNames?: string[]): Counter<string>;
}

/** One Prometheus registry per process, with Node's default metrics and the RPC histogram. */
export function createMetrics(prefix = "payments_"): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  const rpcDuration = new Histogram({
    name: `${prefix}rpc_server_duration_seconds`,
    help: "Duration of handled RPCs by service, method and result code",
    labelNames: ["service", "method", "code"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const counters = new Map<string, Counter<string>>();
  return {
    registry,
    rpcDuration,
    counter(name, help, labelNames = []) {
      const full = `${prefix}${name}`;
      let c = counters.get(full);
      if (!c) {
        c = new Counter({ name: full, help, labelNames, registers: [registry] });
        counters.set(full, c);
      }
      return c;
    },
  };
}
