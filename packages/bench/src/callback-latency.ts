import type { Client } from "@connectrpc/connect";
import type { DepositService } from "@payments/contracts/deposit";
import type { Arrival } from "./callback-receiver.js";
import { statementsPer, type MysqlStatus, type StatementFigures } from "./mysql-status.js";
import { cpuMillis } from "./proc-stats.js";
import { nodeEntry, spawnServer, type ServerProcess } from "./server-process.js";

export interface CallbackReceiver {
  url: string;
  process: ServerProcess;
  /** Everything that arrived since the last take. */
  take(): Promise<{ arrivals: Arrival[]; malformed: number }>;
  stop(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const proc = spawnServer("callback-receiver", nodeEntry("packages/bench", "callback-receiver"), { ...process.env }, { ipc: true });
  const child = proc.child;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`callback receiver not ready\n${proc.tail()}`)), 30_000);
    child.once("message", (m: { url?: string }) => {
      clearTimeout(timer);
      if (m.url) resolve(m.url);
      else reject(new Error("callback receiver sent no url"));
    });
  });
  return {
    url,
    process: proc,
    take: () =>
      new Promise((resolve, reject) => {
        if (!child.connected) return reject(new Error(`callback receiver is gone\n${proc.tail()}`));
        child.once("message", (m: { arrivals: Arrival[]; malformed: number }) => resolve(m));
        child.send({ take: true });
      }),
    stop: () => proc.stop(5_000),
  };
}

/** One sample of the backlog, taken every second while the confirms are sent (and once when they are all answered). */
export interface BacklogSample {
  /** Seconds since the first confirm was due. */
  t: number;
  /** Confirms answered so far (status changes committed). */
  confirmed: number;
  /** Their deposit.completed callbacks received so far (distinct). */
  received: number;
  /** confirmed − received (not below 0: a callback can overtake its confirm's answer). */
  backlog: number;
}

/** Whether the pipeline keeps up: events committed whose callback had not arrived yet, over the sending window. */
export interface BacklogFigures {
  samples: BacklogSample[];
  /** At the sample nearest 10 s into sending; absent when sending was shorter. */
  atTenSeconds?: number;
  /** When every confirm of the window had been answered. */
  atEndOfSending: number;
  max: number;
  /**
   * Callbacks arrived (by their arrival time) in each whole second of the last 30 s of sending
   * (the whole window when shorter): a pipeline that keeps up delivers about the rate asked,
   * every second.
   */
  arrivalsPerSecond: { fromSecond: number; perSecond: number[]; min: number; mean: number; max: number };
}

export interface CallbackFigures {
  targetRate: number;
  /** The measured seconds asked for (--callback-duration). */
  durationSeconds: number;
  /** Confirms per second actually issued over the sending window. */
  achievedRate: number;
  sendSeconds: number;
  /** Status changes committed (confirm RPCs that succeeded). */
  sent: number;
  confirmFailures: number;
  /** Distinct deposit.completed events of those deposits that reached the receiver. */
  received: number;
  missing: number;
  /** Deliveries of an event already received (at-least-once). */
  duplicates: number;
  /** Commit (the callback body's createdAt, the status-change time) → arrival at the receiver. */
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Confirm RPC answered → arrival: the same, seen from the caller. */
  fromConfirmAnswerMs: { p50: number; p99: number };
  /**
   * The two halves, when the event could be watched on JetStream: commit → the event seen
   * on the stream (the outbox relay), and seen on the stream → arrival (the callback-sender).
   */
  commitToStreamMs?: { p50: number; p99: number };
  streamToReceiverMs?: { p50: number; p99: number };
  /** From the last confirm to the last callback (or the timeout). */
  drainSeconds: number;
  backlog: BacklogFigures;
  serverCpuMs: number;
  serverCpuMsPerEvent: number;
  /** The same per product process (the split's services and gateway), by name. */
  cpuMsPerEventByProcess?: Record<string, number>;
  /** MariaDB statements (global `Questions`, and its breakdown) over the same window as the CPU ÷ events sent; shared with anything else on that server. */
  mysqlStatements?: StatementFigures;
  failureSamples: string[];
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/**
 * Confirms pending deposits (deposit service `ConfirmDeposit`, as an operator or a bank
 * integration would) at a steady `rate` per second for `durationSeconds`: open loop (a slow
 * answer does not slow the schedule) up to `maxInFlight` unanswered confirms; past that the
 * schedule waits, and `achievedRate` shows the rate the product kept up with (what was not
 * sent when the duration ends is left out). Every second meanwhile it takes what reached the
 * receiver and notes the backlog (confirmed − received). Then it waits
 * up to drainTimeoutMs for every deposit.completed callback.
 */
export async function runCallbackScenario(options: {
  deposits: Client<typeof DepositService>;
  receiver: CallbackReceiver;
  pendingDepositIds: readonly string[];
  rate: number;
  durationSeconds: number;
  drainTimeoutMs: number;
  serverPids: readonly number[];
  /** The product's processes by name, for the CPU per process (serverPids stays the total's). */
  processes?: ReadonlyArray<{ name: string; pid: number }>;
  maxInFlight?: number;
  /** When each event (by id) was seen on JetStream, Date.now(); filled in while the scenario runs. */
  seenOnStream?: ReadonlyMap<string, number>;
  /** Where to read MariaDB's statement counters, when the bench could connect. */
  mysqlStatus?: MysqlStatus | undefined;
}): Promise<CallbackFigures> {
  const { deposits, receiver, rate } = options;
  const total = Math.min(options.pendingDepositIds.length, Math.round(rate * options.durationSeconds));
  const ids = options.pendingDepositIds.slice(0, total);
  await receiver.take(); // forget anything that arrived before
  const arrivals = new Map<string, Arrival>();
  let duplicates = 0;
  const wanted = new Set(ids);
  // One take at a time: the receiver answers each with one message, and two takes waiting at
  // once would both see the first answer.
  let collecting = Promise.resolve();
  const collect = () =>
    (collecting = collecting.then(async () => {
      const { arrivals: batch } = await receiver.take();
      for (const a of batch) {
        if (a[1] !== "deposit.completed" || !wanted.has(a[2])) continue;
        if (arrivals.has(a[0])) duplicates++;
        else arrivals.set(a[0], a);
      }
    }));

  const confirmedAt = new Map<string, number>();
  const failureSamples: string[] = [];
  let failures = 0;
  let inFlight = 0;
  const maxInFlight = options.maxInFlight ?? 64;
  const calls: Promise<void>[] = [];
  const statusBefore = await options.mysqlStatus?.read();
  const cpuBefore = cpuMillis(options.serverPids);
  const processes = options.processes ?? [];
  const cpuBeforeByProcess = processes.map((p) => cpuMillis([p.pid]));
  const start = performance.now();
  const startWall = Date.now();
  const end = start + options.durationSeconds * 1000;
  // The backlog, sampled every second while sending: what arrived is taken from the receiver then.
  const samples: BacklogSample[] = [];
  const sample = async () => {
    await collect();
    const [confirmed, received] = [confirmedAt.size, arrivals.size];
    samples.push({ t: round((performance.now() - start) / 1000, 2), confirmed, received, backlog: Math.max(0, confirmed - received) });
  };
  let stopSampling: () => void = () => undefined;
  const samplingStopped = new Promise<false>((resolve) => (stopSampling = () => resolve(false)));
  const sampler = (async () => {
    for (let k = 1; ; k++) {
      let timer: NodeJS.Timeout | undefined;
      const due = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, start + k * 1000 - performance.now()))));
      if (!(await Promise.race([due, samplingStopped]))) return clearTimeout(timer);
      await sample();
    }
  })();
  // Awaited below; a failed take (the receiver gone) must not be an unhandled rejection meanwhile.
  sampler.catch(() => undefined);
  let i = 0;
  // The schedule ends with the duration: what the product could not take by then is not sent.
  while (i < total && performance.now() < end) {
    const now = performance.now();
    while (i < total && start + (i * 1000) / rate <= now && inFlight < maxInFlight) {
      const depositId = ids[i++]!;
      inFlight++;
      calls.push(
        deposits
          .confirmDeposit({ depositId }, { timeoutMs: 30_000 })
          .then(() => void confirmedAt.set(depositId, Date.now()))
          .catch((err: unknown) => {
            failures++;
            if (failureSamples.length < 5) failureSamples.push(`confirm ${depositId}: ${(err as Error).message}`);
          })
          .finally(() => void inFlight--),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const sendSeconds = Math.max(options.durationSeconds, (performance.now() - start) / 1000);
  await Promise.all(calls);
  const sentAll = performance.now();
  stopSampling();
  await sampler;
  await sample();
  const endOfSending = samples.at(-1)!;

  const sent = confirmedAt.size;
  const deadline = sentAll + options.drainTimeoutMs;
  for (;;) {
    await collect();
    if (arrivals.size >= sent || performance.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const serverCpuMs = cpuMillis(options.serverPids) - cpuBefore;
  const cpuByProcess = processes.map((p, i) => [p.name, cpuMillis([p.pid]) - cpuBeforeByProcess[i]!] as const);
  const statements = statementsPer(statusBefore, await options.mysqlStatus?.read(), sent);
  let lastArrival = 0;
  const latencies: number[] = [];
  const fromAnswer: number[] = [];
  const toStream: number[] = [];
  const fromStream: number[] = [];
  for (const [eventId, , transactionId, createdAt, arrived] of arrivals.values()) {
    lastArrival = Math.max(lastArrival, arrived);
    latencies.push(arrived - createdAt);
    const answered = confirmedAt.get(transactionId);
    if (answered !== undefined) fromAnswer.push(arrived - answered);
    const seen = options.seenOnStream?.get(eventId);
    if (seen !== undefined) {
      toStream.push(seen - createdAt);
      fromStream.push(arrived - seen);
    }
  }
  for (const list of [latencies, fromAnswer, toStream, fromStream]) list.sort((a, b) => a - b);
  const halves =
    toStream.length > 0
      ? {
          commitToStreamMs: { p50: percentile(toStream, 50), p99: percentile(toStream, 99) },
          streamToReceiverMs: { p50: percentile(fromStream, 50), p99: percentile(fromStream, 99) },
        }
      : {};
  const lastConfirm = Math.max(0, ...confirmedAt.values());
  // Arrivals per whole second of sending, by arrival time, over the last 30 s of it.
  const wholeSeconds = Math.max(1, Math.floor(sendSeconds));
  const fromSecond = Math.max(0, wholeSeconds - 30);
  const perSecond = new Array<number>(wholeSeconds - fromSecond).fill(0);
  for (const a of arrivals.values()) {
    const k = Math.floor((a[4] - startWall) / 1000) - fromSecond;
    if (k >= 0 && k < perSecond.length) perSecond[k]!++;
  }
  const tenSeconds = sendSeconds >= 10 ? samples.reduce((best, x) => (Math.abs(x.t - 10) < Math.abs(best.t - 10) ? x : best)) : undefined;
  const backlog: BacklogFigures = {
    samples,
    ...(tenSeconds ? { atTenSeconds: tenSeconds.backlog } : {}),
    atEndOfSending: endOfSending.backlog,
    max: Math.max(...samples.map((x) => x.backlog)),
    arrivalsPerSecond: {
      fromSecond,
      perSecond,
      min: Math.min(...perSecond),
      mean: round(perSecond.reduce((a, b) => a + b, 0) / perSecond.length),
      max: Math.max(...perSecond),
    },
  };
  return {
    targetRate: rate,
    durationSeconds: options.durationSeconds,
    achievedRate: round(i / sendSeconds),
    sendSeconds: round(sendSeconds, 2),
    sent,
    confirmFailures: failures,
    received: arrivals.size,
    missing: Math.max(0, sent - arrivals.size),
    duplicates,
    latencyMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: latencies.at(-1) ?? 0 },
    fromConfirmAnswerMs: { p50: percentile(fromAnswer, 50), p99: percentile(fromAnswer, 99) },
    ...halves,
    drainSeconds: round(Math.max(0, (arrivals.size >= sent ? lastArrival - lastConfirm : options.drainTimeoutMs) / 1000), 2),
    backlog,
    serverCpuMs: Math.round(serverCpuMs),
    serverCpuMsPerEvent: sent === 0 ? 0 : round(serverCpuMs / sent, 3),
    ...(cpuByProcess.length > 0 ? { cpuMsPerEventByProcess: Object.fromEntries(cpuByProcess.map(([name, ms]) => [name, sent === 0 ? 0 : round(ms / sent, 3)])) } : {}),
    ...(statements ? { mysqlStatements: statements } : {}),
    failureSamples,
  };
}
