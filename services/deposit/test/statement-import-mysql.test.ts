import test from "ava";
import { type RunningServices } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { depositModule } from "../src/index.js";
import { statementImportSuite } from "./statement-import-suite.js";

// Statement imports on MariaDB/MySQL.
const database = await createTestDatabase();
let running: RunningServices | undefined;

test.after.always(async () => {
  await running?.stop();
  await database.drop();
});

statementImportSuite(test, async () => {
  running = await startInProcess(["merchant", "bank-catalog", depositModule], { env: { DATABASE_URL: database.url, LOG_LEVEL: "fatal", MASTER_KEY: "9e".repeat(32) } });
  return running;
});
