import { randomBytes } from "node:crypto";
import knexFactory, { type Knex } from "knex";
import { ensureDatabase, migrate, openDatabase, type Migration } from "@payments/kit";

/** MySQL server for tests: MYSQL_TEST_URL, default the local MariaDB as root. */
export const mysqlTestServer = process.env.MYSQL_TEST_URL ?? "mysql://root@127.0.0.1:3306/test";

/** A name no other test run has: `prefix` and 10 random hex digits. */
export function uniqueName(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

/** A database of one test file's own (see createTestDatabase). */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty MySQL database named `<base>`, for one test file. `url` is the base
 * database (all-in-one derives `<base>_<service>` from it); drop() removes every
 * database starting with the base name.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = new URL(mysqlTestServer);
  const name = uniqueName("pgt_");
  server.pathname = `/${name}`;
  const url = server.toString();
  return {
    url,
    name,
    async drop() {
      const admin = knexFactory({
        client: "mysql2",
        connection: { host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || "root"), password: decodeURIComponent(server.password) },
        pool: { min: 0, max: 1 },
      });
      try {
        const [rows] = (await admin.raw("SHOW DATABASES LIKE ?", [`${name}%`])) as [Array<Record<string, string>>];
        for (const row of rows) await admin.raw("DROP DATABASE IF EXISTS ??", [String(Object.values(row)[0])]);
      } finally {
        await admin.destroy();
      }
    },
  };
}

/**
 * A fresh MySQL database of one test's own, created, opened (READ COMMITTED sessions, as the
 * services open theirs, unless `readCommitted: false`) and migrated with `migrations`; closed
 * and dropped when the test ends.
 */
export async function migratedTestDatabase(t: { teardown(fn: () => Promise<void>): void }, migrations: readonly Migration[], options: { readCommitted?: boolean } = {}): Promise<Knex> {
  const database = await createTestDatabase();
  await ensureDatabase(database.url);
  const db = openDatabase({ url: database.url, readCommitted: options.readCommitted ?? true });
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  await migrate(db, migrations);
  return db;
}
