// The cost of the shared rate limits per request, against the in-memory ones (BENCHMARKS.md,
// "Issue 21"). Not a test: run it alone on a quiet machine,
//   node --conditions=source --import tsx gateway/test/shared-rate-limits.bench.ts [takes]
// against the NATS at BENCH_NATS_URL (default nats://127.0.0.1:4222). It measures
// RateLimiter.take and waitMs directly (what each request of the gateway awaits): latency,
// throughput, and CPU time of this process and, when it can read /proc, of the nats-server.
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { createMetrics, systemClock } from "@payments/kit";
import { uniqueName } from "@payments/testing";
import { NatsRateLimits } from "../src/nats-rate-limits.js";
import { MemoryRateLimits, type RateLimiter } from "../src/rate-limit-store.js";

const url = process.env.BENCH_NATS_URL ?? "nats://127.0.0.1:4222";
const takes = Number(process.argv[2] ?? 4000);
// Never refuses during the run: every take reads and writes.
const limit = { perSecond: 1_000_000, burst: 1_000_000 };

/** utime + stime of the nats-server listening on the URL's port (or the only one), in ms; undefined when /proc says nothing. */
function natsCpuMs(): number | undefined {
  const port = new URL(url).port || "4222";
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!args[0]?.endsWith("nats-server")) continue;
      const p = args.indexOf("-p");
      if (p >= 0 && args[p + 1] !== port) continue;
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ");
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      continue;
    }
  }
  return undefined;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

interface Row {
  scenario: string;
  store: string;
  takesPerSecond: number;
  p50Us: number;
  p99Us: number;
  gatewayCpuUsPerTake: number;
  natsCpuUsPerTake?: number;
  fallbacks: number;
}

async function run(scenario: string, store: string, limiters: RateLimiter[], inFlight: number, keyOf: (i: number) => string, op: "take" | "waitMs", fallbacks: () => Promise<number>): Promise<Row> {
  // Warm-up, unmeasured.
  for (let i = 0; i < 200; i++) await limiters[i % limiters.length]![op](keyOf(i), limit);
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const nats0 = natsCpuMs();
  const before = await fallbacks();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < takes) {
        const i = next++;
        const t0 = performance.now();
        await limiters[i % limiters.length]![op](keyOf(i), limit);
        latencies.push((performance.now() - t0) * 1000);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const nats1 = natsCpuMs();
  latencies.sort((a, b) => a - b);
  return {
    scenario,
    store,
    takesPerSecond: Math.round(takes / seconds),
    p50Us: Math.round(quantile(latencies, 0.5)),
    p99Us: Math.round(quantile(latencies, 0.99)),
    gatewayCpuUsPerTake: Math.round(((cpu.user + cpu.system) / takes) * 10) / 10,
    ...(nats0 !== undefined && nats1 !== undefined ? { natsCpuUsPerTake: Math.round((((nats1 - nats0) * 1000) / takes) * 10) / 10 } : {}),
    fallbacks: (await fallbacks()) - before,
  };
}

const bucket = uniqueName("BENCH_RL_");
const metrics = createMetrics();
const fallbackCount = async () => {
  const text = await metrics.registry.getSingleMetricAsString("payments_gateway_rate_limit_fallbacks_total");
  return text
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"))
    .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
};
const open = (leaseMs: number) => NatsRateLimits.open({ url, bucket, ttlMs: 60_000, timeoutMs: 50, leaseMs, clock: systemClock, metrics });
const stores = [open(0), open(0), open(100), open(100)];
for (const store of stores) if (!(await store.whenReady(10_000))) throw new Error(`NATS is not reachable at ${url}`);
const [a, b, leasingA, leasingB] = stores as [NatsRateLimits, NatsRateLimits, NatsRateLimits, NatsRateLimits];
const memory = new MemoryRateLimits({ clock: systemClock });
const none = () => Promise.resolve(0);

const scenarios: Array<[string, number, (i: number) => string, "take" | "waitMs"]> = [
  ["take, 1 in flight, 64 keys", 1, (i) => `m${i % 64}`, "take"],
  ["take, 1 in flight, 1 key", 1, () => "one", "take"],
  ["take, 32 in flight, 64 keys", 32, (i) => `m${i % 64}`, "take"],
  ["take, 32 in flight, 1 key", 32, () => "hot", "take"],
  ["waitMs (failed-auth check), 32 in flight, 64 keys", 32, (i) => `ip${i % 64}`, "waitMs"],
];
const rows: Row[] = [];
let round = 0;
for (const [name, inFlight, keyOf, op] of scenarios) {
  // Each scenario on keys of its own (a prefix per round), so no store starts with another's leases.
  const keys = (prefix: string) => (i: number) => `${prefix}${round}-${keyOf(i)}`;
  rows.push(await run(name, "memory", [memory.limiter()], inFlight, keys("mem"), op, none));
  rows.push(await run(name, "nats, no lease, 1 gateway", [a.limiter("x")], inFlight, keys("one"), op, fallbackCount));
  rows.push(await run(name, "nats, no lease, 2 gateways", [a.limiter("x"), b.limiter("x")], inFlight, keys("two"), op, fallbackCount));
  rows.push(await run(name, "nats, lease 100 ms, 2 gateways", [leasingA.limiter("x"), leasingB.limiter("x")], inFlight, keys("lease"), op, fallbackCount));
  round++;
}
console.table(rows);
for (const store of stores) await store.close();
const nc = await connect({ servers: url });
await (await jetstreamManager(nc)).streams.delete(`KV_${bucket}`).catch(() => undefined);
await nc.close();
