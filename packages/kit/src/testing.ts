import { randomBytes } from "node:crypto";
import knexFactory from "knex";
import { JetStreamBus } from "./bus.js";
import type { Clock } from "./clock.js";

/** MySQL server for tests: MYSQL_TEST_URL, default the local MariaDB as root. */
export const mysqlTestServer = process.env.MYSQL_TEST_URL ?? "mysql://root@127.0.0.1:3306/test";
/** NATS server for tests: NATS_TEST_URL, default the local JetStream server. */
export const natsTestUrl = process.env.NATS_TEST_URL ?? "nats://127.0.0.1:4222";

export function uniqueName(prefix = "t"): string {
  return `${prefix}${randomBytes(5).toString("hex")}`;
}

/**
 * A fresh, empty MySQL database named `<base>`, for one test file. `url` is the base
 * database (all-in-one derives `<base>_<service>` from it); drop() removes every
 * database starting with the base name.
 */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
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

/** Environment for a JetStream deployment of its own (stream and subject prefix), so parallel tests never see each other's events. */
export function jetStreamTestEnv(): { NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string } {
  const id = uniqueName("t");
  return { NATS_URL: natsTestUrl, NATS_STREAM: id.toUpperCase(), NATS_SUBJECT_PREFIX: id };
}

/** Deletes the stream named in a jetStreamTestEnv(). */
export async function deleteTestStream(env: { NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string }): Promise<void> {
  const bus = await JetStreamBus.connect({ url: env.NATS_URL, stream: env.NATS_STREAM, subjectPrefix: env.NATS_SUBJECT_PREFIX });
  await bus.deleteStream();
  await bus.close();
}

/** A clock tests move by hand. */
export function manualClock(start = new Date("2026-11-22T10:00:00.000Z")): Clock & { set(date: Date): void; advance(ms: number): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    set: (date) => {
      now = date.getTime();
    },
    advance: (ms) => {
      now += ms;
    },
  };
}
