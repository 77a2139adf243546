import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { createReportAccounts, runReportScenario, type ReportAccounts, type ReportScenario } from "./bank-reports.js";
import { runCallbackScenario, startCallbackReceiver, type CallbackReceiver } from "./callback-latency.js";
import { floorMerchants, startFloor } from "./floors.js";
import { checkLedger } from "./ledger-check.js";
import { runLoad, stopCurrentLoad, type Merchant } from "./load.js";
import { machineInfo } from "./machine.js";
import { MysqlStatus } from "./mysql-status.js";
import { parseOptions, USAGE, type BenchOptions, type ScenarioName } from "./options.js";
import { peakRssKib, pidListeningOn } from "./proc-stats.js";
import { createDeposits, createMerchants, startAllInOne, startSplit, type RunningProduct } from "./product.js";
import { compareWithFloors, ENDPOINTS, formatReport, issue22Targets, type BenchReport, type ProcessFigures, type ScenarioResult } from "./report.js";
import { banksPlan, depositGetPlan, depositPlan, withdrawPlan } from "./scenarios.js";
import { DEPOSIT_COMPLETED_TOPIC } from "@payments/contracts";
import { JetStreamBus } from "@payments/kit";
import { ScratchResources } from "./scratch-resources.js";
import { killAllServersNow, nodeEntry, repoRoot, stopAllServers } from "./server-process.js";
import { operatorListsOn } from "./operator-lists.js";
import { merchantDashboardOn } from "./merchant-dashboard.js";

let options: BenchOptions;
try {
  const parsed = parseOptions(process.argv.slice(2));
  if (parsed === "help") {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  options = parsed;
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
  process.exit(2);
}

const startedAt = new Date();
const started = performance.now();
const runId = randomBytes(3).toString("hex");
const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
const resources = new ScratchResources(options.mysqlUrl, options.natsUrl, runId);
const profileDir = options.cpuProf ? resolve(repoRoot, "var/bench/profiles", stamp) : undefined;
const results: ScenarioResult[] = [];
const processes: ProcessFigures[] = [];
const failures: string[] = [];
const notes: string[] = [];
const ledger: BenchReport["ledger"] = {};
const mysqlPid = pidListeningOn(Number(new URL(options.mysqlUrl).port || 3306));
const natsPid = pidListeningOn(Number(new URL(options.natsUrl).port || 4222));
const machine = machineInfo();
/** MariaDB's global statement counters, read around each measured window (statements per request or event). */
let mysqlStatus: MysqlStatus | undefined;

function log(message: string): void {
  const t = ((performance.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${t}s] ${message}\n`);
}

// Everything started is stopped and everything made is dropped, also on Ctrl-C.
process.on("exit", killAllServersNow);
let cleaning: Promise<void> | undefined;
const cleanup = () =>
  (cleaning ??= (async () => {
    await stopAllServers(15_000);
    for (const p of await resources.dropAll()) notes.push(`cleanup: ${p}`);
  })());
// Set by the signal handler, so not the literal `false` TS would narrow it to.
let interrupted = false as boolean;
const onSignal = (signal: NodeJS.Signals) => {
  if (interrupted) {
    killAllServersNow();
    process.exit(130);
  }
  interrupted = true;
  log(`${signal}: stopping every process this run started, dropping its databases and streams (again to kill at once)`);
  stopCurrentLoad();
  // Not awaited (a signal handler cannot wait): both outcomes end the process with 130, so a
  // failed cleanup is said, not lost as an unhandled rejection.
  void cleanup()
    .catch((err: unknown) => log(`cleanup failed: ${err instanceof Error ? err.message : String(err)}`))
    .then(() => {
      for (const note of notes.filter((n) => n.startsWith("cleanup:"))) log(note);
      log("stopped; no figures written");
      process.exit(130);
    });
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

const settle = (ms = 1_000) => new Promise((r) => setTimeout(r, ms));

/** The slowest pace, in deposits per second (POST /v1/deposit), the callback scenario's pending deposits are given time for. */
const CALLBACK_DEPOSITS_FLOOR_RATE = 250;

function loadSettings(url: string, serverPids: number[]) {
  return {
    url,
    connections: options.connections,
    durationSeconds: options.duration,
    warmupSeconds: options.warmup,
    serverPids,
    mysqlPid,
    natsPid,
    mysqlStatus,
  };
}

function recordLoad(result: ScenarioResult): void {
  results.push(result);
  const l = result.load!;
  const bad = l.non2xx + l.errors + l.warmup.non2xx + l.warmup.errors;
  const who = result.target === "floors" ? `floor:${result.floor}` : result.target;
  log(`${who} ${result.endpoint}: ${l.requestsPerSecond} req/s, p50 ${l.latencyMs.p50} ms, p99 ${l.latencyMs.p99} ms, cpu ${l.serverCpuMsPerRequest} ms/req${l.mysqlStatements ? `, ${l.mysqlStatements.perUnit} stmts/req` : ""}${bad ? `, ${bad} FAILED` : ""}`);
  if (bad > 0) failures.push(`${who} ${result.endpoint}: ${l.non2xx + l.warmup.non2xx} non-2xx, ${l.errors + l.warmup.errors} errors (${l.timeouts} timeouts); e.g. ${l.failureSamples.join(" | ") || "no body"}`);
}

const wants = (s: ScenarioName) => options.scenarios.includes(s);
/** Issue 23's setting: 100,000 deposits and 10,000 open transfers (--quick: a tenth), pages timed one after another. */
const OPERATOR_LISTS_SIZE = options.quick
  ? { deposits: 10_000, transfers: 1_000, auditRecords: 1_000, merchants: 20, samples: 40 }
  : { deposits: 100_000, transfers: 10_000, auditRecords: 10_000, merchants: 20, samples: 200 };
/** Issue 24's setting: one merchant's 100,000 deposits (--quick: a tenth), pages timed one after another, 5 exports of each filter. */
const MERCHANT_DASHBOARD_SIZE = options.quick ? { deposits: 10_000, samples: 40, exports: 2 } : { deposits: 100_000, samples: 200, exports: 5 };

async function runFloors(): Promise<void> {
  const merchants = floorMerchants(options.merchants);
  const tag = `f${runId}`;
  if (wants("banks") || wants("deposit-get")) {
    log("starting the HMAC floor");
    const floor = await startFloor("hmac", merchants, resources);
    processes.push({ target: "floors", name: "hmac-floor", coldStartMs: floor.coldStartMs });
    const settings = loadSettings(floor.url, [floor.server.pid]);
    if (wants("banks")) recordLoad({ target: "floors", floor: "hmac", scenario: "banks", endpoint: ENDPOINTS.banks, load: await runLoad(settings, banksPlan(merchants)) });
    if (wants("deposit-get")) {
      const ids = merchants.map((_, i) => Array.from({ length: 10 }, (_, k) => `dep_floor${i}x${k}`));
      recordLoad({ target: "floors", floor: "hmac", scenario: "deposit-get", endpoint: ENDPOINTS["deposit-get"], load: await runLoad(settings, depositGetPlan(merchants, ids)) });
    }
    processes.at(-1)!.peakRssMiB = Math.round(((peakRssKib(floor.server.pid) ?? 0) / 1024) * 10) / 10;
    await floor.server.stop();
  }
  if (wants("deposit") || wants("withdraw")) {
    // The knex DB floor, then the raw one (the same rows through mysql2 itself), each on databases of its own.
    for (const kind of ["db", "raw"] as const) {
      log(`starting the ${kind === "db" ? "DB (knex)" : "raw DB (mysql2)"} floor`);
      const floor = await startFloor(kind, merchants, resources);
      processes.push({ target: "floors", name: `${kind}-floor`, coldStartMs: floor.coldStartMs });
      const settings = loadSettings(floor.url, [floor.server.pid]);
      if (wants("deposit")) recordLoad({ target: "floors", floor: kind, scenario: "deposit", endpoint: ENDPOINTS.deposit, load: await runLoad(settings, depositPlan(merchants, `${tag}${kind}d`)) });
      if (wants("withdraw")) recordLoad({ target: "floors", floor: kind, scenario: "withdraw", endpoint: ENDPOINTS.withdraw, load: await runLoad(settings, withdrawPlan(merchants, `${tag}${kind}w`)) });
      processes.at(-1)!.peakRssMiB = Math.round(((peakRssKib(floor.server.pid) ?? 0) / 1024) * 10) / 10;
      await floor.server.stop();
    }
  }
}

async function runProduct(target: "aio" | "split"): Promise<void> {
  let receiver: CallbackReceiver | undefined;
  let product: RunningProduct | undefined;
  try {
    receiver = await startCallbackReceiver();
    log(`starting the ${target === "aio" ? "all-in-one process" : "split deployment (5 services + gateway, one at a time)"}`);
    // The merchant dashboard needs the all-in-one's console (CONSOLE_PORT, both audiences), as `pnpm start` serves it.
    const withConsole = wants("merchant-dashboard");
    product = target === "aio" ? await startAllInOne(resources, { profileDir, idleMs: 3_000, console: withConsole }) : await startSplit(resources, { profileDir, idleMs: 3_000 });
    if (target === "aio" && withConsole) notes.push("aio: started with its console on CONSOLE_PORT (merchant-dashboard), so its cold start and idle RSS include the console");
    for (const p of product.processes) processes.push({ target, name: p.name, coldStartMs: p.coldStartMs, ...(p.idleRssMiB !== undefined ? { idleRssMiB: p.idleRssMiB } : {}) });
    log(`${target} ready: ${product.processes.map((p) => `${p.name} ${p.coldStartMs} ms, ${p.idleRssMiB ?? "?"} MiB idle`).join("; ")}`);

    const merchants: Merchant[] = await createMerchants(product, options.merchants, receiver.url);
    log(`${merchants.length} sandbox merchants created, funded, rate limit off, callbacks to ${receiver.url}`);
    const settings = loadSettings(product.gatewayUrl, product.pids);
    const tag = `${target === "aio" ? "a" : "s"}${runId}`;
    // Deposits made so far, pending, by merchant: read by deposit-get, confirmed by callbacks.
    const idsByMerchant: string[][] = merchants.map(() => []);
    const pending: string[] = [];
    const remember = (index: number, id: string) => {
      idsByMerchant[index]?.push(id);
      pending.push(id);
    };

    if (wants("banks")) {
      recordLoad({ target, scenario: "banks", endpoint: ENDPOINTS.banks, load: await runLoad(settings, banksPlan(merchants)) });
      await settle();
    }
    if (wants("deposit")) {
      recordLoad({ target, scenario: "deposit", endpoint: ENDPOINTS.deposit, load: await runLoad(settings, depositPlan(merchants, `${tag}d`, remember)) });
      await settle();
    }
    if (wants("deposit-get")) {
      if (pending.length === 0) for (const d of await createDeposits(product, merchants, merchants.length * 10, `${tag}r`)) remember(d.merchantIndex, d.id);
      recordLoad({ target, scenario: "deposit-get", endpoint: ENDPOINTS["deposit-get"], load: await runLoad(settings, depositGetPlan(merchants, idsByMerchant)) });
      await settle();
    }
    if (wants("callbacks")) {
      // One second of warm-up at most: every event needs a pending deposit of its own.
      const warmupEvents = Math.round(options.callbackRate * Math.min(1, options.warmup));
      const measuredEvents = Math.round(options.callbackRate * options.callbackDuration);
      const needed = warmupEvents + measuredEvents - pending.length;
      if (needed > 0) {
        // As long as making them at CALLBACK_DEPOSITS_FLOOR_RATE takes (500/s for 60 s: 30,000 deposits, 2 minutes at most), never under 15 s (--quick) or 30 s.
        const budgetSeconds = Math.max(options.quick ? 15 : 30, Math.ceil(needed / CALLBACK_DEPOSITS_FLOOR_RATE));
        log(`creating up to ${needed} more pending deposits (POST /v1/deposit, at most ${budgetSeconds} s) to confirm`);
        const t0 = performance.now();
        const made = await createDeposits(product, merchants, needed, `${tag}c`, t0 + budgetSeconds * 1000);
        for (const d of made) remember(d.merchantIndex, d.id);
        const rate = made.length / ((performance.now() - t0) / 1000);
        log(`${made.length} made, ${rate.toFixed(0)}/s`);
        if (made.length < needed) notes.push(`${target} callbacks: only ${made.length} of ${needed} extra pending deposits could be made in ${budgetSeconds} s (${rate.toFixed(0)}/s through the gateway), so the callback scenario ran short of ${options.callbackRate}/s for --callback-duration ${options.callbackDuration} s`);
      }
      const drainTimeoutMs = options.quick ? 10_000 : 20_000;
      // An observer on the product's stream: when each deposit_completed left the outbox.
      const seenOnStream = new Map<string, number>();
      const observer = await JetStreamBus.connect({ url: product.stream.NATS_URL, stream: product.stream.NATS_STREAM, subjectPrefix: product.stream.NATS_SUBJECT_PREFIX, name: "bench-observer" });
      const watching = await observer.watch([DEPOSIT_COMPLETED_TOPIC], async (m) => void seenOnStream.set(m.msgId, Date.now()));
      const scenario = (ids: string[], seconds: number) =>
        runCallbackScenario({
          // Confirming is an operator's decision: signed (a fresh assertion each), carried by the workload `bench`, and audited.
          deposits: product!.clients.deposits,
          receiver: receiver!,
          pendingDepositIds: ids,
          rate: options.callbackRate,
          durationSeconds: seconds,
          drainTimeoutMs,
          serverPids: product!.pids,
          processes: product!.processes.map((p) => ({ name: p.name, pid: p.server.pid })),
          seenOnStream,
          mysqlStatus,
        });
      const warmIds = pending.splice(0, Math.min(warmupEvents, Math.floor(pending.length / 5)));
      if (warmIds.length > 0) {
        const warm = await scenario(warmIds, warmIds.length / options.callbackRate);
        if (warm.confirmFailures > 0) failures.push(`${target} callbacks (warm-up): ${warm.confirmFailures} confirm RPCs failed; e.g. ${warm.failureSamples.join(" | ")}`);
      }
      const figures = await scenario(pending.splice(0, measuredEvents), options.callbackDuration);
      await watching.stop();
      await observer.close();
      results.push({ target, scenario: "callbacks", endpoint: ENDPOINTS.callbacks, callbacks: figures });
      log(
        `${target} callbacks: ${figures.sent} sent at ${figures.achievedRate}/s, ${figures.received} received, p50 ${figures.latencyMs.p50} ms, p99 ${figures.latencyMs.p99} ms, max ${figures.latencyMs.max} ms; backlog ${figures.backlog.atTenSeconds ?? "—"} at 10 s, ${figures.backlog.atEndOfSending} at the end of sending, max ${figures.backlog.max}; cpu ${figures.serverCpuMsPerEvent} ms/event${figures.mysqlStatements ? `, ${figures.mysqlStatements.perUnit} stmts/event` : ""}`,
      );
      if (figures.confirmFailures > 0) failures.push(`${target} callbacks: ${figures.confirmFailures} confirm RPCs failed; e.g. ${figures.failureSamples.join(" | ")}`);
      if (figures.missing > 0) notes.push(`${target}: ${figures.missing} of ${figures.sent} deposit.completed callbacks had not arrived ${drainTimeoutMs / 1000} s after the last confirm`);
      await settle();
    }
    let reportAccounts: ReportAccounts | undefined;
    for (const scenario of ["bank-reports", "sandbox-pay"] as const satisfies readonly ReportScenario[]) {
      if (!wants(scenario)) continue;
      try {
        if (!reportAccounts) {
          reportAccounts = await createReportAccounts(product, tag);
          log(`${target}: bank ${reportAccounts.bankCode} (${reportAccounts.bankId}) with exactly two active sandbox accounts: ${reportAccounts.accounts.map((a) => a.iban).join(", ")}`);
        }
        const figures = await runReportScenario({
          scenario,
          product,
          merchants,
          accounts: reportAccounts,
          count: options.reportDeposits,
          rate: scenario === "bank-reports" ? options.reportRate : options.payRate,
          warmupSeconds: options.warmup,
          tag: `${tag}${scenario === "bank-reports" ? "b" : "p"}`,
          mysqlPid,
          natsPid,
          log,
        });
        results.push({ target, scenario, endpoint: ENDPOINTS[scenario], reports: figures });
        const bad = figures.errors + figures.warmup.errors;
        log(
          `${target} ${scenario}: ${figures.sent} at ${figures.achievedRate}/s (asked ${figures.targetRate}/s), ${figures.ok} ok, ${bad} errors, p50 ${figures.latencyMs.p50} ms, p99 ${figures.latencyMs.p99} ms, max ${figures.latencyMs.max} ms (send lag p99 ${figures.scheduleLagMs.p99} ms), cpu ${figures.serverCpuMsPerCall} ms/call; ${figures.check.ok ? "every deposit completed and credited once" : `${figures.check.notCompletedOnce} NOT completed exactly once`} (drain ${figures.check.drainSeconds} s)`,
        );
        if (bad > 0) {
          const codes = { ...figures.warmup.errorsByCode };
          for (const [code, n] of Object.entries(figures.errorsByCode)) codes[code] = (codes[code] ?? 0) + n;
          failures.push(`${target} ${scenario}: ${bad} of ${figures.sent + figures.warmup.sent} calls failed (warm-up included): ${Object.entries(codes).map(([c, n]) => `${c} ${n}`).join(", ")}; e.g. ${[...figures.warmup.failureSamples, ...figures.failureSamples].slice(0, 3).join(" | ")}`);
        }
        if (!figures.check.ok) failures.push(`${target} ${scenario}: ${figures.check.notCompletedOnce} of ${figures.check.deposits} deposits not completed exactly once: ${figures.check.mismatches.slice(0, 3).join("; ")}`);
        if (figures.heldBack > 0) notes.push(`${target} ${scenario}: ${figures.heldBack} calls waited for one of ${figures.maxInFlight} unanswered calls, so less than ${figures.targetRate}/s was offered (${figures.achievedRate}/s)`);
      } catch (err) {
        failures.push(`${target} ${scenario}: could not run: ${(err as Error).stack ?? String(err)}`);
      }
      await settle();
    }
    if (wants("withdraw")) {
      recordLoad({ target, scenario: "withdraw", endpoint: ENDPOINTS.withdraw, load: await runLoad(settings, withdrawPlan(merchants, `${tag}w`)) });
    }
    if (wants("operator-lists")) {
      // Last: it fills the deposit database to 100,000 deposits, which no other scenario should run on.
      try {
        log(`${target}: operator lists on a full deposit database`);
        const lists = await operatorListsOn(product, OPERATOR_LISTS_SIZE);
        results.push({ target, scenario: "operator-lists", endpoint: ENDPOINTS["operator-lists"], lists });
        log(`${target} operator lists: ${lists.lists.map((l) => `${l.list} p95 ${l.p95Ms} ms`).join("; ")}`);
      } catch (err) {
        failures.push(`${target} operator-lists: could not run: ${(err as Error).stack ?? String(err)}`);
      }
    }
    if (wants("merchant-dashboard")) {
      if (target !== "aio") notes.push(`${target} merchant-dashboard: not run (only the all-in-one serves the console in the bench)`);
      else {
        // Last too: one merchant's 100,000 deposits in the same deposit database.
        try {
          log(`${target}: merchant dashboard on one merchant's ${MERCHANT_DASHBOARD_SIZE.deposits} deposits`);
          const dashboard = await merchantDashboardOn(product, MERCHANT_DASHBOARD_SIZE);
          results.push({ target, scenario: "merchant-dashboard", endpoint: ENDPOINTS["merchant-dashboard"], dashboard });
          log(`${target} merchant dashboard: ${dashboard.pages.map((l) => `${l.list} p95 ${l.p95Ms} ms`).join("; ")}; exports ${dashboard.exports.map((e) => `${e.export} ${e.rows} rows p95 ${e.p95Ms} ms`).join("; ")}`);
          for (const p of dashboard.problems) failures.push(`${target} merchant-dashboard: ${p}`);
        } catch (err) {
          failures.push(`${target} merchant-dashboard: could not run: ${(err as Error).stack ?? String(err)}`);
        }
      }
    }

    log(`${target}: checking every merchant's balances against its ledger`);
    const check = await checkLedger(product.clients.payouts, merchants.map((m) => m.merchantId));
    ledger[target] = check;
    if (!check.ok) failures.push(`${target} ledger: ${check.mismatches.length} balances differ from their ledger: ${check.mismatches.slice(0, 3).join("; ")}`);
    log(`${target} ledger: ${check.ok ? "balanced" : "MISMATCH"} (${check.entries} entries)`);
  } finally {
    if (product) {
      for (const p of product.processes) {
        const figures = processes.find((f) => f.target === target && f.name === p.name);
        const peak = peakRssKib(p.server.pid);
        if (figures && peak !== undefined) figures.peakRssMiB = Math.round((peak / 1024) * 10) / 10;
      }
      log(`stopping ${target}`);
      const exits = await product.stop();
      for (const e of exits) {
        const figures = processes.find((f) => f.target === target && f.name === e.name);
        if (figures) figures.exit = { code: e.code, signal: e.signal };
        if (e.code !== 0) notes.push(`${target} ${e.name} exited with ${e.code ?? e.signal} on SIGTERM`);
        if (profileDir && figures) {
          const dir = join(profileDir, target === "aio" ? e.name : `split-${e.name}`);
          const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")) : [];
          figures.profiles = files.map((f) => relative(repoRoot, join(dir, f)));
          if (files.length === 0) notes.push(`${target} ${e.name}: no CPU profile was written in ${relative(repoRoot, dir)}`);
        }
      }
    }
    await receiver?.stop();
  }
}

let exitCode = 0;
try {
  log(
    `run ${runId}: targets ${options.targets.join(",")}, scenarios ${options.scenarios.join(",")}, ${options.duration} s each${wants("callbacks") ? ` (callbacks ${options.callbackDuration} s at ${options.callbackRate}/s)` : ""}, ${options.connections} connections`,
  );
  if (machine.loadAverageAtStart > 0.5 * machine.cores) notes.push(`the machine was busy at the start (load average ${machine.loadAverageAtStart} on ${machine.cores} cores): figures are lower than on a quiet machine`);
  try {
    mysqlStatus = await MysqlStatus.open(options.mysqlUrl);
  } catch (err) {
    notes.push(`no MariaDB statement counts: could not connect to read SHOW GLOBAL STATUS (${(err as Error).message})`);
  }
  if (options.targets.includes("floors")) await runFloors();
  if (options.targets.includes("aio")) await runProduct("aio");
  if (options.targets.includes("split")) await runProduct("split");
} catch (err) {
  failures.push(`run aborted: ${(err as Error).stack ?? String(err)}`);
} finally {
  await mysqlStatus?.close();
  await cleanup();
}
// After Ctrl-C the signal handler exits once everything is stopped and dropped.
if (interrupted) await new Promise(() => undefined);

compareWithFloors(results);
const productEntry = nodeEntry("packages/all-in-one").join(" ").replace(`${repoRoot}/`, "");
if (failures.length > 0) exitCode = 1;
const report: BenchReport = {
  version: 1,
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  totalSeconds: Math.round((performance.now() - started) / 100) / 10,
  machine,
  settings: {
    ...options,
    mysqlUrl: options.mysqlUrl.replace(/\/\/[^@/]*@/, "//"),
    natsUrl: options.natsUrl,
    runId,
    productEntry,
  },
  results,
  processes,
  ledger,
  targets: issue22Targets(results, processes, productEntry),
  failures,
  notes,
  exitCode,
};
if (profileDir) notes.push(`CPU profiles in ${relative(repoRoot, profileDir)}: open a .cpuprofile in Chrome DevTools (Performance) or VS Code`);

const outputs = options.out ? [resolve(options.out)] : [resolve(repoRoot, "var/bench", `bench-${stamp}.json`), resolve(repoRoot, "var/bench/latest.json")];
for (const file of outputs) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
process.stdout.write(`\n${formatReport(report)}\n`);
process.stdout.write(`figures written to ${outputs.map((f) => relative(process.cwd(), f) || f).join(" and ")}\n`);
process.exit(exitCode);
