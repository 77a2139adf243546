import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type ConnectRouter, type Interceptor, type Transport } from "@connectrpc/connect";
import type { Knex } from "knex";
import { z } from "zod";
import { InProcessBus, JetStreamBus, type EventBus } from "./bus.js";
import { systemClock, type Clock } from "./clock.js";
import { createServiceClient, type TransportOptions } from "./clients.js";
import { assertInternalBoundary, envVar, loadConfig, type Env } from "./config.js";
import { deriveDatabaseUrl, ensureDatabase, isDatabaseUnavailable, openDatabase, type Migration } from "./db.js";
import { assertMigrationSettings, migrationConfigSchema, migrationUrlFor, prepareDatabase } from "./migrations.js";
import { internalClientTlsSchema, internalServerTlsSchema, loadClientTls, loadServerTls } from "./internal-tls.js";
import { createLogger, logStartupFailure, type Logger } from "./logger.js";
import { createMetrics, type Metrics } from "./metrics.js";
import { startOutboxRelay, type OutboxRelay } from "./outbox.js";
import { serviceMigrations } from "./service-migrations.js";
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
   * Who may call each RPC of `services` (one table per service, @payments/access `defineAccess`):
   * checked by the service itself on every call, with the audit and four-eyes approvals that go
   * with it. The kit only hands the tables to the process's CallGuard.
   */
  access(ctx: Ctx): readonly AccessTable[];
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

/** One service's permission table, as the kit sees it: opaque, handed to the CallGuard (@payments/access makes them). */
export interface AccessTable {
  readonly service: DescService;
}

/** A module of this process, as its CallGuard gets it: its name, database and tables. */
export interface GuardedModule {
  name: string;
  db: Knex;
  tables: readonly AccessTable[];
}

/**
 * Who calls, decided for every call a process serves and proven on every call it makes: the
 * seam through which @payments/access (workload and person identities, access tables, audit,
 * approvals) plugs into the runtime. The kit knows nothing of what it decides.
 */
export interface CallGuard {
  /** Tables every module's database gets (audit, approvals), applied after the outbox's and before the module's own. */
  readonly migrations: readonly Migration[];
  /**
   * Of those, the tables a service's own database user may only read and append to (the audit):
   * the grants the runtime user gets leave out UPDATE and DELETE on them.
   */
  readonly appendOnlyTables: readonly string[];
  /**
   * Interceptors on every call module `module` of this process makes to another service (its
   * identity on each): `local` when the callee runs in this process (no network), else over it.
   */
  outgoingFor(module: string, local: boolean): readonly Interceptor[];
  /** Once every module's context exists: what the server adds to each call and serves beside the modules. */
  serve(input: GuardInput): GuardedServer;
  /** Jobs it runs, stopped with the process (called once the server serves). */
  start?(input: GuardInput): Promise<Stoppable[]> | Stoppable[];
}

export interface GuardInput {
  modules: readonly GuardedModule[];
  env: Env;
  clock: Clock;
  logger: Logger;
  bus: EventBus;
  /** This process's own handlers without the network (where an approved request runs). */
  localTransport: Transport;
}

export interface GuardedServer {
  /** Server interceptors after the kit's own (request id, errors, token). */
  interceptors: readonly Interceptor[];
  routes(router: ConnectRouter): void;
  /** The services `routes` registers (for reflection and health). */
  services: readonly DescService[];
}

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
  ...internalServerTlsSchema.shape,
  ...internalClientTlsSchema.shape,
  LOG_LEVEL: envVar.logLevel(),
  RPC_TIMEOUT: envVar.duration("5s"),
  SHUTDOWN_GRACE: envVar.duration("10s"),
  /** Connections each service keeps to its MySQL database at most. */
  DATABASE_POOL_MAX: envVar.int(10, 1),
  /** MIGRATE_ON_START, MIGRATION_LOCK_TIMEOUT, MIGRATE_DATABASE_URL, MIGRATE_GRANT_TO (migrations.ts). */
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
  /**
   * Who calls (@payments/access's accessGuard, which its startServices passes): required when
   * the process hosts any module, so no service ever serves a call nobody checked.
   */
  guard?: CallGuard | GuardFactory;
}

/** What a guard is made from, before anything starts: a bad setting of its own is reported like any other. */
export interface GuardSetup {
  env: Env;
  clock: Clock;
  mode: "split" | "all-in-one";
  /** The modules this process hosts, by name. */
  modules: readonly string[];
}
export type GuardFactory = (setup: GuardSetup) => CallGuard;

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
   * RPC_TIMEOUT, and no identity of its own: an in-process caller (the all-in-one's gateway and
   * console) adds its identity to every call (@payments/access `withWorkloadIdentity`), or is refused.
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
  assertMigrationSettings(config, config.DATABASE_URL);
  const serverTls = loadServerTls(env);
  // Made from the environment here, so a bad setting of its own is reported like any other.
  const guard = typeof options.guard === "function" ? options.guard({ env, clock: options.clock ?? systemClock, mode: options.mode, modules: modules.map((m) => m.name) }) : options.guard;
  if (!guard && modules.length > 0) throw new Error("startServices: no CallGuard: a service must not serve calls nobody checks (start it through @payments/access)");
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
  const guarded: GuardedModule[] = [];
  const jobs: Stoppable[] = [];
  const dbs: Knex[] = [];
  const routes: Array<(router: ConnectRouter) => void> = [];
  const httpRoutes: HttpRoute[] = [];

  try {
    for (const module of modules) {
      const log = logger.child({ component: module.name });
      let db: Knex;
      let migrateUrl: string | undefined;
      if (config.DATABASE_URL) {
        const url = options.mode === "all-in-one" ? deriveDatabaseUrl(config.DATABASE_URL, module.name) : config.DATABASE_URL;
        migrateUrl = migrationUrlFor(config, url);
        // The runtime user creates nothing: with MIGRATE_DATABASE_URL its user does (prepareDatabase), and a start that does not migrate waits for the job.
        if (config.MIGRATE_ON_START && !migrateUrl) await untilDatabaseAnswers(log, "creating it if missing", () => ensureDatabase(url));
        db = openDatabase({ url, poolMax: config.DATABASE_POOL_MAX, logger: log, readCommitted: module.readCommitted });
      } else {
        db = openDatabase({ sqliteFile: join(config.DATA_DIR, `${module.name}.sqlite`), logger: log });
      }
      dbs.push(db);
      server.readiness.add(`database:${module.name}`, databaseCheck(db));
      const applied = await untilDatabaseAnswers(log, "migrating", () =>
        prepareDatabase(db, serviceMigrations(module, guard?.migrations), { config, logger: log, migrateUrl, appendOnlyTables: guard?.appendOnlyTables }),
      );
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
          // Each module calls as itself: the guard's identity of this module on every call it makes.
          const identity = (local: boolean) => [...(guard?.outgoingFor(module.name, local) ?? [])];
          if (modules.some((m) => m.name === name)) return createClient(service, server.inProcessTransport({ ...transportOptions, interceptors: identity(true) }));
          const variable = serviceUrlVariable(name);
          const url = env[variable];
          if (!url) throw new Error(`${variable} is not set: ${module.name} needs the ${name} service`);
          return createServiceClient(service, url, { ...transportOptions, interceptors: identity(false) });
        },
      };
      const ctx: BaseContext = (await module.createContext(base)) as BaseContext;
      contexts.set(module.name, ctx);
      guarded.push({ name: module.name, db, tables: module.access(ctx) });
      routes.push((router) => module.routes(router, ctx));
      if (module.http) httpRoutes.push(...module.http(ctx));
      if (module.start) jobs.push(...(await module.start(ctx)));
    }
    migrated = true;
    const guardInput: GuardInput = { modules: guarded, env, clock, logger, bus, localTransport };
    const served = guard?.serve(guardInput);
    server.serve({
      routes: (router) => {
        routes.forEach((r) => r(router));
        served?.routes(router);
      },
      services: [...modules.flatMap((m) => m.services), ...(served?.services ?? [])],
      logger,
      metrics,
      internalToken: config.INTERNAL_API_TOKEN,
      interceptors: [...(served?.interceptors ?? [])],
      http: httpRoutes,
    });
    if (guard?.start) jobs.push(...(await guard.start(guardInput)));
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

/** The main of a split-mode service, given the guard its calls go through (@payments/access's runService passes it). */
export async function runService(module: AnyServiceModule, options: { guard: CallGuard | GuardFactory }): Promise<void> {
  try {
    const running = await startServices([module], { mode: "split", guard: options.guard });
    stopOnSignals(running.stop, running.logger);
    running.logger.info({ port: running.server.port, bus: running.bus.kind }, `${module.name} service ready`);
    collectStartGarbage();
  } catch (err) {
    logStartupFailure(module.name, err);
    process.exit(1);
  }
}
