import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { type RunningServices } from "@payments/kit";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";
import { statementImportSuite } from "./statement-import-suite.js";

// Statement imports on the embedded storage of `pnpm start` (SQLite).
const dir = mkdtempSync(join(tmpdir(), "deposit-statement-import-"));
let running: RunningServices | undefined;

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

statementImportSuite(test, async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], { env: { DATA_DIR: dir, LOG_LEVEL: "fatal", MASTER_KEY: "9e".repeat(32) } });
  return running;
});
