import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import test from "ava";
import { createTestDatabase, deleteTestStream, freePort, jetStreamTestEnv, TEST_WORKLOAD_ENV } from "@payments/testing";

// What the images run: `pnpm build` (tsc -b, every package to its dist/), then each deployable
// as `node <package>/dist/main.js` with plain node (no tsx, no `source` condition), so every
// workspace package it imports resolves to its compiled dist/ too. The services start as
// docker-compose runs them (split, MySQL, JetStream), each one becoming ready on its own.
// Start times and resident memory are logged, not asserted (`pnpm bench` holds the budget).

const root = fileURLToPath(new URL("..", import.meta.url));
const token = "compiled-build-internal-token";
const js = jetStreamTestEnv();

/** Plain node's environment: nothing inherited from the test runner's loader. */
function plainEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "info", ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

interface Started {
  name: string;
  child: ChildProcess;
  url: string;
  readyMs: number;
  output: () => string;
}

const started: Started[] = [];
const databases: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
let buildMs = 0;

async function startCompiled(name: string, dir: string, env: Record<string, string>, portVar: "GRPC_PORT" | "PORT"): Promise<Started> {
  const port = await freePort();
  const entry = `${dir}/dist/main.js`;
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [entry], { cwd: root, env: plainEnv({ ...env, [portVar]: String(port) }), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const entryStarted: Started = { name, child, url, readyMs: 0, output: () => out };
  started.push(entryStarted);
  const deadline = performance.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} (${entry}) exited with ${child.exitCode}\n${out}`);
    const status = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })
      .then(async (res) => (await res.arrayBuffer(), res.status))
      .catch(() => 0);
    if (status === 200) break;
    if (performance.now() > deadline) throw new Error(`${name}: ${url}/healthz not 200 within 20 s\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  entryStarted.readyMs = Math.round(performance.now() - spawnedAt);
  return entryStarted;
}

/** Resident set size of a process in MB, from /proc (Linux). */
function rssMb(pid: number): number | undefined {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return undefined;
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(status, "utf8"))?.[1];
  return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
}

test.before(async () => {
  const at = performance.now();
  // The build is incremental (tsc -b): a no-op when dist/ is current, a few seconds when not.
  await promisify(execFile)("pnpm", ["build"], { cwd: root, env: plainEnv({}) });
  buildMs = Math.round(performance.now() - at);
  for (let i = 0; i < 5; i++) databases.push(await createTestDatabase());
});

test.after.always(async () => {
  await Promise.all(
    started.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          child.once("exit", () => (clearTimeout(timer), resolve()));
          child.kill("SIGTERM");
        }),
    ),
  );
  await Promise.all(databases.map((db) => db.drop()));
  await deleteTestStream(js).catch(() => undefined);
});

test("pnpm build compiles every deployable to <package>/dist/main.js with source maps", (t) => {
  t.log(`pnpm build: ${buildMs} ms`);
  for (const dir of ["services/merchant", "services/bank-catalog", "services/deposit", "services/payout", "services/callback-sender", "gateway", "packages/all-in-one", "packages/cli"]) {
    t.true(existsSync(`${root}${dir}/dist/main.js`), `${dir}/dist/main.js`);
    t.true(existsSync(`${root}${dir}/dist/main.js.map`), `${dir}/dist/main.js.map`);
  }
  // Migrations are compiled with their service (src/migrations → dist/migrations).
  t.true(existsSync(`${root}services/merchant/dist/migrations/index.js`));
  for (const dir of ["packages/kit", "packages/contracts", "packages/records", "packages/signing"]) t.true(existsSync(`${root}${dir}/dist/index.js`), `${dir}/dist/index.js`);
});

test("each compiled service and the gateway start with plain node and answer /healthz", async (t) => {
  // Each with the test workloads' bundle and its own key (WORKLOAD_KEY_<NAME>), as each deployable is given its own.
  const common = { ...js, ...TEST_WORKLOAD_ENV, INTERNAL_API_TOKEN: token, GRPC_HOST: "127.0.0.1" };
  const merchant = await startCompiled("merchant", "services/merchant", { ...common, DATABASE_URL: databases[0]!.url, MASTER_KEY: "a".repeat(64) }, "GRPC_PORT");
  const catalog = await startCompiled("bank-catalog", "services/bank-catalog", { ...common, DATABASE_URL: databases[1]!.url }, "GRPC_PORT");
  const peers = { MERCHANT_SERVICE_URL: merchant.url, BANK_CATALOG_SERVICE_URL: catalog.url };
  const deposit = await startCompiled("deposit", "services/deposit", { ...common, ...peers, DATABASE_URL: databases[2]!.url }, "GRPC_PORT");
  const payout = await startCompiled("payout", "services/payout", { ...common, ...peers, DATABASE_URL: databases[3]!.url }, "GRPC_PORT");
  const callback = await startCompiled(
    "callback-sender",
    "services/callback-sender",
    { ...common, MERCHANT_SERVICE_URL: merchant.url, DATABASE_URL: databases[4]!.url, PUBLIC_BASE_URL: "https://pay.example.test" },
    "GRPC_PORT",
  );
  await startCompiled(
    "gateway",
    "gateway",
    {
      ...common,
      ...peers,
      HOST: "127.0.0.1",
      DEPOSIT_SERVICE_URL: deposit.url,
      PAYOUT_SERVICE_URL: payout.url,
      CALLBACK_SENDER_SERVICE_URL: callback.url,
      PUBLIC_BASE_URL: "https://pay.example.test",
    },
    "PORT",
  );

  // Idle memory: after a moment with nothing to do.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  for (const s of started) {
    t.is(s.child.exitCode, null, `${s.name} still runs\n${s.output()}`);
    t.log(`${s.name.padEnd(16)} spawn → /healthz 200: ${String(s.readyMs).padStart(5)} ms   idle RSS: ${rssMb(s.child.pid!) ?? "?"} MB`);
  }
  t.is(started.length, 6);
  // Plain node ran the compiled files: no loader, no TypeScript.
  t.false(started.some((s) => /\.ts\b.*ERR_UNKNOWN_FILE_EXTENSION|ERR_UNKNOWN_FILE_EXTENSION/.test(s.output())));
});
