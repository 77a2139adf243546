import mysql from "mysql2/promise";

/**
 * MariaDB's global statement counters (`SHOW GLOBAL STATUS`), read before and after a
 * measured window to give the statements the product sent per request or per event.
 * Global: anything else using that server meanwhile counts too (the report says so).
 */

/** `Questions`: every statement a client sent (prepared executions included, stored programs' own not). The others break it down. */
export const STATUS_COUNTERS = ["Questions", "Com_begin", "Com_commit", "Com_rollback", "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_stmt_execute"] as const;
export type StatusCounter = (typeof STATUS_COUNTERS)[number];
export type StatusCounters = Record<StatusCounter, number>;

/** Statements per request (or event) in a window: `Questions` and each counter, over the units. */
export interface StatementFigures {
  /** Questions in the window, less the bench's own closing read. */
  statements: number;
  perUnit: number;
  /** Every counter's delta ÷ units (Questions among them). */
  countersPerUnit: Record<StatusCounter, number>;
}

const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;

export class MysqlStatus {
  private constructor(private readonly connection: mysql.Connection) {}

  /** One connection of its own to the server of `url` (no database needed). */
  static async open(url: string): Promise<MysqlStatus> {
    const parsed = new URL(url);
    const connection = await mysql.createConnection({
      host: parsed.hostname,
      port: parsed.port ? Number(parsed.port) : 3306,
      user: decodeURIComponent(parsed.username || "root"),
      password: decodeURIComponent(parsed.password),
    });
    // Its errors (the server restarted) surface at the next read; an idle one must not crash the bench.
    connection.on("error", () => undefined);
    return new MysqlStatus(connection);
  }

  /** The counters now; undefined when they could not be read (the figure is then left out, not guessed). */
  async read(): Promise<StatusCounters | undefined> {
    try {
      const [rows] = await this.connection.query<Array<mysql.RowDataPacket & { Variable_name: string; Value: string }>>(
        `SHOW GLOBAL STATUS WHERE Variable_name IN (${STATUS_COUNTERS.map(() => "?").join(", ")})`,
        [...STATUS_COUNTERS],
      );
      const counters = Object.fromEntries(STATUS_COUNTERS.map((name) => [name, 0])) as StatusCounters;
      for (const row of rows) if ((STATUS_COUNTERS as readonly string[]).includes(row.Variable_name)) counters[row.Variable_name as StatusCounter] = Number(row.Value);
      return counters;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    await this.connection.end().catch(() => this.connection.destroy());
  }
}

/** The statements between two reads, per unit (request or event); undefined when either read failed or there were no units. */
export function statementsPer(before: StatusCounters | undefined, after: StatusCounters | undefined, units: number): StatementFigures | undefined {
  if (!before || !after || units <= 0) return undefined;
  // The closing SHOW GLOBAL STATUS counts itself in Questions; the opening one was counted before `before`.
  const statements = Math.max(0, after.Questions - before.Questions - 1);
  const countersPerUnit = Object.fromEntries(STATUS_COUNTERS.map((name) => [name, round((name === "Questions" ? statements : after[name] - before[name]) / units, 3)])) as Record<StatusCounter, number>;
  return { statements, perUnit: round(statements / units, 3), countersPerUnit };
}
