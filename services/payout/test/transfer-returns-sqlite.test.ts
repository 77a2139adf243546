import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { manualClock, registerServiceClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { createPayoutModule } from "../src/index.js";
import { recordingConnectors, transferReturnSuite, WORKER_ENV, type Sent } from "./transfer-returns-suite.js";

// Transfer returns in the embedded mode of `pnpm start`: SQLite files and the in-process bus.
const clock = manualClock(new Date("2026-11-26T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "payout-transfer-returns-"));
const sent: Sent = { sandbox: [], live: [] };
let running: RunningServices | undefined;
let unregisterClock: (() => void) | undefined;

test.before(async () => {
  running = await startServices([createPayoutModule(recordingConnectors(sent))], { mode: "all-in-one", clock, env: { ...TEST_OPERATOR_ENV, ...WORKER_ENV, DATA_DIR: dir } });
  unregisterClock = registerServiceClock(running.server.url, clock);
});

test.after.always(async () => {
  unregisterClock?.();
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

transferReturnSuite(test, () => running!, sent);
