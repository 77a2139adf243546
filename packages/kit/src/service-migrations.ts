import type { Migration } from "./db.js";
import { approvalsMigration } from "./approvals.js";
import { auditMigration, merchantScopeMigration } from "./operator-audit.js";
import { outboxMigrations } from "./outbox.js";

/** Every migration a service's database gets: the kit's outbox, audit and approval tables, then the module's own. */
export function serviceMigrations(module: { migrations: readonly Migration[] }): Migration[] {
  return [...outboxMigrations, auditMigration, approvalsMigration, merchantScopeMigration, ...module.migrations];
}
