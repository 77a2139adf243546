import { JetStreamBus } from "@payments/kit";
import knexFactory from "knex";

/**
 * The MySQL databases and JetStream streams a run makes for itself, all named after the
 * run id, and dropped at the end (also after a failure or Ctrl-C).
 */
export class ScratchResources {
  private readonly databasePrefixes = new Set<string>();
  private readonly streams: Array<{ NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string }> = [];

  constructor(
    readonly mysqlUrl: string,
    readonly natsUrl: string,
    readonly runId: string,
  ) {}

  /**
   * The URL of a database `bench_<run>_<name>` (not created: the product and the floors
   * create their own). Dropping removes it and every `bench_<run>_<name>_…` the all-in-one
   * derives from it.
   */
  database(name: string): string {
    const base = `bench_${this.runId}_${name}`;
    this.databasePrefixes.add(base);
    const url = new URL(this.mysqlUrl);
    url.pathname = `/${base}`;
    return url.toString();
  }

  /** A stream and subject prefix of this run's own. */
  stream(name: string): { NATS_URL: string; NATS_STREAM: string; NATS_SUBJECT_PREFIX: string } {
    const id = `bench${this.runId}${name}`.toLowerCase().replace(/[^a-z0-9]/g, "");
    const env = { NATS_URL: this.natsUrl, NATS_STREAM: id.toUpperCase(), NATS_SUBJECT_PREFIX: id };
    this.streams.push(env);
    return env;
  }

  async dropAll(): Promise<string[]> {
    const problems: string[] = [];
    const server = new URL(this.mysqlUrl);
    const admin = knexFactory({
      client: "mysql2",
      connection: { host: server.hostname, port: Number(server.port || 3306), user: decodeURIComponent(server.username || "root"), password: decodeURIComponent(server.password) },
      pool: { min: 0, max: 1 },
    });
    try {
      for (const prefix of this.databasePrefixes) {
        const [rows] = (await admin.raw("SHOW DATABASES LIKE ?", [`${prefix.replace(/_/g, "\\_")}%`])) as [Array<Record<string, string>>];
        for (const row of rows) {
          const name = String(Object.values(row)[0]);
          await admin.raw("DROP DATABASE IF EXISTS ??", [name]).catch((err: unknown) => problems.push(`drop ${name}: ${(err as Error).message}`));
        }
      }
      this.databasePrefixes.clear();
    } catch (err) {
      problems.push(`dropping databases: ${(err as Error).message}`);
    } finally {
      await admin.destroy();
    }
    for (const env of this.streams.splice(0)) {
      try {
        const bus = await JetStreamBus.connect({ url: env.NATS_URL, stream: env.NATS_STREAM, subjectPrefix: env.NATS_SUBJECT_PREFIX });
        await bus.deleteStream();
        // The split gateway's shared rate-limit bucket of this deployment (gateway/README.md), when it made one.
        await (await bus.manager()).streams.delete(`KV_${env.NATS_STREAM}_RATE_LIMITS`).catch(() => undefined);
        await bus.close();
      } catch (err) {
        problems.push(`deleting stream ${env.NATS_STREAM}: ${(err as Error).message}`);
      }
    }
    return problems;
  }
}
