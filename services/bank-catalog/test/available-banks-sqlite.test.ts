import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { availableBanksSuite } from "./available-banks-suite.js";

// SQLite, as `pnpm start` runs the service (without NATS, which it would warn about).
const dataDir = await mkdtemp(join(tmpdir(), "bank-catalog-truth-"));

availableBanksSuite(test, {
  env: async () => ({ DATA_DIR: dataDir, LOG_LEVEL: "error" }),
  cleanUp: () => rm(dataDir, { recursive: true, force: true }),
});
