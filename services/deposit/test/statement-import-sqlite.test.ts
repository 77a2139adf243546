import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { startServices, type RunningServices } from "@payments/kit";
import { depositModule } from "../src/index.js";
import { statementImportSuite } from "./statement-import-suite.js";
import { bankCatalogModule, merchantModule } from "@payments/testing/services";

// Statement imports on the embedded storage of `pnpm start` (SQLite).
const dir = mkdtempSync(join(tmpdir(), "deposit-statement-import-"));
let running: RunningServices | undefined;

test.after.always(async () => {
  await running?.stop();
  rmSync(dir, { recursive: true, force: true });
});

statementImportSuite(test, async () => {
  running = await startServices([merchantModule, bankCatalogModule, depositModule], { mode: "all-in-one", env: { DATA_DIR: dir, GRPC_PORT: "0", LOG_LEVEL: "fatal", MASTER_KEY: "9e".repeat(32) } });
  return running;
});
