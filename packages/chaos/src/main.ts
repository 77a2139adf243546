import { randomInt } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseDuration } from "@payments/kit";
import { addTestReceivingAccounts } from "@payments/testing";
import { FakeBank } from "./bank.js";
import { REPLICAS, RUN_SETTINGS, startDeployment, type Deployment } from "./deployment.js";
import { FaultInjector, planFaults } from "./faults.js";
import { Books, checkInvariants } from "./invariants.js";
import { LoadDriver, type Shop } from "./load.js";
import { sleep } from "./processes.js";
import { MerchantReceiver } from "./receiver.js";
import { Random } from "./rng.js";

const USAGE = `pnpm test:chaos [--seed N] [--duration 3m] [--users 6] [--report file.json] [--log-dir dir]

The split deployment (two replicas of every service and two gateways, compiled) on a MariaDB
and a NATS server of the run's own, under a mixed load and a fault schedule derived from the
seed (printed first: the same seed gives the same schedule). After the load, the faults heal,
the system drains, and the invariants are printed as one JSON report. Exit 0 when every
invariant holds, 1 when one does not, 2 when the run could not be made.`;

interface Options {
  seed: number;
  durationMs: number;
  users: number;
  report: string | undefined;
  logDir: string | undefined;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      duration: { type: "string", default: "3m" },
      users: { type: "string", default: "6" },
      report: { type: "string" },
      "log-dir": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const seed = values.seed === undefined ? randomInt(1, 2 ** 31 - 1) : Number(values.seed);
  const durationMs = parseDuration(values.duration);
  const users = Number(values.users);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number, not ${values.seed}`);
  if (durationMs === undefined || durationMs < 30_000) throw new Error(`--duration must be at least 30s (e.g. 3m, 20m), not ${values.duration}`);
  if (!Number.isInteger(users) || users < 1 || users > 64) throw new Error(`--users must be 1..64, not ${values.users}`);
  return { seed, durationMs, users, report: values.report, logDir: values["log-dir"] };
}

const started = Date.now();
const log = (msg: string) => console.error(`[chaos +${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);

async function createShops(deployment: Deployment, receiver: MerchantReceiver, secrets: Map<string, string>): Promise<Shop[]> {
  const { merchants, payouts } = deployment.clients;
  const kinds = [true, true, true, false, false];
  const shops: Shop[] = [];
  for (const [i, sandbox] of kinds.entries()) {
    const shop = `s${i}`;
    const created = await merchants.createMerchant({ name: `Chaos Shop ${i}`, sandbox, allowedIps: ["127.0.0.1", "::1"], callbackUrl: `${receiver.url}?shop=${shop}` });
    const merchantId = created.merchant!.id;
    // A live merchant is made by two admins: the approved run's answer keeps its secrets back
    // (redacted), so the run issues the live shop a secret of its own, the old one ended now.
    const apiSecret = sandbox ? created.apiSecret : (await merchants.rotateSecret({ merchantId, gracePeriodSeconds: 0 })).apiSecret;
    if (apiSecret === "" || apiSecret.includes("redacted")) throw new Error(`merchant ${merchantId} has no API secret the run can sign with`);
    secrets.set(shop, apiSecret);
    await merchants.setRateLimit({ merchantId, requestsPerSecond: 0 });
    // Enough for every withdrawal of a long run: INSUFFICIENT_BALANCE is no part of the load. A
    // live merchant's is live money moved by hand: the run's second operator approves it.
    await payouts.adjustBalance({ merchantId, amount: 100_000_000_000n, reason: "chaos funding" });
    shops.push({ shop, merchantId, apiKey: created.merchant!.apiKey, apiSecret, sandbox });
  }
  return shops;
}

async function main(): Promise<number> {
  let opts: Options;
  try {
    opts = options();
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const logDir = opts.logDir ? resolve(opts.logDir) : mkdtempSync(join(tmpdir(), "chaos-"));
  mkdirSync(logDir, { recursive: true });
  log(`seed ${opts.seed} (replay: pnpm test:chaos --seed ${opts.seed} --duration ${Math.round(opts.durationMs / 1000)}s), logs in ${logDir}`);
  const plan = planFaults(new Random(opts.seed, 1), opts.durationMs);
  log(`fault schedule: ${plan.map((f) => `${(f.atMs / 1000).toFixed(0)}s ${f.kind}${f.target ? `(${f.target.component}-${f.target.replica})` : ""}`).join(", ")}`);

  const secrets = new Map<string, string>();
  const receiver = new MerchantReceiver((shop) => secrets.get(shop));
  const bank = new FakeBank();
  await Promise.all([receiver.start(), bank.start()]);
  let deployment: Deployment | undefined;
  const onSignal = () => {
    deployment?.killNow();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // A bug of the run itself: stop every process it started (they run detached) before dying.
  const onCrash = (err: unknown) => {
    log(`the run crashed: ${(err as Error).stack ?? String(err)}`);
    deployment?.killNow();
    void Promise.allSettled([deployment?.mariadb.destroy(), deployment?.nats.destroy()]).then(() => process.exit(2));
  };
  process.once("uncaughtException", onCrash);
  process.once("unhandledRejection", onCrash);
  let books: Books | undefined;
  try {
    deployment = await startDeployment({ logDir, bankUrl: bank.url, log });
    await addTestReceivingAccounts(deployment.clients.bankCatalog);
    const shops = await createShops(deployment, receiver, secrets);
    log(`${shops.length} merchants (${shops.filter((s) => s.sandbox).length} sandbox, ${shops.filter((s) => !s.sandbox).length} live); load for ${opts.durationMs / 1000}s with ${opts.users} users`);

    const load = new LoadDriver(deployment, shops, new Random(opts.seed, 2), `c${opts.seed}`);
    const faults = new FaultInjector(deployment, receiver, log);
    const loadStarted = Date.now();
    const running = load.run(opts.users, 50);
    const faulting = faults.run(plan, loadStarted);
    await sleep(opts.durationMs);
    load.stop();
    await running;
    log(`load stopped: ${load.counts.requests} requests; waiting for the faults to heal`);
    await faulting;

    // Every replica up again (one that did not come back from its fault is started here, as an orchestrator would).
    for (const replica of deployment.allReplicas()) replica.start();
    await Promise.all(deployment.allReplicas().map((replica) => replica.ready(120_000)));

    // Drain: every fault healed; operators keep deciding; wait until nothing moves any more.
    books = new Books(deployment);
    const drainDeadline = Date.now() + Math.max(240_000, RUN_SETTINGS.depositTtlMs * 3);
    let backlog: Record<string, number> = {};
    for (;;) {
      await load.operatorDecisions();
      backlog = await books.backlog(Date.now()).catch((err: unknown) => ({ error: String(err) }) as unknown as Record<string, number>);
      const open = Object.values(backlog).reduce((a, b) => a + (typeof b === "number" ? b : 1), 0);
      if (open === 0) break;
      if (Date.now() > drainDeadline) {
        log(`drain deadline passed with ${JSON.stringify(backlog)}`);
        break;
      }
      await sleep(2_000);
    }
    // The callbacks of the last changes: a few seconds after the sender recorded them delivered, nothing is on its way.
    await sleep(3_000);
    const drainedIn = Date.now() - (loadStarted + opts.durationMs);
    log(`drained in ${(drainedIn / 1000).toFixed(1)}s; checking the invariants`);

    const checks = await checkInvariants({ deployment, books, load, receiver, bank, faults, graceMs: 15_000 });
    checks.drained = { ok: Object.values(backlog).every((n) => n === 0), detail: { ...backlog, drainMs: drainedIn } };
    const exits = deployment.allReplicas().flatMap((replica) => replica.unexpectedExits);
    const healing = faults.records.filter((r) => r.error).map((r) => `${r.kind} ${r.target ? `${r.target.component}-${r.target.replica}` : ""}: ${r.error}`);
    // Only the schedule kills: a process that exits by itself (a start that gives up, a crash) is a finding.
    checks.noProcessExitedByItself = { ok: exits.length === 0 && healing.length === 0, detail: { unexpectedExits: exits.length, faultsNotHealed: healing.length, examples: [...exits, ...healing].slice(0, 5) } };
    const ok = Object.values(checks).every((c) => c.ok);
    const report = {
      ok,
      seed: opts.seed,
      replay: `pnpm test:chaos --seed ${opts.seed} --duration ${Math.round(opts.durationMs / 1000)}s --users ${opts.users}`,
      durationSeconds: opts.durationMs / 1000,
      deployment: { replicasPerService: REPLICAS, gateways: deployment.replicas.gateway.length, restarts: Object.fromEntries(deployment.allReplicas().map((r) => [r.name, r.starts - 1])) },
      counts: {
        requests: load.counts.requests,
        retries: load.counts.retries,
        unknownOutcomes: load.counts.unknownOutcomes,
        created: { deposits: load.created.filter((c) => c.kind === "deposit").length, withdrawals: load.created.filter((c) => c.kind === "withdrawal").length },
        statementImports: load.counts.statementImports,
        statementImportFailures: load.counts.statementImportFailures,
        operatorDecisions: load.counts.operatorDecisions,
        operatorRefusals: load.counts.operatorRefusals,
        operatorDecisionFailures: load.counts.operatorDecisionFailures,
        callbacksReceived: receiver.arrivals.length,
        faults: faults.summary(),
        balancerRefusedConnections: Object.fromEntries(Object.entries(deployment.balancers).map(([name, b]) => [name, b.refused])),
      },
      invariants: checks,
      faults: faults.records.map((r) => ({ kind: r.kind, target: r.target ? `${r.target.component}-${r.target.replica}` : undefined, atS: Math.round((r.start - loadStarted) / 100) / 10, forS: r.end ? Math.round((r.end - r.start) / 100) / 10 : undefined, skipped: r.skipped, error: r.error })),
      logs: logDir,
    };
    const json = JSON.stringify(report, null, 2);
    console.log(json);
    const reportFile = opts.report ? resolve(opts.report) : join(logDir, `chaos-report-${opts.seed}.json`);
    writeFileSync(reportFile, `${json}\n`);
    log(`${ok ? "every invariant holds" : `FAILED: ${Object.entries(checks).filter(([, c]) => !c.ok).map(([name]) => name).join(", ")}`}; report in ${reportFile}`);
    if (ok && !opts.logDir) {
      // Keep the logs only when something broke (or when asked for with --log-dir).
      for (const file of ["merchant", "bank-catalog", "deposit", "payout", "callback-sender", "gateway"].flatMap((n) => [0, 1].map((i) => join(logDir, `${n}-${i}.log`)))) rmSync(file, { force: true });
    }
    return ok ? 0 : 1;
  } catch (err) {
    log(`the run could not be made: ${(err as Error).stack ?? String(err)}`);
    return 2;
  } finally {
    await books?.close().catch(() => undefined);
    await deployment?.stop().catch((err: unknown) => log(`stopping: ${String(err)}`));
    await Promise.all([receiver.close(), bank.close()]);
  }
}

process.exitCode = await main();
