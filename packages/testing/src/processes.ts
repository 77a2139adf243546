import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { LOCAL_ADMIN_KEY_FILE, LOCAL_WORKLOAD_DIR, signedIdentity, workloadKeyFile, workloadSignerFromEnv } from "@payments/access";
import { systemClock } from "@payments/kit";
import { createServiceClient, TEST_OPERATOR_PRIVATE_KEY_PEM, type TestClientOptions } from "./operators.js";
import { testWorkloadKeyPem } from "./workloads.js";

// The product as an operator runs it, in processes of its own: the CLI and the all-in-one.

/** The repository's root (packages/testing/src → ../../..). */
const repositoryRoot = new URL("../../../", import.meta.url).pathname;

let image: { flags: string[]; env: Record<string, string> } | undefined;

/**
 * How the image runs every process: the Dockerfile's `NODE_OPTIONS` (node flags) and
 * `MALLOC_ARENA_MAX`, so a compiled process started here (the bench, the chaos run) starts,
 * and uses memory, as in the image.
 */
export function imageRuntime(): { flags: string[]; env: Record<string, string> } {
  if (image) return image;
  const dockerfile = readFileSync(join(repositoryRoot, "Dockerfile"), "utf8");
  const setting = (name: string) => {
    const match = new RegExp(`^\\s*(?:ENV\\s+)?${name}=("([^"]*)"|(\\S+))`, "m").exec(dockerfile);
    return match?.[2] ?? match?.[3];
  };
  const arenas = setting("MALLOC_ARENA_MAX");
  image = { flags: (setting("NODE_OPTIONS") ?? "").split(/\s+/).filter(Boolean), env: arenas ? { MALLOC_ARENA_MAX: arenas } : {} };
  return image;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The settings the CLI signs its operator assertions from (packages/cli/src/operator-signer.ts), besides the actor's name and role. */
const SIGNING_SETTINGS = ["PAYMENTS_OPERATOR_TOKEN", "OPERATOR_ASSERTION_PRIVATE_KEY", "DATA_DIR"] as const;

/**
 * `pnpm cli …` as an operator runs it, against the internal API at `env.GRPC_URL` (and
 * whatever else `env` adds to this process's environment; a value of undefined removes it).
 *
 * It acts as an operator the way `env` says: a service token, a private key, or the local admin
 * key in a DATA_DIR (a spawned all-in-one's: AllInOneProcess.cli). When `env` names none of
 * those, it signs with the test operators' key, which services a test starts in its own process
 * (startInProcess, startSplitDeployment) accept. None is taken from this process's environment
 * (nor a `pnpm cli login` session of this machine's user), and the actor is "cli-test" (an
 * admin) unless `env` names PAYMENTS_OPERATOR.
 */
export function runCli(args: readonly string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [...SIGNING_SETTINGS, "PAYMENTS_OPERATOR_ROLE", "CONSOLE_URL"]) delete merged[name];
  merged.PAYMENTS_OPERATOR = "cli-test";
  merged.XDG_CONFIG_HOME = join(tmpdir(), "payments-cli-test-no-session");
  if (!SIGNING_SETTINGS.some((name) => name in env)) merged.OPERATOR_ASSERTION_PRIVATE_KEY = TEST_OPERATOR_PRIVATE_KEY_PEM;
  // Which program it is: the test CLI key the harness's services believe, unless it runs where an all-in-one keeps its keys (DATA_DIR).
  for (const name of ["WORKLOAD_KEY", "WORKLOAD_ID", "WORKLOAD_KEY_CLI"]) delete merged[name];
  if (!("DATA_DIR" in env) && !("WORKLOAD_KEY" in env)) merged.WORKLOAD_KEY_CLI = testWorkloadKeyPem("cli");
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
  /** Its data directory: the SQLite files, and the local admin key (`operator-admin.key`) it made at start. */
  dataDir: string;
  /** Every line it printed so far (stdout and stderr), for failure messages. */
  logLines: string[];
  /**
   * `pnpm cli …` against it as an operator on its machine runs it: GRPC_URL its address and
   * DATA_DIR its data directory, so the CLI signs with its local admin key (`env` adds more).
   */
  cli(args: readonly string[], env?: Record<string, string | undefined>): Promise<CliResult>;
  /** Its local admin key (PKCS#8 PEM), which it made in its data directory at start. */
  operatorKey(): string;
  /** A harness client of its internal services (createServiceClient), signing with its local admin key. */
  client<S extends DescService>(service: S, options?: TestClientOptions): Client<S>;
  /** SIGKILL if still running, and the data folder removed. */
  stop(): Promise<void>;
}

/**
 * What `pnpm start` runs, without pnpm in between (pnpm does not pass SIGTERM on), on
 * embedded storage in a data folder of its own and free ports (PORT=0, GRPC_PORT=0), with
 * `env` added; resolves on its ready line (an info line), which names both addresses.
 */
export async function spawnAllInOne(env: Record<string, string> = {}): Promise<AllInOneProcess> {
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), "all-in-one-"));
  const merged: NodeJS.ProcessEnv = { ...process.env, PORT: "0", GRPC_PORT: "0", CONSOLE_PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "info", ...env };
  delete merged.DATABASE_URL;
  delete merged.NATS_URL;
  // As `pnpm start` on a newcomer's machine: it makes its own operator key unless `env` gives one.
  if (!("OPERATOR_ASSERTION_PUBLIC_KEY" in env)) delete merged.OPERATOR_ASSERTION_PUBLIC_KEY;
  if (!("OPERATOR_ASSERTION_PRIVATE_KEY" in env)) delete merged.OPERATOR_ASSERTION_PRIVATE_KEY;
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/all-in-one/src/main.ts"], { cwd: repositoryRoot, env: merged, stdio: ["ignore", "pipe", "pipe"] });
  const logLines: string[] = [];
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    // A data folder the caller gave is the caller's to remove.
    if (!env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
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
    const cli = (args: readonly string[], more: Record<string, string | undefined> = {}) => runCli(args, { GRPC_URL: urls.grpcUrl, DATA_DIR: dataDir, ...more });
    const operatorKey = () => readFileSync(join(dataDir, LOCAL_ADMIN_KEY_FILE), "utf8");
    // As its machine's CLI: the local admin key for the person, its `cli` workload key for the program.
    const cliKey = () => workloadKeyFile(join(dataDir, LOCAL_WORKLOAD_DIR), "cli");
    const client = <S extends DescService>(service: S, options: TestClientOptions = {}) =>
      createServiceClient(service, urls.grpcUrl, { signingKey: operatorKey(), workload: signedIdentity(workloadSignerFromEnv({ WORKLOAD_KEY: cliKey() }, "cli", systemClock)!), ...options });
    return { child, ...urls, dataDir, logLines, stop, cli, operatorKey, client };
  } catch (err) {
    await stop();
    throw err;
  }
}
