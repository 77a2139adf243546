import test from "ava";
import { createTestDatabase } from "@payments/testing";
import { reconciliationFlowSuite } from "./reconciliation-flow-suite.js";

// The same suite on MySQL: each service its own database, derived from one test database.
reconciliationFlowSuite(test, async () => {
  const database = await createTestDatabase();
  return { env: { DATABASE_URL: database.url }, drop: () => database.drop() };
});
