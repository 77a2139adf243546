import { parseArgs } from "node:util";

export const SCENARIOS = ["banks", "deposit", "deposit-get", "callbacks", "bank-reports", "sandbox-pay", "withdraw", "operator-lists", "merchant-dashboard"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
export const TARGETS = ["floors", "aio", "split"] as const;
export type TargetName = (typeof TARGETS)[number];

export interface BenchOptions {
  /** Seconds of measured load per scenario. */
  duration: number;
  /** Seconds of unmeasured load before each scenario (JIT, pools, caches). */
  warmup: number;
  connections: number;
  merchants: number;
  /** Status changes per second driven in the callback scenario. */
  callbackRate: number;
  /** Measured seconds of the callback scenario (its own, not --duration: issue 22's target is 500/s sustained for 60 s). */
  callbackDuration: number;
  /** Pending deposits on the two receiving accounts of the bank-reports and sandbox-pay scenarios (each its own set). */
  reportDeposits: number;
  /** Bank reports (ReportTransfer) per second offered in the bank-reports scenario. */
  reportRate: number;
  /** Signed sandbox payments per second offered in the sandbox-pay scenario. */
  payRate: number;
  scenarios: ScenarioName[];
  targets: TargetName[];
  out?: string;
  cpuProf: boolean;
  quick: boolean;
  mysqlUrl: string;
  natsUrl: string;
}

export const USAGE = `pnpm bench [options]

Starts the floors, the all-in-one product and the split product on MySQL + JetStream, loads
each with signed requests (autocannon), and prints and saves the figures.

bank-reports and sandbox-pay (issue 18; aio and split only) make pending deposits on the two
receiving accounts of a bank of the bench's own, pay each once at a fixed rate (open loop: the
deposit RPC ReportTransfer, or the signed sandbox pay helper on the gateway), then check that
every deposit was completed and credited exactly once. Target: bank-reports with 0 errors and
p99 <= 250 ms for 3000 deposits at 500/s.
  e.g. pnpm bench --targets aio,split --only bank-reports,sandbox-pay

operator-lists (issue 23; aio and split) fills the deposit database with 100,000 deposits,
10,000 open transfers and 10,000 audit records (clones of rows the service wrote), then times
the pages an operator's screens ask for, one call after another. Target: each p95 <= 200 ms.
  e.g. pnpm bench --targets aio --only operator-lists

merchant-dashboard (issue 24; aio only: the all-in-one then serves its console on CONSOLE_PORT)
gives one merchant 100,000 deposits over 60 days (clones of a row the service wrote), signs a
merchant owner in through the console's pages, and times GET /merchant/payments (first pages,
pages deep by the next link, each filter) and GET /merchant/payments.csv of 10,000 rows, one
request after another. Targets: each list p95 <= 200 ms, each export <= 2 s.
  e.g. pnpm bench --targets aio --only merchant-dashboard

  --duration <s>        measured seconds per scenario (default 8; --quick: 2)
  --warmup <s>          unmeasured seconds before each scenario (default 2; --quick: 0.5)
  --connections <n>     concurrent connections (default 32)
  --merchants <n>       merchants the load is spread over (default 64)
  --callback-rate <n>   status changes per second in the callback scenario (default 500)
  --callback-duration <s> measured seconds of the callback scenario, instead of --duration (default 60;
                        --quick: 5); rate x duration pending deposits are made beforehand
  --report-deposits <n> pending deposits on two receiving accounts of one bank that bank-reports
                        and sandbox-pay each pay, one transfer per deposit (default 3000; --quick: 1000)
  --report-rate <n>     bank reports (deposit RPC ReportTransfer) per second, open loop (default 500)
  --pay-rate <n>        POST /v1/sandbox/deposit/{id}/pay per second, open loop (default 150)
  --only <list>         scenarios: ${SCENARIOS.join(",")} (default all)
  --targets <list>      targets: ${TARGETS.join(",")} (default all)
  --out <file>          JSON output (default var/bench/bench-<timestamp>.json, and var/bench/latest.json)
  --cpu-prof            write V8 CPU profiles of the product processes to var/bench/profiles/
  --quick               a smoke run: 2 s scenarios, 5 s of callbacks, 1000 report deposits
  -h, --help            this text

Environment: BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306), BENCH_NATS_URL (default nats://127.0.0.1:4222),
BENCH_LOG_DIR (unset: off; set: every line each product process prints goes to <dir>/<name>.log).
Exit code 1 when any request failed or got a non-2xx answer, a bank report or sandbox payment
failed or did not complete its deposit exactly once, or a balance differs from its ledger.
Issue 22's targets end the report (PASS, MISS, not run, or n/a outside the target's setting:
the callbacks' is 500/s for 60 s); no target changes the exit code.`;

function list<T extends string>(value: string | undefined, allowed: readonly T[], what: string): T[] {
  if (value === undefined) return [...allowed];
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) if (!(allowed as readonly string[]).includes(item)) throw new Error(`unknown ${what} "${item}" (known: ${allowed.join(", ")})`);
  // In the canonical order, whatever order they were given in.
  return allowed.filter((a) => items.includes(a));
}

function positive(value: string | undefined, fallback: number, what: string, integer = false): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new Error(`--${what} must be a positive ${integer ? "integer" : "number"} (got "${value}")`);
  return n;
}

export function parseOptions(argv: string[]): BenchOptions | "help" {
  // `pnpm bench -- --quick` passes the "--" through.
  const args = argv.filter((a) => a !== "--");
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: "string" },
      warmup: { type: "string" },
      connections: { type: "string" },
      merchants: { type: "string" },
      "callback-rate": { type: "string" },
      "callback-duration": { type: "string" },
      "report-deposits": { type: "string" },
      "report-rate": { type: "string" },
      "pay-rate": { type: "string" },
      only: { type: "string" },
      targets: { type: "string" },
      out: { type: "string" },
      "cpu-prof": { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return "help";
  const quick = values.quick;
  return {
    duration: positive(values.duration, quick ? 2 : 8, "duration"),
    warmup: values.warmup === "0" ? 0 : positive(values.warmup, quick ? 0.5 : 2, "warmup"),
    connections: positive(values.connections, 32, "connections", true),
    merchants: positive(values.merchants, 64, "merchants", true),
    callbackRate: positive(values["callback-rate"], 500, "callback-rate"),
    callbackDuration: positive(values["callback-duration"], quick ? 5 : 60, "callback-duration"),
    reportDeposits: positive(values["report-deposits"], quick ? 1_000 : 3_000, "report-deposits", true),
    reportRate: positive(values["report-rate"], 500, "report-rate"),
    payRate: positive(values["pay-rate"], 150, "pay-rate"),
    scenarios: list(values.only, SCENARIOS, "scenario"),
    targets: list(values.targets, TARGETS, "target"),
    ...(values.out ? { out: values.out } : {}),
    cpuProf: values["cpu-prof"],
    quick,
    mysqlUrl: process.env.BENCH_MYSQL_URL ?? "mysql://root@127.0.0.1:3306",
    natsUrl: process.env.BENCH_NATS_URL ?? "nats://127.0.0.1:4222",
  };
}
