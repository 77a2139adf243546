import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { BankCatalogService, ReceivingAccount } from "@payments/contracts/bank-catalog";
import { composeIBAN } from "ibantools";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import knexFactory from "knex";
import { JetStreamBus } from "./bus.js";
import type { Clock } from "./clock.js";
import { errorInfo } from "./errors.js";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { startTracing } from "./tracing.js";

/** MySQL server for tests: MYSQL_TEST_URL, default the local MariaDB as root. */
export const mysqlTestServer = process.env.MYSQL_TEST_URL ?? "mysql://root@127.0.0.1:3306/test";
/** NATS server for tests: NATS_TEST_URL, default the local JetStream server. */
export const natsTestUrl = process.env.NATS_TEST_URL ?? "nats://127.0.0.1:4222";

export function uniqueName(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

/**
 * A fresh, empty MySQL database named `<base>`, for one test file. `url` is the base
 * database (all-in-one derives `<base>_<service>` from it); drop() removes every
 * database starting with the base name.
 */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const server = new URL(mysqlTestServer);
  const name = uniqueName("pgt_");
  server.pathname = `/${name}`;
  const url = server.toString();
  return {
    url,
    name,
    async drop() {
      const admin = knexFactory({
        client: "mysql2",
        connection: { host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || "root"), password: decodeURIComponent(server.password) },
        pool: { min: 0, max: 1 },
      });
      try {
        const [rows] = (await admin.raw("SHOW DATABASES LIKE ?", [`${name}%`])) as [Array<Record<string, string>>];
        for (const row of rows) await admin.raw("DROP DATABASE IF EXISTS ??", [String(Object.values(row)[0])]);
      } finally {
        await admin.destroy();
      }
    },
  };
}

/** Environment for a JetStream deployment of its own (stream and subject prefix), so parallel tests never see each other's events. */
export function jetStreamTestEnv(): { NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string } {
  const id = uniqueName("t");
  return { NATS_URL: natsTestUrl, NATS_STREAM: id.toUpperCase(), NATS_SUBJECT_PREFIX: id };
}

/** Deletes the stream named in a jetStreamTestEnv(). */
export async function deleteTestStream(env: { NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string }): Promise<void> {
  const bus = await JetStreamBus.connect({ url: env.NATS_URL, stream: env.NATS_STREAM, subjectPrefix: env.NATS_SUBJECT_PREFIX });
  await bus.deleteStream();
  await bus.close();
}

/** A clock tests move by hand. */
export function manualClock(start = new Date("2026-11-22T10:00:00.000Z")): Clock & { set(date: Date): void; advance(ms: number): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    set: (date) => {
      now = date.getTime();
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

/** The nats-server binary for tests that run a server of their own: NATS_SERVER_BIN, default Debian's. */
export const natsServerBin = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** Waits until 127.0.0.1:port accepts connections, or fails after timeoutMs. */
export async function waitForPort(port: number, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await acceptsConnections(port))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM, and wait for the exit (at once when it already exited). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A JetStream server of one test's own, which it may stop and start again (same port, same store). */
export interface OwnNatsServer {
  url: string;
  port: number;
  storeDir: string;
  /** Stops the server; its streams stay in storeDir. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store (after stop()). */
  start(): Promise<void>;
  /** Stops it and removes its store. */
  destroy(): Promise<void>;
}

/**
 * Runs `nats-server -js` on a free port with a store in a temporary directory, so stopping
 * it disturbs no other suite. Throws when natsServerBin is missing.
 */
export async function startNatsServer(): Promise<OwnNatsServer> {
  if (!existsSync(natsServerBin)) throw new Error(`${natsServerBin} not found (set NATS_SERVER_BIN)`);
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), "nats-own-"));
  let child: ChildProcess | undefined;
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const spawned = spawn(natsServerBin, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: "ignore" });
    const failed = new Promise<never>((_, reject) => spawned.once("error", reject));
    child = spawned;
    await Promise.race([waitForPort(port, "nats-server"), failed]);
  };
  const stop = async () => {
    if (child) await stopProcess(child);
  };
  try {
    await start();
  } catch (err) {
    rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/**
 * Receiving accounts for a test deployment, which (like any split install) starts with none:
 * the made-up sandbox accounts, and a live twin of each (same bank, FAST flag and name, an
 * account number starting with 7 instead of 5), so both kinds of merchant can take deposits.
 * Returns the live accounts added (none when they were already there).
 */
export async function addTestReceivingAccounts(bankCatalog: Client<typeof BankCatalogService>): Promise<ReceivingAccount[]> {
  await bankCatalog.seedSandboxAccounts({});
  const [{ accounts: sandbox }, { accounts: live }] = await Promise.all([
    bankCatalog.listReceivingAccounts({ bankId: "", sandbox: true }),
    bankCatalog.listReceivingAccounts({ bankId: "", sandbox: false }),
  ]);
  const have = new Set(live.map((a) => a.iban));
  const added: ReceivingAccount[] = [];
  for (const account of sandbox) {
    const bban = account.iban.slice(4);
    const iban = composeIBAN({ countryCode: "TR", bban: `${bban.slice(0, 6)}7${bban.slice(7)}` });
    if (!iban || have.has(iban)) continue;
    const { account: created } = await bankCatalog.createReceivingAccount({
      bankId: account.bankId,
      accountName: account.accountName.replace("Sandbox", "Test Live"),
      iban,
      fastEnabled: account.fastEnabled,
      active: account.active,
      sandbox: false,
    });
    if (created) added.push(created);
  }
  return added;
}

/** Polls `condition` every 25 ms until it holds, or fails naming `what` after `timeoutMs`. */
export async function eventually(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The error info (code, reason, field, message) of a call that must fail; throws if it succeeds. */
export async function rejectionOf(call: Promise<unknown>): Promise<ReturnType<typeof errorInfo>> {
  try {
    await call;
  } catch (err) {
    return errorInfo(err);
  }
  throw new Error("the call succeeded but was expected to fail");
}

/**
 * Tracing on for this process with the SDK's in-memory exporter (one SimpleSpanProcessor):
 * `spans()` lists the finished spans; `stop()` shuts the SDK down (call it in test.after).
 */
export async function startInMemoryTracing(serviceName = "test"): Promise<{ spans(): ReadableSpan[]; reset(): void; stop(): Promise<void> }> {
  const exporter = new InMemorySpanExporter();
  const tracing = await startTracing(serviceName, {}, { spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { spans: () => exporter.getFinishedSpans(), reset: () => exporter.reset(), stop: () => tracing.shutdown() };
}

/** The MariaDB binaries the outage tests start their own servers from (Debian's mariadb-server). */
export const mariadbdBin = process.env.MARIADBD_BIN ?? "/usr/sbin/mariadbd";
export const mariadbInstallDbBin = process.env.MARIADB_INSTALL_DB_BIN ?? "/usr/bin/mariadb-install-db";

/** A throwaway MariaDB server of a test's own, so the test can stop and start it. */
export interface OwnMariadbServer {
  port: number;
  /** mysql://root@127.0.0.1:<port>/<database> */
  url(database: string): string;
  /** Stops the server; its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data (after stop()). */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

export async function startMariadbServer(): Promise<OwnMariadbServer> {
  if (!existsSync(mariadbdBin) || !existsSync(mariadbInstallDbBin)) throw new Error(`${mariadbdBin} or ${mariadbInstallDbBin} not found (Debian's mariadb-server)`);
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), "own-mariadb-"));
  const dataDir = join(home, "data");
  execFileSync(mariadbInstallDbBin, ["--no-defaults", `--datadir=${dataDir}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"], { stdio: "ignore" });
  let server: ChildProcess | undefined;
  const start = async () => {
    server = spawn(
      mariadbdBin,
      ["--no-defaults", `--datadir=${dataDir}`, "--user=root", `--port=${port}`, "--bind-address=127.0.0.1", `--socket=${dataDir}/mysqld.sock`, `--pid-file=${dataDir}/mysqld.pid`, "--skip-log-bin", "--innodb-buffer-pool-size=32M"],
      { stdio: "ignore" },
    );
    await waitForPort(port, "mariadbd", 30_000);
  };
  const stop = async () => {
    if (server) await stopProcess(server);
    server = undefined;
  };
  await start();
  return {
    port,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The repository's root (packages/kit/src → ../../..). */
const repositoryRoot = new URL("../../../", import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `pnpm cli …` as an operator runs it, against the internal API at `env.GRPC_URL` (and
 * whatever else `env` adds to this process's environment; a value of undefined removes it).
 */
export function runCli(args: readonly string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn("pnpm", ["cli", ...args], { cwd: repositoryRoot, env: merged });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The all-in-one process a test started, as `pnpm start` runs it. */
export interface AllInOneProcess {
  child: ChildProcess;
  /** From its ready line: the gateway's and the internal services' base URLs. */
  gatewayUrl: string;
  grpcUrl: string;
  /** Every line it printed so far (stdout and stderr), for failure messages. */
  logLines: string[];
  /** SIGKILL if still running, and the data folder removed. */
  stop(): Promise<void>;
}

/**
 * What `pnpm start` runs, without pnpm in between (pnpm does not pass SIGTERM on), on
 * embedded storage in a data folder of its own and free ports (PORT=0, GRPC_PORT=0), with
 * `env` added; resolves on its ready line (an info line), which names both addresses.
 */
export async function spawnAllInOne(env: Record<string, string> = {}): Promise<AllInOneProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "all-in-one-"));
  const merged: NodeJS.ProcessEnv = { ...process.env, PORT: "0", GRPC_PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "info", ...env };
  delete merged.DATABASE_URL;
  delete merged.NATS_URL;
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/all-in-one/src/main.ts"], { cwd: repositoryRoot, env: merged, stdio: ["ignore", "pipe", "pipe"] });
  const logLines: string[] = [];
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  child.stderr.on("data", (d: Buffer) => logLines.push(d.toString()));
  try {
    const urls = await new Promise<{ gatewayUrl: string; grpcUrl: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line in 60 s:\n${logLines.join("")}`)), 60_000);
      child.once("exit", (code) => reject(new Error(`the all-in-one exited with ${code}:\n${logLines.join("")}`)));
      createInterface({ input: child.stdout }).on("line", (line) => {
        logLines.push(line);
        if (!line.includes("ready")) return;
        const entry = JSON.parse(line) as { gateway?: string; grpc?: string };
        if (!entry.gateway || !entry.grpc) return;
        clearTimeout(timer);
        resolve({ gatewayUrl: entry.gateway, grpcUrl: entry.grpc });
      });
    });
    return { child, ...urls, logLines, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
