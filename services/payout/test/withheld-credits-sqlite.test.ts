import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type RunningServices } from "@payments/kit";
import { manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { withheldCreditSuite } from "./withheld-credits-suite.js";

// Withheld credits in the embedded mode of `pnpm start`: SQLite files and the in-process bus.
const clock = manualClock(new Date("2026-11-27T10:00:00.000Z"));
const dir = mkdtempSync(join(tmpdir(), "payout-withheld-credits-"));
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "payout"], {
    clock,
    env: { LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER: "0", DATA_DIR: dir },
  });
});

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

withheldCreditSuite(test, () => running!, clock);
