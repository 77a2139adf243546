import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { catalogChangesSuite } from "./catalog-changes-suite.js";

// SQLite and the in-process bus, as `pnpm start` runs the service.
const dataDir = await mkdtemp(join(tmpdir(), "bank-catalog-changes-"));

catalogChangesSuite(test, {
  env: async () => ({ DATA_DIR: dataDir }),
  cleanUp: () => rm(dataDir, { recursive: true, force: true }),
});
