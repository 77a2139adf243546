import test from "ava";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { bankListProblems, signedFetch } from "./helpers.js";

// The newcomer's path, for real: `pnpm start` on embedded SQLite, a merchant from
// `pnpm cli merchant create --json`, a signed bank list, then SIGTERM.
const root = new URL("..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "all-in-one-"));
let server: ChildProcess;
let gatewayUrl = "";
let grpcUrl = "";
const logLines: string[] = [];

function freePortEnv(): Record<string, string> {
  // Port 0: the process picks free ports and reports them on its ready line.
  return { PORT: "0", GRPC_PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "info" };
}

test.before(async () => {
  const env = { ...process.env, ...freePortEnv() };
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  // What `pnpm start` runs, without pnpm in between: pnpm does not pass SIGTERM on.
  server = spawn(process.execPath, ["--import", "tsx", "packages/all-in-one/src/main.ts"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  server.stderr!.on("data", (d: Buffer) => logLines.push(d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line in 60 s:\n${logLines.join("")}`)), 60_000);
    server.once("exit", (code) => reject(new Error(`pnpm start exited with ${code}:\n${logLines.join("")}`)));
    createInterface({ input: server.stdout! }).on("line", (line) => {
      logLines.push(line);
      if (!line.includes("ready")) return;
      const entry = JSON.parse(line) as { gateway: string; grpc: string; msg: string };
      gatewayUrl = entry.gateway;
      grpcUrl = entry.grpc;
      clearTimeout(timer);
      resolve();
    });
  });
});

test.after.always(() => {
  if (server && server.exitCode === null) server.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("pnpm", ["cli", ...args], { cwd: root, env: { ...process.env, GRPC_URL: grpcUrl } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

test.serial("pnpm start prints a ready line naming the gateway and the internal address", (t) => {
  t.regex(gatewayUrl, /^http:\/\/.+:\d+$/);
  t.regex(grpcUrl, /^http:\/\/.+:\d+$/);
});

test.serial("a merchant made with `pnpm cli merchant create --json` gets the signed bank list", async (t) => {
  const made = await cli(["merchant", "create", "--name", "Newcomer Shop", "--json"]);
  t.is(made.code, 0, made.stderr);
  const lines = made.stdout.trim().split("\n");
  t.is(lines.length, 1, `exactly one line of JSON, got:\n${made.stdout}`);
  const creds = JSON.parse(lines[0]!) as { merchantId: string; apiKey: string; apiSecret: string };
  t.deepEqual(Object.keys(creds).sort(), ["apiKey", "apiSecret", "merchantId"]);
  const res = await signedFetch(gatewayUrl, creds, "GET", "/v1/available-banks");
  t.is(res.status, 200, JSON.stringify(res.json));
  t.deepEqual(bankListProblems(res.json.data), []);
  const wrong = await signedFetch(gatewayUrl, { ...creds, apiSecret: "sk_wrong" }, "GET", "/v1/available-banks");
  t.is(wrong.status, 401);
  t.is((wrong.json.error as { code: string }).code, "INVALID_SIGNATURE");
});

test.serial("SIGTERM stops the process cleanly", async (t) => {
  const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
  server.kill("SIGTERM");
  t.is(await exited, 0);
});
