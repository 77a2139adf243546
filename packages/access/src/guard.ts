import type { KeyObject } from "node:crypto";
import { ApprovalService, AuditService } from "@payments/contracts/operator";
import {
  ConfigError,
  loadConfig,
  runMigrateCommand as kitRunMigrateCommand,
  runService as kitRunService,
  startServices as kitStartServices,
  type AnyServiceModule,
  type CallGuard,
  type MigrateCommandOptions,
  type RunningServices,
  type StartOptions,
} from "@payments/kit";
import { z } from "zod";
import { approvalsMigration } from "./approvals.js";
import { loadAssertionPublicKey } from "./operator-assertion.js";
import { AccessRegistry, operatorAccessInterceptor, type ServiceAccess } from "./operator-access.js";
import { auditMigration, merchantScopeMigration } from "./operator-audit.js";
import { operatorRoutes } from "./operator-services.js";

/** The tables the access layer keeps in every service's database. */
export const accessMigrations = [auditMigration, approvalsMigration, merchantScopeMigration] as const;

const guardConfigSchema = z.object({
  /**
   * The console's Ed25519 public key (PEM text, or a PEM file's path) that operator assertions
   * are verified against. Unset: every operator RPC is refused (UNAUTHENTICATED).
   */
  OPERATOR_ASSERTION_PUBLIC_KEY: z.string().optional(),
});

/** OPERATOR_ASSERTION_PUBLIC_KEY, read and checked before anything starts. */
function operatorPublicKey(env: Record<string, string | undefined>): KeyObject | undefined {
  const config = loadConfig(guardConfigSchema, env);
  if (!config.OPERATOR_ASSERTION_PUBLIC_KEY) return undefined;
  try {
    return loadAssertionPublicKey(config.OPERATOR_ASSERTION_PUBLIC_KEY);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  OPERATOR_ASSERTION_PUBLIC_KEY: ${(err as Error).message}`);
  }
}

/**
 * The access layer as the kit's CallGuard: every call a service serves is checked against its
 * module's table (operatorAccessInterceptor), and every service serves the audit and approval
 * services of the modules it hosts.
 */
export function accessGuard(env: Record<string, string | undefined> = process.env): CallGuard {
  const publicKey = operatorPublicKey(env);
  return {
    migrations: accessMigrations,
    outgoing: [],
    serve({ modules, clock, logger, localTransport }) {
      const registry = new AccessRegistry();
      for (const module of modules) registry.add({ name: module.name, db: module.db }, module.tables as readonly ServiceAccess[]);
      return {
        interceptors: [operatorAccessInterceptor({ registry, publicKey, clock, logger })],
        routes: (router) => operatorRoutes(router, { registry, publicKey, clock, logger, transport: localTransport }),
        services: [AuditService, ApprovalService],
      };
    },
  };
}

/** kit's startServices with the access layer: how every service process starts (split or all-in-one). */
export function startServices(modules: readonly AnyServiceModule[], options: StartOptions): Promise<RunningServices> {
  return kitStartServices(modules, { ...options, guard: options.guard ?? accessGuard });
}

/** The main of a split-mode service: the whole deployable is `runService(module)`. */
export function runService(module: AnyServiceModule): Promise<void> {
  return kitRunService(module, { guard: accessGuard });
}

/** kit's migrate command, with the access layer's tables (audit, approvals) in every database. */
export function runMigrateCommand(modules: readonly AnyServiceModule[], argv: readonly string[], options: MigrateCommandOptions = {}): Promise<number> {
  return kitRunMigrateCommand(modules, argv, { ...options, guard: { migrations: accessMigrations } });
}
