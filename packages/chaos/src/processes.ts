import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { imageRuntime } from "@payments/testing";
import { join } from "node:path";

/** The repository root (packages/chaos/src → ../../..). */
export const repoRoot = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");

/** The compiled entry of a deployable (`pnpm build` first): `node <dir>/dist/main.js`, as the image runs it. */
export function compiledEntry(packageDir: string): string[] {
  const file = join(repoRoot, packageDir, "dist", "main.js");
  if (!existsSync(file)) throw new Error(`${file} is missing: run pnpm build first (pnpm test:chaos does)`);
  return [file];
}

export type ProcessState = "running" | "paused" | "down";

/**
 * One replica of the deployment: a node process it can kill -9, pause (SIGSTOP), resume and
 * start again on the same port and settings. Everything it prints goes to `<logDir>/<name>.log`.
 */
export class Replica {
  private child?: ChildProcess;
  state: ProcessState = "down";
  starts = 0;
  /** Exits nobody asked for (not a kill -9 of the schedule, not the end of the run), with their code. */
  readonly unexpectedExits: string[] = [];
  /** Set while the run means the process to be down: its exit is then no surprise. */
  private exitExpected = false;
  private stopped = false;
  private restartDelayMs = 1_000;
  private readonly runtime = imageRuntime();

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly args: readonly string[],
    readonly env: NodeJS.ProcessEnv,
    private readonly logFile: string,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    if (this.state !== "down" || this.stopped) return;
    this.exitExpected = false;
    this.starts++;
    const child = spawn(process.execPath, [...this.runtime.flags, ...this.args], {
      cwd: repoRoot,
      env: { ...this.env, ...this.runtime.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const log = (chunk: Buffer) => appendFileSync(this.logFile, chunk);
    child.stdout.on("data", log);
    child.stderr.on("data", log);
    child.once("exit", (code, signal) => {
      appendFileSync(this.logFile, `\n[chaos] ${this.name} exited: ${code ?? signal}\n`);
      if (this.child !== child) return;
      this.state = "down";
      if (this.exitExpected || this.stopped) return;
      // As an orchestrator does: a process that exits by itself is started again, later each time.
      this.unexpectedExits.push(`${new Date().toISOString()} ${this.name} exited by itself (${code ?? signal})`);
      const delay = this.restartDelayMs;
      this.restartDelayMs = Math.min(this.restartDelayMs * 2, 10_000);
      setTimeout(() => this.start(), delay).unref();
    });
    this.child = child;
    this.state = "running";
  }

  /** Answers GET /healthz with 200 (or the deadline passes: throws with the log's tail). */
  async ready(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.state === "down") break;
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/healthz`, { signal: AbortSignal.timeout(1_000) });
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`${this.name} was not ready within ${timeoutMs} ms (${this.state}); see ${this.logFile}:\n${tail(this.logFile)}`);
  }

  /** kill -9 and wait for the exit. */
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child || this.state === "down") return;
    this.exitExpected = true;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    this.state = "down";
  }

  pause(): void {
    if (this.state !== "running") return;
    this.child?.kill("SIGSTOP");
    this.state = "paused";
  }

  resume(): void {
    if (this.state !== "paused") return;
    this.child?.kill("SIGCONT");
    this.state = "running";
  }

  /** SIGTERM (after SIGCONT when paused), SIGKILL after graceMs. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (!child || this.state === "down") return;
    if (this.state === "paused") child.kill("SIGCONT");
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
    this.state = "down";
  }

  /** Last resort on exit: SIGKILL, synchronously. */
  killNow(): void {
    this.stopped = true;
    if (this.child && this.state !== "down") {
      this.child.kill("SIGCONT");
      this.child.kill("SIGKILL");
    }
  }
}

export function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
