import test from "ava";
import { createLogger, ensureDatabase, openDatabase } from "@payments/kit";
import { createTestDatabase } from "@payments/testing";

// Every line a service prints is JSON (issue 12): knex's own warnings too, through the
// service's logger. `.returning()` on MySQL is a query knex warns about and runs anyway.
test("knex's warnings are JSON lines on the service's logger, naming knex", async (t) => {
  const database = await createTestDatabase();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ service: "db-log-test", level: "info", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url, logger });
  try {
    await db.schema.createTable("things", (table) => {
      table.increments("id");
      table.string("name");
    });
    await db("things").insert({ name: "a" }).returning("id");
    const warning = lines.find((line) => line.component === "knex");
    t.truthy(warning, JSON.stringify(lines));
    t.is(warning!.level, "warn");
    t.regex(String(warning!.msg), /returning/);
    t.is(warning!.service, "db-log-test");
  } finally {
    await db.destroy();
    await database.drop();
  }
});
