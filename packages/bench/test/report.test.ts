import test from "ava";
import type { CallbackFigures } from "../src/callback-latency.js";
import type { LoadFigures } from "../src/load.js";
import { statementsPer, type StatusCounters } from "../src/mysql-status.js";
import { compareWithFloors, ENDPOINTS, formatReport, issue22Targets, type BenchReport, type ProcessFigures, type ScenarioResult } from "../src/report.js";

// The report's arithmetic on made-up figures: the floor ratios, issue 22's targets and the
// statements per request. The bench itself (`pnpm bench`) is not run here.

function load(requestsPerSecond: number, p99: number): LoadFigures {
  return {
    requests: requestsPerSecond * 2,
    seconds: 2,
    requestsPerSecond,
    latencyMs: { p50: p99 / 2, p90: p99 * 0.8, p99, max: p99 * 2, mean: p99 / 2 },
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {},
    warmup: { requests: 0, non2xx: 0, errors: 0 },
    serverCpuMs: 0,
    serverCpuMsPerRequest: 1,
    failureSamples: [],
  };
}

function callbacks(overrides: Partial<CallbackFigures> & { backlogAtEnd?: number } = {}): CallbackFigures {
  const { backlogAtEnd = 20, ...rest } = overrides;
  const seconds = rest.durationSeconds ?? 60;
  return {
    targetRate: 500,
    durationSeconds: 60,
    achievedRate: 499,
    sendSeconds: 60,
    sent: 29_940,
    confirmFailures: 0,
    received: 29_940,
    missing: 0,
    duplicates: 0,
    latencyMs: { p50: 20, p90: 40, p99: 80, max: 150 },
    fromConfirmAnswerMs: { p50: 18, p99: 75 },
    drainSeconds: 0.1,
    backlog: {
      samples: [{ t: 60, confirmed: 29_940, received: 29_940 - backlogAtEnd, backlog: backlogAtEnd }],
      ...(seconds >= 10 ? { atTenSeconds: 15 } : {}),
      atEndOfSending: backlogAtEnd,
      max: Math.max(30, backlogAtEnd),
      arrivalsPerSecond: { fromSecond: 30, perSecond: [500, 498], min: 498, mean: 499, max: 500 },
    },
    serverCpuMs: 30_000,
    serverCpuMsPerEvent: 1.2,
    failureSamples: [],
    ...rest,
  };
}

const floors = (): ScenarioResult[] => [
  { target: "floors", floor: "hmac", scenario: "banks", endpoint: ENDPOINTS.banks, load: load(10_000, 5) },
  { target: "floors", floor: "db", scenario: "deposit", endpoint: ENDPOINTS.deposit, load: load(1_500, 30) },
  { target: "floors", floor: "db", scenario: "withdraw", endpoint: ENDPOINTS.withdraw, load: load(1_600, 30) },
  { target: "floors", floor: "raw", scenario: "deposit", endpoint: ENDPOINTS.deposit, load: load(2_000, 20) },
  { target: "floors", floor: "raw", scenario: "withdraw", endpoint: ENDPOINTS.withdraw, load: load(2_100, 20) },
];

const aioProcesses: ProcessFigures[] = [{ target: "aio", name: "all-in-one", coldStartMs: 900, idleRssMiB: 104.5 }];
const compiled = "--enable-source-maps packages/all-in-one/dist/main.js";

test("the writes are compared with the knex DB floor and the raw floor, each the row of its own floor", (t) => {
  const results = [...floors(), { target: "aio", scenario: "deposit", endpoint: ENDPOINTS.deposit, load: load(1_000, 35) } satisfies ScenarioResult];
  compareWithFloors(results);
  const aio = results.at(-1)!;
  t.deepEqual(aio.vsFloor, { floor: "db", requestsPerSecondRatio: 0.67, p99Ratio: 1.17 });
  t.deepEqual(aio.vsRawFloor, { floor: "raw", requestsPerSecondRatio: 0.5, p99Ratio: 1.75 });
});

test("every target PASSes on figures inside it, in its setting", (t) => {
  const results: ScenarioResult[] = [
    ...floors(),
    { target: "aio", scenario: "banks", endpoint: ENDPOINTS.banks, load: load(7_500, 6) },
    { target: "aio", scenario: "deposit", endpoint: ENDPOINTS.deposit, load: load(1_300, 38) },
    { target: "aio", scenario: "withdraw", endpoint: ENDPOINTS.withdraw, load: load(900, 60) },
    { target: "aio", scenario: "callbacks", endpoint: ENDPOINTS.callbacks, callbacks: callbacks() },
  ];
  const split: ProcessFigures[] = ["merchant", "gateway"].map((name) => ({ target: "split", name, coldStartMs: 500, idleRssMiB: 101 }));
  const lines = issue22Targets(results, [...aioProcesses, ...split], compiled);
  t.deepEqual(
    lines.map((l) => [l.id, l.result]),
    [
      ["callbacks", "PASS"],
      ["cpu-per-status-change", "PASS"],
      ["withdraw-vs-db-floor", "PASS"],
      ["deposit-vs-raw-floor", "PASS"],
      ["banks-vs-hmac-floor", "PASS"],
      ["idle-rss", "PASS"],
    ],
  );
  t.is(lines.find((l) => l.id === "deposit-vs-raw-floor")!.measured, "0.65× (1300 ÷ 2000 req/s); p99 1.90× (38 ÷ 20 ms)");
  t.is(lines.find((l) => l.id === "idle-rss")!.measured, "worst merchant 101 MiB; 0 of 2 over");
  t.regex(lines.find((l) => l.id === "idle-rss")!.note!, /^all-in-one 104.5 MiB \(shown, not judged/);
});

test("a target is MISS only when measured, not run when its scenario or floor did not run, n/a outside its setting", (t) => {
  const results: ScenarioResult[] = [
    ...floors().filter((r) => r.floor !== "raw"),
    { target: "aio", scenario: "withdraw", endpoint: ENDPOINTS.withdraw, load: load(700, 60) },
    { target: "aio", scenario: "deposit", endpoint: ENDPOINTS.deposit, load: load(1_300, 38) },
    { target: "aio", scenario: "callbacks", endpoint: ENDPOINTS.callbacks, callbacks: callbacks({ durationSeconds: 5, sendSeconds: 5, backlogAtEnd: 900, serverCpuMsPerEvent: 4.2 }) },
  ];
  const lines = issue22Targets(results, [{ ...aioProcesses[0]!, idleRssMiB: 128.3 }], compiled);
  const line = (id: string) => lines.find((l) => l.id === id)!;
  t.is(line("callbacks").result, "n/a");
  t.regex(line("callbacks").note!, /^run at 500\/s for 5 s; MISS there: backlog 900 > 500$/);
  t.regex(line("callbacks").measured, /^499\/s of 500\/s for 5 s; backlog 900 at the end of sending, max 900; p99 80 ms$/, "no backlog at 10 s in a 5 s run");
  t.is(line("cpu-per-status-change").result, "MISS");
  t.is(line("withdraw-vs-db-floor").result, "MISS");
  t.deepEqual([line("deposit-vs-raw-floor").result, line("deposit-vs-raw-floor").note], ["not run", "raw floor deposit not run"]);
  t.deepEqual([line("banks-vs-hmac-floor").result, line("banks-vs-hmac-floor").note], ["not run", "aio banks not run"]);
  t.is(line("idle-rss").result, "not run");
  t.regex(line("idle-rss").note!, /^split not run; all-in-one 128.3 MiB/);
  t.is(issue22Targets([], [], compiled).filter((l) => l.result === "not run").length, 6);
  const splitProcesses: ProcessFigures[] = [{ target: "split", name: "payout", coldStartMs: 500, idleRssMiB: 112 }];
  t.is(issue22Targets([], splitProcesses, "--conditions=source --import tsx packages/all-in-one/src/main.ts").find((l) => l.id === "idle-rss")!.result, "n/a");
  t.is(issue22Targets([], splitProcesses, compiled).find((l) => l.id === "idle-rss")!.result, "MISS");
});

test("the text report ends with the targets table, and shows both floor ratios, the backlog and the statements", (t) => {
  const counters = (questions: number): StatusCounters => ({ Questions: questions, Com_begin: questions / 4, Com_commit: questions / 4, Com_rollback: 0, Com_select: 0, Com_insert: questions / 2, Com_update: 0, Com_delete: 0, Com_stmt_execute: 0 });
  const results: ScenarioResult[] = [
    ...floors(),
    { target: "aio", scenario: "deposit", endpoint: ENDPOINTS.deposit, load: { ...load(1_300, 38), mysqlStatements: statementsPer(counters(100), counters(10_501), 2_600)! } },
    { target: "aio", scenario: "callbacks", endpoint: ENDPOINTS.callbacks, callbacks: { ...callbacks(), mysqlStatements: statementsPer(counters(0), counters(300_001), 29_940)! } },
  ];
  compareWithFloors(results);
  const report: BenchReport = {
    version: 1,
    startedAt: "2026-11-26T00:00:00.000Z",
    finishedAt: "2026-11-26T00:02:00.000Z",
    totalSeconds: 120,
    machine: { cpuModel: "test", cores: 2, memoryGiB: 4, nodeVersion: "v20", platform: "linux", gitCommit: "0123456789abcdef", gitDirty: false, loadAverageAtStart: 0 },
    settings: {
      duration: 2,
      warmup: 0.5,
      connections: 32,
      merchants: 64,
      callbackRate: 500,
      callbackDuration: 60,
      reportDeposits: 1_000,
      reportRate: 500,
      payRate: 150,
      scenarios: ["deposit", "callbacks"],
      targets: ["floors", "aio"],
      cpuProf: false,
      quick: true,
      mysqlUrl: "mysql://127.0.0.1:3306",
      natsUrl: "nats://127.0.0.1:4222",
      runId: "abc123",
      productEntry: compiled,
    },
    results,
    processes: aioProcesses,
    ledger: {},
    targets: issue22Targets(results, aioProcesses, compiled),
    failures: [],
    notes: [],
    exitCode: 0,
  };
  const text = formatReport(report);
  t.regex(text, /req\/s ÷ floor +p99 ÷ floor +req\/s ÷ raw +p99 ÷ raw/);
  t.regex(text, /aio +POST \/v1\/deposit .* 0\.87× +1\.27× +0\.65× +1\.90× .* 4\.00/);
  t.regex(text, /aio: 10\.02 MariaDB statements per status change \(300000 in all\)/);
  t.regex(text, /backlog at 10 s +at end of sending +max/);
  t.regex(text, /Issue 22 targets[^\n]*\n.*\n.*\ncallbacks \(aio\) 500\/s for 60 s: .* 499\/s of 500\/s for 60 s; backlog 15 at 10 s, 20 at the end of sending, max 30; p99 80 ms +PASS\n/);
  t.notRegex(text.slice(0, text.indexOf("Issue 22 targets")), /issue 11 target[^\n]*\n[^\n]*\naio +500\/s/, "the callbacks table has no issue-11 column any more");
  t.true(text.trimEnd().endsWith("RESULT: no failed request, ledgers balanced"));
});

test("statements per unit leave out the bench's own closing read, and are absent when a read failed", (t) => {
  const at = (q: number, begin: number): StatusCounters => ({ Questions: q, Com_begin: begin, Com_commit: begin, Com_rollback: 0, Com_select: 0, Com_insert: 2 * begin, Com_update: 0, Com_delete: 0, Com_stmt_execute: 0 });
  const figures = statementsPer(at(1_000, 10), at(1_401, 110), 100)!;
  t.is(figures.statements, 400);
  t.is(figures.perUnit, 4);
  t.like(figures.countersPerUnit, { Questions: 4, Com_begin: 1, Com_commit: 1, Com_insert: 2, Com_select: 0 });
  t.is(statementsPer(undefined, at(1, 1), 10), undefined);
  t.is(statementsPer(at(1, 1), at(2, 1), 0), undefined);
});
