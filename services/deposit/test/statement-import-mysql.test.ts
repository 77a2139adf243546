import test from "ava";
import { startServices, type RunningServices } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { depositModule } from "../src/index.js";
import { statementImportSuite } from "./statement-import-suite.js";
import { bankCatalogModule, merchantModule } from "@payments/testing/services";

// Statement imports on MariaDB/MySQL.
const database = await createTestDatabase();
let running: RunningServices | undefined;

test.after.always(async () => {
  await running?.stop();
  await database.drop();
});

statementImportSuite(test, async () => {
  running = await startServices([merchantModule, bankCatalogModule, depositModule], { mode: "all-in-one", env: { DATABASE_URL: database.url, GRPC_PORT: "0", LOG_LEVEL: "fatal", MASTER_KEY: "9e".repeat(32) } });
  return running;
});
