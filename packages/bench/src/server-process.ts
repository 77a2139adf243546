import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { imageRuntime } from "@payments/testing";

/** The repository root (packages/bench/src → ../../..). */
export const repoRoot = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");

/** Every server process this run started, so a failure or Ctrl-C stops them all. */
const running = new Set<ServerProcess>();

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** performance.now() when it was spawned. */
  spawnedAt: number;
  /** Last lines of stdout and stderr, for the error message when it fails. */
  tail(): string;
  /** Resolves with the first stdout line for which `match` returns a value. */
  waitForLine<T>(match: (line: string) => T | undefined, timeoutMs: number): Promise<T>;
  /** SIGTERM, then SIGKILL after graceMs; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * A node entry point of the product: the compiled `dist/<file>.js` beside `src/` when a
 * build exists (`pnpm bench` runs `pnpm build` first), run with plain node and the image's
 * node flags so its workspace packages resolve to their dist/ too, as in the images; else the TypeScript source through
 * tsx with the `source` export condition (as `pnpm start` runs it).
 */
export function nodeEntry(packageDir: string, file = "main"): string[] {
  const compiled = join(repoRoot, packageDir, "dist", `${file}.js`);
  if (existsSync(compiled)) return [...imageRuntime().flags, compiled];
  return ["--conditions=source", "--import", "tsx", join(repoRoot, packageDir, "src", `${file}.ts`)];
}

export function spawnServer(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { nodeFlags?: readonly string[]; ipc?: boolean } = {},
): ServerProcess {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), ...args], {
    cwd: repoRoot,
    env: { ...env, ...imageRuntime().env },
    stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
    // Its own process group: a Ctrl-C reaches only the bench, which then stops each server
    // with one SIGTERM (a second signal would kill a server midway, losing its CPU profile).
    detached: true,
  });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${process.execPath}`);
  const lines: string[] = [];
  // BENCH_LOG_DIR: every line each process prints, kept in <dir>/<name>.log, for finding the cause of a failed call.
  const logFile = process.env.BENCH_LOG_DIR ? join(process.env.BENCH_LOG_DIR, `${name}.log`) : undefined;
  if (logFile) mkdirSync(dirname(logFile), { recursive: true });
  const remember = (line: string) => {
    lines.push(line);
    if (lines.length > 60) lines.shift();
    if (logFile) appendFileSync(logFile, `${line}\n`);
  };
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    remember(line);
    for (const listener of listeners) listener(line);
  });
  createInterface({ input: child.stderr! }).on("line", remember);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let stopping: Promise<void> | undefined;

  const server: ServerProcess = {
    name,
    child,
    pid: child.pid,
    spawnedAt,
    exited,
    tail: () => lines.join("\n"),
    waitForLine<T>(match: (line: string) => T | undefined, timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`${name}: no ready line within ${timeoutMs} ms\n${server.tail()}`)), timeoutMs);
        const listener = (line: string) => {
          const value = match(line);
          if (value !== undefined) finish(undefined, value);
        };
        const finish = (err?: Error, value?: T) => {
          clearTimeout(timer);
          listeners.delete(listener);
          if (err) reject(err);
          else resolve(value as T);
        };
        listeners.add(listener);
        void exited.then(({ code, signal }) => finish(new Error(`${name} exited (${code ?? signal}) before it was ready\n${server.tail()}`)));
      });
    },
    stop(graceMs = 15_000) {
      // Once only: a second SIGTERM would find no handler left and kill the process midway.
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
          await exited;
          clearTimeout(timer);
        }
        running.delete(server);
      })();
      return stopping;
    },
  };
  running.add(server);
  return server;
}

/** Stops every server still running, in reverse start order. */
export async function stopAllServers(graceMs = 15_000): Promise<void> {
  for (const server of [...running].reverse()) await server.stop(graceMs);
}

/** Last resort on process exit: SIGKILL whatever is left (synchronous). */
export function killAllServersNow(): void {
  for (const server of running) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
  }
}

/** Polls `url` until it answers 200; resolves with performance.now() at that moment. */
export async function waitForHttp200(url: string, server: ServerProcess, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  // Set when the process exits, so not the literal `false` TS would narrow it to.
  let exitedEarly = false as boolean;
  void server.exited.then(() => (exitedEarly = true));
  for (;;) {
    if (exitedEarly) throw new Error(`${server.name} exited before it was ready\n${server.tail()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now();
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) throw new Error(`${server.name}: ${url} not 200 within ${timeoutMs} ms\n${server.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
