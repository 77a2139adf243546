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
  /** As the test server's own user (root): what migrates, and what a test inspects tables with. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A database user of a test's own, as a service's runtime user is in production (kit database-grants.ts). */
export interface TestDatabaseUser {
  /** `'name'@'%'`, for MIGRATE_GRANT_TO. */
  grantee: string;
  user: string;
  /** `url` (a URL of the same server) with this user's name and password instead. */
  urlFor(url: string): string;
  drop(): Promise<void>;
}

function adminConnection(serverUrl: string): Knex {
  const server = new URL(serverUrl);
  return knexFactory({
    client: "mysql2",
    connection: { host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || "root"), password: decodeURIComponent(server.password) },
    pool: { min: 0, max: 1 },
  });
}

/**
 * A user with a password and no privilege at all (only the migrate step's grants give it its
 * tables), on the server of `serverUrl` as that URL's user (which must be allowed CREATE USER):
 * the runtime user of a least-privilege deployment. `drop()` removes it with every grant it got.
 */
export async function createTestDatabaseUser(serverUrl: string = mysqlTestServer, prefix = "pgu_"): Promise<TestDatabaseUser> {
  const user = uniqueName(prefix);
  const password = randomBytes(12).toString("hex");
  const grantee = `'${user}'@'%'`;
  const admin = adminConnection(serverUrl);
  try {
    await admin.raw(`CREATE USER ${grantee} IDENTIFIED BY '${password}'`);
  } finally {
    await admin.destroy();
  }
  return {
    grantee,
    user,
    urlFor(url) {
      const withUser = new URL(url);
      withUser.username = user;
      withUser.password = password;
      return withUser.toString();
    },
    async drop() {
      const dropper = adminConnection(serverUrl);
      try {
        await dropper.raw(`DROP USER IF EXISTS ${grantee}`);
      } finally {
        await dropper.destroy();
      }
    },
  };
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
      const admin = adminConnection(url);
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
 * A test database (not created: the service's start or migrate job creates it) with a runtime
 * user of its own: the settings a service gets to run with least privilege, as production does.
 * `url` stays the migrating (root) user's; `drop()` removes the database and the user.
 */
export interface LeastPrivilegeDatabase extends TestDatabase {
  runtime: TestDatabaseUser;
  /** DATABASE_URL (the runtime user), MIGRATE_DATABASE_URL (root) and MIGRATE_GRANT_TO of a service using it. */
  env: { DATABASE_URL: string; MIGRATE_DATABASE_URL: string; MIGRATE_GRANT_TO: string };
}

export async function createLeastPrivilegeDatabase(): Promise<LeastPrivilegeDatabase> {
  const database = await createTestDatabase();
  const runtime = await createTestDatabaseUser();
  return {
    ...database,
    runtime,
    env: { DATABASE_URL: runtime.urlFor(database.url), MIGRATE_DATABASE_URL: database.url, MIGRATE_GRANT_TO: runtime.grantee },
    async drop() {
      await database.drop();
      await runtime.drop();
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
