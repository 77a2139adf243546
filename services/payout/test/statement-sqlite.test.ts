import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { statementSuite } from "./statement-suite.js";

// The embedded mode of `pnpm start`: SQLite files and the in-process bus.
statementSuite(test, async () => {
  const dir = mkdtempSync(join(tmpdir(), "payout-statement-"));
  return { env: { DATA_DIR: dir }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
