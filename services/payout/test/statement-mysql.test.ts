import test from "ava";
import { createTestDatabase } from "@payments/testing";
import { statementSuite } from "./statement-suite.js";

// MySQL (MariaDB at 127.0.0.1:3306, a database of its own): SUM comes back as DECIMAL text,
// and the statement's reads share one REPEATABLE READ snapshot.
statementSuite(test, async () => {
  const database = await createTestDatabase();
  return { env: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
});
