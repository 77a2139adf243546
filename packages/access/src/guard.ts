import type { KeyObject } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { ApprovalService, AuditService } from "@payments/contracts/operator";
import {
  ConfigError,
  loadConfig,
  runMigrateCommand as kitRunMigrateCommand,
  runService as kitRunService,
  startServices as kitStartServices,
  type AnyServiceModule,
  type CallGuard,
  type Clock,
  type Env,
  type GuardSetup,
  type MigrateCommandOptions,
  type RunningServices,
  type StartOptions,
} from "@payments/kit";
import { z } from "zod";
import { accessInterceptor } from "./access-interceptor.js";
import { AccessRegistry, type ServiceAccess } from "./access-table.js";
import { approvalsMigration } from "./approvals.js";
import { loadAssertionPublicKey } from "./operator-assertion.js";
import { APPEND_ONLY_TABLES, auditChainMigration, auditMigration, auditWorkloadMigration, merchantScopeMigration } from "./audit-migrations.js";
import { auditHeadConfigSchema, startAuditHeadPublisher } from "./audit-head.js";
import { operatorRoutes } from "./operator-services.js";
import { localIdentity, signedIdentity, workloadIdentityInterceptor } from "./outgoing-identity.js";
import {
  createLocalIdentities,
  createWorkloadSigner,
  DEFAULT_TRUST_DOMAIN,
  loadWorkloadKey,
  parseSpiffeId,
  spiffeId,
  TrustBundle,
  WorkloadVerifier,
  type LocalIdentities,
  type WorkloadSigner,
} from "./workload-identity.js";

/** The tables the access layer keeps in every service's database. */
export const accessMigrations = [auditMigration, approvalsMigration, merchantScopeMigration, auditWorkloadMigration, auditChainMigration] as const;

/** Settings of who calls, on every process that calls or serves an internal API (README, "Workload identities"). */
export const workloadConfigSchema = z.object({
  /** The trust domain of every SPIFFE ID this deployment issues and accepts. */
  WORKLOAD_TRUST_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+$/, "lower-case letters, digits, dots and dashes (a SPIFFE trust domain)")
    .default(DEFAULT_TRUST_DOMAIN),
  /** This process's own Ed25519 private key (PEM text, `\n` allowed, or a PEM file's path): what its calls are signed with. */
  WORKLOAD_KEY: z.string().optional(),
  /** This process's SPIFFE ID, when not its deployable's default (`spiffe://<domain>/<name>`): a bank integration's own path. */
  WORKLOAD_ID: z.string().optional(),
  /** The public keys of every workload (a JWKS with `spiffe_id` on each key, JSON text or a file's path): whom the services believe. */
  WORKLOAD_TRUST_BUNDLE: z.string().optional(),
});

const guardConfigSchema = workloadConfigSchema.merge(auditHeadConfigSchema).extend({
  /**
   * The console's Ed25519 public key (PEM text, or a PEM file's path) that people's assertions
   * are verified against. Unset: every person's call is refused (UNAUTHENTICATED).
   */
  OPERATOR_ASSERTION_PUBLIC_KEY: z.string().optional(),
});

function configProblem(variable: string, err: unknown): ConfigError {
  return new ConfigError(`invalid configuration:\n  ${variable}: ${(err as Error).message}`);
}

/** WORKLOAD_TRUST_BUNDLE, read and checked; undefined when unset. */
export function loadTrustBundle(value: string | undefined): TrustBundle | undefined {
  if (!value) return undefined;
  try {
    return TrustBundle.load(value);
  } catch (err) {
    throw configProblem("WORKLOAD_TRUST_BUNDLE", err);
  }
}

/** `WORKLOAD_KEY_<NAME>`: one workload's key in a process that plays several (the all-in-one with services elsewhere, tests). */
export function workloadKeyVariable(name: string): string {
  return `WORKLOAD_KEY_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * The signer of workload `name` in this process: WORKLOAD_KEY (named WORKLOAD_ID, else
 * `spiffe://<domain>/<name>`) when `own` (the process is that one workload), else
 * WORKLOAD_KEY_<NAME> (named `spiffe://<domain>/<name>`). undefined when no key is set.
 */
export function workloadSignerFromEnv(env: Env, name: string, clock: Clock, own = true): WorkloadSigner | undefined {
  const config = loadConfig(workloadConfigSchema, env);
  const variable = own && env.WORKLOAD_KEY?.trim() ? "WORKLOAD_KEY" : workloadKeyVariable(name);
  const keyText = env[variable]?.trim();
  if (!keyText) return undefined;
  let key: KeyObject;
  try {
    key = loadWorkloadKey(keyText);
  } catch (err) {
    throw configProblem(variable, err);
  }
  const id = variable === "WORKLOAD_KEY" && config.WORKLOAD_ID ? config.WORKLOAD_ID : spiffeId(config.WORKLOAD_TRUST_DOMAIN, name);
  const parsed = parseSpiffeId(id);
  if (!parsed) throw configProblem("WORKLOAD_ID", new Error(`${id} is not a SPIFFE ID (spiffe://<trust domain>/<workload>)`));
  if (parsed.trustDomain !== config.WORKLOAD_TRUST_DOMAIN) throw configProblem("WORKLOAD_ID", new Error(`${id} is not in the trust domain ${config.WORKLOAD_TRUST_DOMAIN}`));
  return createWorkloadSigner(id, key, clock);
}

export interface AccessGuardOptions {
  /** The process's in-process identities (the all-in-one shares them with its gateway and console). */
  local?: LocalIdentities;
}

/**
 * The access layer as the kit's CallGuard: every call a service serves is checked against its
 * module's table (accessInterceptor: workload identity, then person or merchant key), every call a
 * module makes carries its own identity, every service serves the audit and approval services
 * of the modules it hosts, and publishes each one's audit head (AUDIT_HEAD_INTERVAL).
 */
export function accessGuard(options: AccessGuardOptions = {}): (setup: GuardSetup) => CallGuard {
  return ({ env, clock, mode, modules }) => {
    const config = loadConfig(guardConfigSchema, env);
    let publicKey: KeyObject | undefined;
    try {
      publicKey = config.OPERATOR_ASSERTION_PUBLIC_KEY ? loadAssertionPublicKey(config.OPERATOR_ASSERTION_PUBLIC_KEY) : undefined;
    } catch (err) {
      throw configProblem("OPERATOR_ASSERTION_PUBLIC_KEY", err);
    }
    const bundle = loadTrustBundle(config.WORKLOAD_TRUST_BUNDLE);
    if (!bundle && mode === "split" && modules.length > 0) {
      throw configProblem("WORKLOAD_TRUST_BUNDLE", new Error("required: a service of the split deployment must know whose calls to believe (README, \"Workload identities\")"));
    }
    const local = options.local ?? createLocalIdentities();
    const verifier = new WorkloadVerifier({ bundle, trustDomain: config.WORKLOAD_TRUST_DOMAIN, clock, local });
    // Each module's identity for its calls over the network: WORKLOAD_KEY when the process hosts it alone, else WORKLOAD_KEY_<NAME>.
    const signers = new Map<string, WorkloadSigner | undefined>();
    for (const module of modules) signers.set(module, workloadSignerFromEnv(env, module, clock, modules.length === 1));
    const outgoing = new Map<string, readonly Interceptor[]>();
    return {
      migrations: accessMigrations,
      appendOnlyTables: APPEND_ONLY_TABLES,
      outgoingFor(module, isLocal) {
        const key = `${module}|${isLocal}`;
        let found = outgoing.get(key);
        if (!found) {
          const signer = signers.get(module);
          const caller = isLocal ? localIdentity(local, signer?.id ?? spiffeId(config.WORKLOAD_TRUST_DOMAIN, module)) : signer ? signedIdentity(signer) : undefined;
          // No key: its calls over the network name no caller, and the services called refuse them (UNAUTHENTICATED).
          found = caller ? [workloadIdentityInterceptor(caller)] : [];
          outgoing.set(key, found);
        }
        return found;
      },
      serve({ modules: hosted, logger, localTransport }) {
        const registry = new AccessRegistry();
        for (const module of hosted) registry.add({ name: module.name, db: module.db }, module.tables as readonly ServiceAccess[]);
        return {
          interceptors: [accessInterceptor({ registry, workloads: verifier, publicKey, clock, logger })],
          routes: (router) => operatorRoutes(router, { registry, workloads: verifier, publicKey, clock, logger, transport: localTransport }),
          services: [AuditService, ApprovalService],
        };
      },
      start({ modules: hosted, logger, bus }) {
        return hosted.map((module) =>
          startAuditHeadPublisher({ service: module.name, db: module.db, bus, clock, logger: logger.child({ component: module.name }), intervalMs: config.AUDIT_HEAD_INTERVAL }),
        );
      },
    };
  };
}

/** kit's startServices with the access layer: how every service process starts (split or all-in-one). */
export function startServices(modules: readonly AnyServiceModule[], options: StartOptions): Promise<RunningServices> {
  return kitStartServices(modules, { ...options, guard: options.guard ?? accessGuard() });
}

/** The main of a split-mode service: the whole deployable is `runService(module)`. */
export function runService(module: AnyServiceModule): Promise<void> {
  return kitRunService(module, { guard: accessGuard() });
}

/** kit's migrate command, with the access layer's tables (audit, approvals) in every database, and the audit append-only in the runtime user's grants. */
export function runMigrateCommand(modules: readonly AnyServiceModule[], argv: readonly string[], options: MigrateCommandOptions = {}): Promise<number> {
  return kitRunMigrateCommand(modules, argv, { ...options, guard: { migrations: accessMigrations, appendOnlyTables: APPEND_ONLY_TABLES } });
}
