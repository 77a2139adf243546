import type { Knex } from "knex";
import type { ConsoleRoute } from "../route.js";
import { ConsoleError } from "../errors.js";

/** What readiness depends on: listening, not draining, migrations applied, the database answering. */
export interface ConsoleReadiness {
  listening(): boolean;
  draining(): boolean;
  migrated(): boolean;
}

async function databaseAnswers(db: Knex, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      db.raw("SELECT 1").then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GET /livez (the process answers) and GET /readyz (it can serve: its own database, which holds
 * every session, answers). The services are not asked: one being down leaves sign-in working.
 */
export function probes(deps: { db: Knex; readiness: ConsoleReadiness }): ConsoleRoute[] {
  return [
    {
      method: "GET",
      path: "/livez",
      access: "api",
      handler: (ctx) => {
        ctx.body = { status: "ok" };
      },
    },
    {
      method: "GET",
      path: "/readyz",
      access: "api",
      handler: async (ctx) => {
        const checks = {
          server: deps.readiness.listening() ? "ok" : "not listening",
          draining: deps.readiness.draining() ? "shutting down" : "ok",
          migrations: deps.readiness.migrated() ? "ok" : "not applied yet",
          database: (await databaseAnswers(deps.db, 1000)) ? "ok" : "not answering",
        };
        if (!Object.values(checks).every((c) => c === "ok")) throw new ConsoleError(503, "NOT_READY", JSON.stringify(checks));
        ctx.body = { status: "READY", checks };
      },
    },
  ];
}
