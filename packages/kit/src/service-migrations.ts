import type { Migration } from "./db.js";
import { outboxMigrations } from "./outbox.js";

/** Every migration a service's database gets: the kit's outbox, the CallGuard's tables (audit, approvals), then the module's own. */
export function serviceMigrations(module: { migrations: readonly Migration[] }, guard: readonly Migration[] = []): Migration[] {
  return [...outboxMigrations, ...guard, ...module.migrations];
}
