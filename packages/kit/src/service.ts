import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type ConnectRouter, type Transport } from "@connectrpc/connect";
import type { Knex } from "knex";
import { z } from "zod";
import { InProcessBus, JetStreamBus, type EventBus } from "./bus.js";
import { systemClock, type Clock } from "./clock.js";
import { createServiceClient, type TransportOptions } from "./clients.js";
import { assertInternalBoundary, ConfigError, envVar, loadConfig, type Env } from "./config.js";
import { deriveDatabaseUrl, ensureDatabase, isDatabaseUnavailable, openDatabase, type Migration } from "./db.js";
import { migrationConfigSchema, prepareDatabase } from "./migrations.js";
import { internalClientTlsSchema, internalServerTlsSchema, loadClientTls, loadServerTls } from "./internal-tls.js";
import { createLogger, logStartupFailure, type Logger } from "./logger.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { startOutboxRelay, type OutboxRelay } from "./outbox.js";
import { serviceMigrations } from "./service-migrations.js";
import { loadAssertionPublicKey } from "./operator-assertion.js";
import { AccessRegistry, operatorAccessInterceptor, type ServiceAccess } from "./operator-access.js";
import { operatorRoutes } from "./operator-services.js";
import { ApprovalService, AuditService } from "@payments/contracts/operator";
import type { KeyObject } from "node:crypto";
import { listenRpc, type HttpRoute, type RpcServer } from "./rpc-server.js";
import { databaseCheck, type Readiness } from "./readiness.js";
import { startTracing } from "./tracing.js";

/** What every service gets, whatever its mode. Services extend it in their own context. */
export interface BaseContext {
  name: string;
  env: Env;
  db: Knex;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Publish soon after a commit that recorded events. */
  outbox: OutboxRelay;
  /**
   * A client of another service: at `<NAME>_SERVICE_URL` (split), or in this process when
   * the process hosts it (all-in-one), through the in-process transport.
   */
  client<S extends DescService>(service: S, name: string): Client<S>;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/** A deployable service: its RPCs, its tables, its background jobs. */
export interface ServiceModule<Ctx extends BaseContext = BaseContext> {
  /** Lower-case name: "merchant", "bank-catalog". Names the SQLite file, logs and metrics. */
  name: string;
  services: readonly DescService[];
  migrations: readonly Migration[];
  createContext(base: BaseContext): Promise<Ctx> | Ctx;
  routes(router: ConnectRouter, ctx: Ctx): void;
  /**
   * Plain HTTP endpoints on the service's port (see HttpRoute in http-routes.ts): for pushes
   * from outside systems that speak neither gRPC nor Connect. Each authenticates its own
   * callers (not INTERNAL_API_TOKEN); internal network only, like the port.
   */
  http?(ctx: Ctx): readonly HttpRoute[];
  /** Background jobs (expiry, workers, consumers); stopped before the database closes. */
  start?(ctx: Ctx): Promise<Stoppable[]> | Stoppable[];
  /**
   * Who may call each RPC of `services` (one table per service, see defineAccess): checked by
   * the service itself on every call, with the audit and four-eyes approvals that go with it.
   */
  access(ctx: Ctx): readonly ServiceAccess[];
  /**
   * MySQL sessions at READ COMMITTED (openDatabase's `readCommitted`): for a service whose hot
   * transactions all want it, so none pays a `SET TRANSACTION` round trip. Its transactions that
   * need one snapshot must ask for `repeatableRead`.
   */
  readCommitted?: boolean;
}

/**
 * A module of whatever context: the list a process starts holds modules of different contexts,
 * and each module only ever receives the context its own createContext made.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list erases each module's own context type (ServiceModule<Ctx> is invariant in Ctx)
export type AnyServiceModule = ServiceModule<any>;

/** Settings shared by every service process. */
export const baseConfigSchema = z.object({
  GRPC_PORT: envVar.port(9090),
  GRPC_HOST: z.string().default("127.0.0.1"),
  DATABASE_URL: envVar.url(["mysql"]).optional(),
  DATA_DIR: z.string().default("./var"),
  NATS_URL: envVar.url(["nats", "tls", "ws", "wss"]).optional(),
  NATS_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/).default("PAYMENTS"),
  NATS_SUBJECT_PREFIX: z.string().regex(/^[a-z0-9_-]+$/).default("payments"),
  INTERNAL_API_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /**
   * The console's Ed25519 public key (PEM text, or a PEM file's path) that operator assertions
   * are verified against. Unset: every operator RPC is refused (UNAUTHENTICATED).
   */
  OPERATOR_ASSERTION_PUBLIC_KEY: z.string().optional(),
  ...internalServerTlsSchema.shape,
  ...internalClientTlsSchema.shape,
  LOG_LEVEL: envVar.logLevel(),
  RPC_TIMEOUT: envVar.duration("5s"),
  SHUTDOWN_GRACE: envVar.duration("10s"),
  /** Connections each service keeps to its MySQL database at most. */
  DATABASE_POOL_MAX: envVar.int(10, 1),
  /** MIGRATE_ON_START, MIGRATION_LOCK_TIMEOUT (migrations.ts). */
  ...migrationConfigSchema.shape,
});
export type BaseConfig = z.infer<typeof baseConfigSchema>;

export interface StartOptions {
  env?: Env;
  /** "split": one service, DATABASE_URL used as is. "all-in-one": one database per service. */
  mode: "split" | "all-in-one";
  clock?: Clock;
  bus?: EventBus;
  logger?: Logger;
  metrics?: Metrics;
}

export interface RunningServices {
  server: RpcServer;
  config: BaseConfig;
  bus: EventBus;
  logger: Logger;
  metrics: Metrics;
  contexts: Map<string, BaseContext>;
  /**
   * `/readyz` and grpc.health.v1 (the server's): checks `migrations`, `database:<module>`
   * and `bus` are registered here; add more with `readiness.add(name, check)`.
   */
  readiness: Readiness;
  /**
   * Every service of this process without the network, with its INTERNAL_API_TOKEN and
   * RPC_TIMEOUT: what local modules call each other through, and what an in-process
   * caller (the all-in-one's gateway) should use too.
   */
  localTransport: Transport;
  stop(): Promise<void>;
}

/** How long a start waits for NATS before going on without it (it connects later by itself). */
const NATS_START_WAIT_MS = 2000;

/** The longest pause between two tries of a database that does not answer at start. */
const DATABASE_RETRY_MAX_MS = 5_000;

/**
 * Runs `step` (creating the database, migrating) until the database answers: a process started
 * while its database restarts (a failover, a rolling restart of both) waits for it, alive and not
 * ready, as it waits for NATS, instead of exiting. Logged once when the wait starts and when it
 * ends; any other failure ends the start as before.
 */
async function untilDatabaseAnswers<T>(logger: Logger, what: string, step: () => Promise<T>): Promise<T> {
  let waitedSince: number | undefined;
  for (let pause = 250; ; pause = Math.min(pause * 2, DATABASE_RETRY_MAX_MS)) {
    try {
      const result = await step();
      if (waitedSince !== undefined) logger.info({ waitedMs: Date.now() - waitedSince }, `the database answers again; ${what} done`);
      return result;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      if (waitedSince === undefined) {
        waitedSince = Date.now();
        logger.warn({ reason: (err as { code?: string }).code ?? (err as Error).message }, `waiting for the database (${what}); retrying until it answers`);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** OPERATOR_ASSERTION_PUBLIC_KEY, read and checked before anything starts. */
function operatorPublicKey(config: BaseConfig): KeyObject | undefined {
  if (!config.OPERATOR_ASSERTION_PUBLIC_KEY) return undefined;
  try {
    return loadAssertionPublicKey(config.OPERATOR_ASSERTION_PUBLIC_KEY);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  OPERATOR_ASSERTION_PUBLIC_KEY: ${(err as Error).message}`);
  }
}

function serviceUrlVariable(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_SERVICE_URL`;
}

/**
 * env → config → storage → migrate → listen. Used by each service's main (one module,
 * split) and by the all-in-one process (every module on one port, one bus). Settings are
 * checked before anything is opened or bound: a bad one throws a ConfigError, and so does
 * a non-loopback GRPC_HOST without INTERNAL_API_TOKEN (the closed internal boundary).
 */
export async function startServices(modules: readonly AnyServiceModule[], options: StartOptions): Promise<RunningServices> {
  const env = options.env ?? process.env;
  const config = loadConfig(baseConfigSchema, env);
  assertInternalBoundary(config);
  const serverTls = loadServerTls(env);
  const operatorKey = operatorPublicKey(config);
  const clientTls = loadClientTls(env);
  const processName = options.mode === "split" && modules.length === 1 ? modules[0]!.name : "all-in-one";
  const logger = options.logger ?? createLogger({ service: processName, level: config.LOG_LEVEL });
  // OTLP tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set; the no-op tracer otherwise.
  const tracing = await startTracing(processName, env);
  const metrics = options.metrics ?? createMetrics();
  const clock = options.clock ?? systemClock;
  const ownsBus = !options.bus;
  const bus: EventBus =
    options.bus ??
    (config.NATS_URL
      ? // Connects in the background: NATS being down does not stop the start (not ready until it comes).
        JetStreamBus.open({ url: config.NATS_URL, stream: config.NATS_STREAM, subjectPrefix: config.NATS_SUBJECT_PREFIX, name: processName, logger })
      : new InProcessBus(logger));
  // Usually NATS answers at once: start connected then, as before; otherwise go on without it.
  if (ownsBus && bus instanceof JetStreamBus) await bus.whenReady(NATS_START_WAIT_MS);
  if (options.mode === "split" && bus.kind === "in-process") {
    logger.warn("NATS_URL is not set: events stay inside this process (development only)");
  }

  const server = await listenRpc({ port: config.GRPC_PORT, host: config.GRPC_HOST, logger, tls: serverTls });
  // Readiness (/readyz, grpc.health.v1): the bus, each database, migrations done, not draining.
  server.readiness.add("bus", () => (bus.isReady?.() ?? true) || (bus instanceof JetStreamBus ? bus.notReadyReason() : "event bus not ready"));
  let migrated = false;
  server.readiness.add("migrations", () => migrated || "not applied yet");
  const transportOptions: TransportOptions = { token: config.INTERNAL_API_TOKEN, timeoutMs: config.RPC_TIMEOUT, tls: clientTls, metrics };
  // Modules hosted here are called in process: same handlers and interceptors as the port, no HTTP/2.
  const localTransport = server.inProcessTransport(transportOptions);
  const contexts = new Map<string, BaseContext>();
  const access = new AccessRegistry();
  const jobs: Stoppable[] = [];
  const dbs: Knex[] = [];
  const routes: Array<(router: ConnectRouter) => void> = [];
  const httpRoutes: HttpRoute[] = [];

  try {
    for (const module of modules) {
      const log = logger.child({ component: module.name });
      let db: Knex;
      if (config.DATABASE_URL) {
        const url = options.mode === "all-in-one" ? deriveDatabaseUrl(config.DATABASE_URL, module.name) : config.DATABASE_URL;
        await untilDatabaseAnswers(log, "creating it if missing", () => ensureDatabase(url));
        db = openDatabase({ url, poolMax: config.DATABASE_POOL_MAX, logger: log, readCommitted: module.readCommitted });
      } else {
        db = openDatabase({ sqliteFile: join(config.DATA_DIR, `${module.name}.sqlite`), logger: log });
      }
      dbs.push(db);
      server.readiness.add(`database:${module.name}`, databaseCheck(db));
      const applied = await untilDatabaseAnswers(log, "migrating", () => prepareDatabase(db, serviceMigrations(module), { config, logger: log }));
      if (applied.length > 0) log.info({ migrations: applied }, "migrated");
      const outbox = startOutboxRelay({ db, bus, clock, logger: log, metrics, service: module.name });
      jobs.push(outbox);
      const base: BaseContext = {
        name: module.name,
        env,
        db,
        bus,
        clock,
        logger: log,
        metrics,
        outbox,
        client(service, name) {
          if (modules.some((m) => m.name === name)) return createClient(service, localTransport);
          const variable = serviceUrlVariable(name);
          const url = env[variable];
          if (!url) throw new Error(`${variable} is not set: ${module.name} needs the ${name} service`);
          return createServiceClient(service, url, transportOptions);
        },
      };
      const ctx: BaseContext = (await module.createContext(base)) as BaseContext;
      contexts.set(module.name, ctx);
      access.add({ name: module.name, db }, module.access(ctx));
      routes.push((router) => module.routes(router, ctx));
      if (module.http) httpRoutes.push(...module.http(ctx));
      if (module.start) jobs.push(...(await module.start(ctx)));
    }
    migrated = true;
    server.serve({
      routes: (router) => {
        routes.forEach((r) => r(router));
        operatorRoutes(router, { registry: access, publicKey: operatorKey, clock, logger, transport: localTransport });
      },
      services: [...modules.flatMap((m) => m.services), AuditService, ApprovalService],
      logger,
      metrics,
      internalToken: config.INTERNAL_API_TOKEN,
      interceptors: [operatorAccessInterceptor({ registry: access, publicKey: operatorKey, clock, logger })],
      http: httpRoutes,
    });
  } catch (err) {
    await server.close(0);
    await Promise.allSettled(jobs.map((j) => j.stop()));
    await Promise.allSettled(dbs.map((db) => db.destroy()));
    if (ownsBus) await bus.close();
    await tracing.shutdown();
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    server,
    config,
    bus,
    logger,
    metrics,
    contexts,
    readiness: server.readiness,
    localTransport,
    stop() {
      server.readiness.setDraining();
      stopping ??= (async () => {
        await server.close(config.SHUTDOWN_GRACE);
        await Promise.allSettled(jobs.reverse().map((j) => j.stop()));
        if (ownsBus) await bus.close();
        await Promise.allSettled(dbs.map((db) => db.destroy()));
        await tracing.shutdown();
      })();
      return stopping;
    },
  };
}

/** Stops cleanly on SIGTERM/SIGINT: not serving, drain, jobs, bus, database. */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, "shutting down");
    stop()
      .then(() => {
        logger.info("stopped");
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}

/**
 * One full garbage collection a second after the process is ready, when the runtime offers it
 * (`--expose-gc`, which the image's NODE_OPTIONS set): what the start left behind (migration
 * modules, configuration parsing, connection handshakes) goes back to the system then, instead
 * of whenever V8 next collects. About 5 MiB of resident memory per idle process, measured on the
 * payout service (issue 22 asks every compiled process to idle under 110 MiB). Without the flag
 * it does nothing.
 */
export function collectStartGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== "function") return;
  setTimeout(() => gc(), 1_000).unref();
}

/** The main of a split-mode service: the whole deployable is `runService(module)`. */
export async function runService(module: AnyServiceModule): Promise<void> {
  try {
    const running = await startServices([module], { mode: "split" });
    stopOnSignals(running.stop, running.logger);
    running.logger.info({ port: running.server.port, bus: running.bus.kind }, `${module.name} service ready`);
    collectStartGarbage();
  } catch (err) {
    logStartupFailure(module.name, err);
    process.exit(1);
  }
}
