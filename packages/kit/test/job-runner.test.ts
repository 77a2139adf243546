import test from "ava";
import { Writable } from "node:stream";
import { createLogger, createMetrics, startJob, withRequestId, type JobClock, type JobResult } from "../src/index.js";

/** Lets promise chains and the runner's follow-ups finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A JobClock whose timers fire only when advanced. */
function manualJobClock(): JobClock & { advance(ms: number): Promise<void> } {
  let now = 0;
  let timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    setTimer(fn, ms) {
      const timer = { at: now + ms, fn };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > end) break;
        timers.shift();
        now = next.at;
        next.fn();
        await settle();
      }
      now = end;
      await settle();
    },
  };
}

interface LogLine {
  level: string;
  msg: string;
  job?: string;
  failedPasses?: number;
  err?: { message: string };
}

function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = createLogger({
    service: "test",
    level: "info",
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as LogLine);
        done();
      },
    }),
  });
  return { logger, lines };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test("runs on its interval, not before", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  const times: number[] = [];
  const job = startJob({ name: "tick", intervalMs: 100, clock, logger, run: async () => void times.push(clock.now()) });
  t.teardown(() => job.stop());
  await clock.advance(99);
  t.deepEqual(times, []);
  await clock.advance(251);
  t.deepEqual(times, [100, 200, 300]);
});

test("runAtStart runs once at once", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  let runs = 0;
  const job = startJob({ name: "start", intervalMs: 100, clock, logger, runAtStart: true, run: async () => void runs++ });
  t.teardown(() => job.stop());
  await settle();
  t.is(runs, 1);
});

test("one run at a time: wakes during a run make exactly one more run right after it", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  const gates = [deferred(), deferred()];
  let runs = 0;
  let concurrent = 0;
  let maxConcurrent = 0;
  const job = startJob({
    name: "coalesce",
    intervalMs: 10_000,
    clock,
    logger,
    async run() {
      const gate = gates[runs++];
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await gate?.promise;
      concurrent--;
    },
  });
  t.teardown(() => job.stop());
  job.wake();
  await settle();
  t.is(runs, 1);
  for (let i = 0; i < 5; i++) job.wake();
  await settle();
  t.is(runs, 1, "no second run while one is in flight");
  gates[0]!.resolve();
  await settle();
  t.is(runs, 2, "the wakes became one run");
  gates[1]!.resolve();
  await settle();
  t.is(runs, 2, "and only one");
  t.is(maxConcurrent, 1);
});

test("a run that says more goes again at once", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  let runs = 0;
  const job = startJob({ name: "more", intervalMs: 10_000, clock, logger, run: async () => ({ more: ++runs < 4 }) });
  t.teardown(() => job.stop());
  job.wake();
  await settle();
  t.is(runs, 4);
  t.is(clock.now(), 0);
});

test("failures back off exponentially (wake waits, runNow does not), warn once per streak, and a success resets it", async (t) => {
  const clock = manualJobClock();
  const { logger, lines } = capturingLogger();
  const times: number[] = [];
  let ok = false;
  const job = startJob({
    name: "flaky",
    intervalMs: 100,
    backoff: { initialMs: 100, maxMs: 800 },
    clock,
    logger,
    async run() {
      times.push(clock.now());
      if (!ok) throw new Error("database down");
    },
  });
  t.teardown(() => job.stop());
  await clock.advance(1_650);
  t.deepEqual(times, [100, 200, 400, 800, 1_600], "the pause doubles up to maxMs");
  for (let i = 0; i < 10; i++) job.wake();
  await settle();
  t.is(times.length, 5, "wake waits out the back-off");
  const warnings = lines.filter((l) => l.level === "warn");
  t.is(warnings.length, 1, "one warning for the streak");
  t.like(warnings[0], { job: "flaky", msg: "job flaky failed; retrying with back-off", err: { message: "database down" } });

  ok = true;
  await job.runNow();
  t.deepEqual(times.slice(5), [1_650], "runNow does not wait");
  t.like(
    lines.find((l) => l.level === "info"),
    { job: "flaky", failedPasses: 5, msg: "job flaky recovered" },
  );
  job.wake();
  await settle();
  t.deepEqual(times.slice(6), [1_650], "no back-off after the recovery");

  ok = false;
  await clock.advance(2_000);
  t.is(lines.filter((l) => l.level === "warn").length, 2, "a new streak warns again");
});

test("a failed result counts, backs off and warns with its own fields and message", async (t) => {
  const clock = manualJobClock();
  const { logger, lines } = capturingLogger();
  const metrics = createMetrics();
  const job = startJob({
    name: "reported",
    intervalMs: 100,
    backoff: { initialMs: 100, maxMs: 1_000 },
    clock,
    logger,
    metrics,
    run: async (): Promise<JobResult> => ({ failed: { err: new Error("nats: disconnected"), fields: { eventId: "evt_1" }, message: "publish failed" } }),
  });
  t.teardown(() => job.stop());
  await clock.advance(700);
  t.deepEqual(
    lines.filter((l) => l.level === "warn").map((l) => l.msg),
    ["publish failed"],
  );
  t.like(lines[0], { eventId: "evt_1" } as Partial<LogLine>);
  const text = await metrics.registry.metrics();
  t.regex(text, /payments_job_runs_total\{job="reported",result="error"\} 3/);
});

test("stop() waits for the run in flight, aborts its signal, and no run starts after it", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  const gate = deferred();
  let runs = 0;
  let seen: AbortSignal | undefined;
  const job = startJob({
    name: "stopping",
    intervalMs: 100,
    clock,
    logger,
    async run(signal) {
      runs++;
      seen = signal;
      await gate.promise;
    },
  });
  job.wake();
  await settle();
  let stopped = false;
  const stopping = job.stop().then(() => {
    stopped = true;
  });
  job.wake();
  await settle();
  t.false(stopped, "still waiting for the run");
  t.true(seen?.aborted);
  gate.resolve();
  await stopping;
  t.true(stopped);
  await clock.advance(1_000);
  job.wake();
  await job.runNow();
  await settle();
  t.is(runs, 1, "nothing ran after stop");
});

test("a shared shutdown signal stops the job", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  const shutdown = new AbortController();
  let runs = 0;
  const job = startJob({ name: "shared", intervalMs: 100, clock, logger, signal: shutdown.signal, run: async () => void runs++ });
  await clock.advance(100);
  t.is(runs, 1);
  shutdown.abort();
  await job.stop();
  await clock.advance(1_000);
  t.is(runs, 1);
});

test("records runs, results, durations and the backlog per job", async (t) => {
  const clock = manualJobClock();
  const { logger } = capturingLogger();
  const metrics = createMetrics();
  let fail = false;
  const job = startJob({
    name: "measured",
    intervalMs: 100,
    clock,
    logger,
    metrics,
    backlog: () => 7,
    async run() {
      if (fail) throw new Error("boom");
    },
  });
  t.teardown(() => job.stop());
  await clock.advance(200);
  fail = true;
  await clock.advance(100);
  const text = await metrics.registry.metrics();
  t.regex(text, /payments_job_runs_total\{job="measured",result="ok"\} 2/);
  t.regex(text, /payments_job_runs_total\{job="measured",result="error"\} 1/);
  t.regex(text, /payments_job_duration_seconds_count\{job="measured"\} 3/);
  t.regex(text, /payments_job_backlog\{job="measured"\} 7/);
  await job.stop();
  t.notRegex(await metrics.registry.metrics(), /payments_job_backlog\{job="measured"\}/, "the backlog reading goes when the job stops");
});

test("with real timers: runs on a short interval and stops cleanly", async (t) => {
  const { logger } = capturingLogger();
  let runs = 0;
  const job = startJob({ name: "real", intervalMs: 10, logger, run: async () => void runs++ });
  // Waits for three runs rather than a fixed time: on a busy machine 120 ms may hold only two.
  const deadline = Date.now() + 10_000;
  while (runs < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  await job.stop();
  const after = runs;
  t.true(after >= 3, `${after} runs`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(runs, after);
});

test("a pass woken from inside a request logs no request id: its warnings are the job's, not that request's", async (t) => {
  const lines: string[] = [];
  const logger = createLogger({ service: "t", level: "info", destination: { write: (line: string) => void lines.push(line) } });
  const job = startJob({
    name: "scoped",
    intervalMs: 60_000,
    logger,
    run: async () => {
      throw new Error("bus down");
    },
  });
  t.teardown(() => job.stop());
  await withRequestId("req_from_a_request", () => job.runNow());
  const warning = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === "warn" || l.level === 40);
  t.truthy(warning, lines.join("\n"));
  t.is(warning?.requestId, undefined, "the request that woke the job is not named");
});
