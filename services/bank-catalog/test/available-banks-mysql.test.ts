import test from "ava";
import { createTestDatabase } from "@payments/testing";
import { availableBanksSuite } from "./available-banks-suite.js";

// MySQL (MariaDB), as a split deployment runs the service.
const database = await createTestDatabase();

availableBanksSuite(test, {
  env: async () => ({ DATABASE_URL: database.url }),
  cleanUp: () => database.drop(),
});
