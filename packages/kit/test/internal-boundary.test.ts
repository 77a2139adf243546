import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import test from "ava";
import { assertInternalBoundary, ConfigError, createLogger, internalTokenProblem, isLoopbackHost, startServices, type ServiceModule } from "../src/index.js";
import { openGuard } from "./fixtures/open-guard.js";

const logger = createLogger({ service: "test", level: "silent" });
const emptyModule: ServiceModule = { name: "probe", services: [], migrations: [], createContext: (base) => base, routes: () => undefined, access: () => [] };
const token = "a-long-internal-token";

test("loopback hosts: 127.0.0.0/8, ::1 in any spelling and localhost; wildcards and other addresses are not", (t) => {
  for (const host of ["127.0.0.1", "127.1.2.3", "127.255.255.254", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "localhost", "LOCALHOST", " 127.0.0.1 "]) {
    t.true(isLoopbackHost(host), host);
  }
  for (const host of ["0.0.0.0", "::", "[::]", "10.0.0.5", "192.168.1.10", "128.0.0.1", "::ffff:10.0.0.1", "fe80::1", "merchant", "localhost.example.com", "example.com", ""]) {
    t.false(isLoopbackHost(host), host);
  }
});

test("a non-loopback GRPC_HOST needs INTERNAL_API_TOKEN; loopback needs none", (t) => {
  t.is(internalTokenProblem({ GRPC_HOST: "127.0.0.1" }), undefined);
  t.is(internalTokenProblem({ GRPC_HOST: "::1" }), undefined);
  t.is(internalTokenProblem({ GRPC_HOST: "localhost" }), undefined);
  t.is(internalTokenProblem({ GRPC_HOST: "0.0.0.0", INTERNAL_API_TOKEN: token }), undefined);
  t.is(internalTokenProblem({ GRPC_HOST: "10.0.0.5", INTERNAL_API_TOKEN: token }), undefined);
  for (const host of ["0.0.0.0", "::", "10.0.0.5", "merchant"]) {
    t.truthy(internalTokenProblem({ GRPC_HOST: host }), host);
    t.truthy(internalTokenProblem({ GRPC_HOST: host, INTERNAL_API_TOKEN: "" }), `${host} with an empty token`);
  }
});

test("the refusal is a ConfigError that names INTERNAL_API_TOKEN, the host and why", (t) => {
  const err = t.throws(() => assertInternalBoundary({ GRPC_HOST: "0.0.0.0" }), { instanceOf: ConfigError });
  t.regex(err.message, /^invalid configuration:\n {2}INTERNAL_API_TOKEN: required because GRPC_HOST=0\.0\.0\.0 is not a loopback address/);
  t.regex(err.message, /anyone who reaches it could probe every internal RPC/);
  t.regex(err.message, /bind GRPC_HOST to 127\.0\.0\.1/);
  t.notThrows(() => assertInternalBoundary({ GRPC_HOST: "127.0.0.1" }));
});

/** A port held by this test on every interface: a service that tried to listen on it would fail with EADDRINUSE instead. */
async function heldPort(t: { teardown(fn: () => unknown): void }): Promise<number> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, "0.0.0.0", resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  return (holder.address() as net.AddressInfo).port;
}

for (const [mode, host] of [
  ["split", "0.0.0.0"],
  ["split", "::"],
  ["all-in-one", "0.0.0.0"],
] as const) {
  test(`startServices (${mode}) on ${host} without INTERNAL_API_TOKEN refuses before it listens or opens anything`, async (t) => {
    const port = await heldPort(t);
    const dataDir = join(mkdtempSync(join(tmpdir(), "kit-boundary-")), "data");
    t.teardown(() => rmSync(join(dataDir, ".."), { recursive: true, force: true }));
    const err = await t.throwsAsync(
      startServices([emptyModule], { guard: openGuard, mode, logger, env: { GRPC_HOST: host, GRPC_PORT: String(port), DATA_DIR: dataDir } }),
      { instanceOf: ConfigError },
    );
    // Not EADDRINUSE: the check ran before listen. No DATA_DIR: before any database was opened.
    t.regex(err.message, /INTERNAL_API_TOKEN: required because GRPC_HOST=/);
    t.false(existsSync(dataDir));
  });
}

test("startServices starts on loopback without a token, and on 0.0.0.0 with one", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "kit-boundary-"));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const local = await startServices([emptyModule], { guard: openGuard, mode: "all-in-one", logger, env: { GRPC_PORT: "0", DATA_DIR: dataDir } });
  t.teardown(() => local.stop());
  t.regex(local.server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const open = await startServices([{ ...emptyModule, name: "probe2" }], { guard: openGuard, mode: "split", logger, env: { GRPC_HOST: "0.0.0.0", GRPC_PORT: "0", DATA_DIR: dataDir, INTERNAL_API_TOKEN: token } });
  t.teardown(() => open.stop());
  t.true(open.server.port > 0);
});

test("a service process on 0.0.0.0 without INTERNAL_API_TOKEN exits non-zero with the reason, without listening", async (t) => {
  const port = await heldPort(t);
  const dataDir = mkdtempSync(join(tmpdir(), "kit-boundary-"));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  const fixture = fileURLToPath(new URL("fixtures/run-empty-service.ts", import.meta.url));
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", fixture], {
    cwd: root,
    env: { PATH: process.env.PATH, GRPC_HOST: "0.0.0.0", GRPC_PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  t.is(code, 1, stderr);
  // One JSON line: level fatal, the service, the readable reason in msg.
  const lines = stderr.trim().split("\n");
  t.is(lines.length, 1, stderr);
  const line = JSON.parse(lines[0]!) as { level: string; service: string; msg: string; err: { type: string } };
  t.is(line.level, "fatal");
  t.is(line.service, "probe");
  t.is(line.err.type, "ConfigError");
  t.regex(line.msg, /^failed to start: invalid configuration:\n {2}INTERNAL_API_TOKEN: required because GRPC_HOST=0\.0\.0\.0 is not a loopback address/);
  t.notRegex(stderr, /EADDRINUSE/);
});
