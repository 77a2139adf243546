import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServices } from "@payments/access";
import { TEST_OPERATOR_ENV } from "@payments/testing";
import { merchantModule } from "../src/index.js";
import { merchantServiceSuite } from "./merchant-service-suite.js";

// The all-in-one shape: an embedded SQLite file and the in-process bus, same behaviour.
const dataDir = mkdtempSync(join(tmpdir(), "merchant-sqlite-"));

merchantServiceSuite(test, {
  async env() {
    // Without NATS_URL the kit warns that events stay in the process: expected here.
    return { DATA_DIR: dataDir, LOG_LEVEL: "error" };
  },
  async cleanUp() {
    rmSync(dataDir, { recursive: true, force: true });
  },
});

test("the service refuses to start without a MASTER_KEY, naming it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "merchant-nokey-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await t.throwsAsync(startServices([merchantModule], { mode: "split", env: { ...TEST_OPERATOR_ENV, DATA_DIR: dir, GRPC_PORT: "0", LOG_LEVEL: "silent" } }), {
    message: /MASTER_KEY/,
  });
});
