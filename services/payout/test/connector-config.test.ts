import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import test from "ava";
import { ConfigError } from "@payments/kit";
import { startServices } from "@payments/access";
import { createPayoutModule, createSandboxConnector, loadPayoutConfig, LIVE_CONNECTORS } from "../src/index.js";
import { TEST_OPERATOR_ENV } from "@payments/testing";

// PAYOUT_CONNECTOR picks the live connector. Sandbox is never one: a sandbox merchant's
// withdrawals always go to the sandbox connector, and live money never goes to the simulator.

const here = dirname(fileURLToPath(import.meta.url));

test("PAYOUT_CONNECTOR defaults to manual, the only live connector today; the name is trimmed and case-insensitive", (t) => {
  t.deepEqual([...LIVE_CONNECTORS], ["manual"]);
  t.is(loadPayoutConfig({}).PAYOUT_CONNECTOR, "manual");
  t.is(loadPayoutConfig({ PAYOUT_CONNECTOR: "" }).PAYOUT_CONNECTOR, "manual", "empty counts as unset");
  t.is(loadPayoutConfig({ PAYOUT_CONNECTOR: " Manual " }).PAYOUT_CONNECTOR, "manual");
});

test("PAYOUT_CONNECTOR=sandbox is refused at config parse, saying why", (t) => {
  for (const value of ["sandbox", "SANDBOX", " sandbox "]) {
    const err = t.throws(() => loadPayoutConfig({ PAYOUT_CONNECTOR: value }), { instanceOf: ConfigError }, value);
    t.regex(
      err.message,
      /PAYOUT_CONNECTOR: "sandbox" is not a live connector: sandbox merchants' withdrawals always go to the sandbox connector, and live money never goes through the simulator \(the live connectors are: manual\)/,
    );
  }
});

test("an unknown PAYOUT_CONNECTOR is refused at config parse, naming the live connectors", (t) => {
  const err = t.throws(() => loadPayoutConfig({ PAYOUT_CONNECTOR: "garanti-api" }), { instanceOf: ConfigError });
  t.regex(err.message, /PAYOUT_CONNECTOR: "garanti-api" is not a live connector \(the live connectors are: manual\)/);
});

test("a service given PAYOUT_CONNECTOR=sandbox does not start; nor does one handed the sandbox connector as its live connector", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "payout-connector-config-"));
  try {
    const env = { DATA_DIR: dir, GRPC_PORT: "0", LOG_LEVEL: "silent", PAYOUT_WORKER: "0", MERCHANT_SERVICE_URL: "http://127.0.0.1:1", BANK_CATALOG_SERVICE_URL: "http://127.0.0.1:1" };
    await t.throwsAsync(startServices([createPayoutModule()], { mode: "split", env: { ...TEST_OPERATOR_ENV, ...env, PAYOUT_CONNECTOR: "sandbox" } }), { message: /PAYOUT_CONNECTOR: "sandbox" is not a live connector/ });
    await t.throwsAsync(startServices([createPayoutModule({ liveConnector: createSandboxConnector({ delayMs: 0 }) })], { mode: "split", env: { ...TEST_OPERATOR_ENV, ...env } }), {
      message: /the sandbox connector cannot be the live connector/,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the payout process (src/main.ts) exits 1 at start with the reason on stderr when PAYOUT_CONNECTOR=sandbox", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "payout-connector-main-"));
  try {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", join(here, "../src/main.ts")], {
        env: { PATH: process.env.PATH, ...TEST_OPERATOR_ENV, DATA_DIR: dir, GRPC_PORT: "0", LOG_LEVEL: "silent", PAYOUT_CONNECTOR: "sandbox", BANK_CATALOG_SERVICE_URL: "http://127.0.0.1:1", MERCHANT_SERVICE_URL: "http://127.0.0.1:1" },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("error", reject);
      child.on("exit", (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
    t.is(result.code, 1, result.stderr);
    // Every line JSON; the failure is one fatal line naming the service, the reason readable in msg.
    const lines = result.stderr.trim().split("\n").map((l) => JSON.parse(l) as { level: string; service: string; msg: string });
    const fatal = lines.find((l) => l.level === "fatal");
    t.is(fatal?.service, "payout", result.stderr);
    t.regex(fatal?.msg ?? "", /^failed to start: invalid configuration:\n {2}PAYOUT_CONNECTOR: "sandbox" is not a live connector/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
