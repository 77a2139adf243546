import http from "node:http";
import type { KeyObject } from "node:crypto";
import { join } from "node:path";
import type { Transport } from "@connectrpc/connect";
import type Koa from "koa";
import type { Knex } from "knex";
import { assertMigrationSettings, ConfigError, createLogger, createMetrics, deriveDatabaseUrl, ensureDatabase, listenHttp, closeHttp, localHttpUrl, loadClientTls, migrationUrlFor, openDatabase, prepareDatabase, systemClock, type Clock, type Env, type Logger, type Metrics } from "@payments/kit";
import { APPEND_ONLY_TABLES, loadAssertionPrivateKey, signedIdentity, workloadSignerFromEnv, type AssertionSigner, type CallerIdentity } from "@payments/access";
import { createApp } from "./app.js";
import { createAssertionIssuer } from "./identity/assertions.js";
import type { Operator } from "./identity/operators.js";
import { deleteEndedSessions } from "./identity/sessions.js";
import { SignInThrottle } from "./identity/sign-in-throttle.js";
import { totpSealer } from "./identity/totp.js";
import { keyBytes, loadConsoleConfig, secureCookies, type ConsoleConfig } from "./config.js";
import type { ConsoleContext } from "./context.js";
import { mailerFromConfig, type Mailer } from "./identity/mail/mailer.js";
import { consoleMigrations } from "./migrations/index.js";
import type { ConsoleRoute } from "./route.js";
import { probes } from "./routes/health.js";
import { createServiceDirectory, type ServiceName } from "./service-clients.js";
import type { ConsoleState } from "./state.js";

export interface StartConsoleOptions {
  /** The environment to read settings from (default process.env). */
  env?: Env;
  logger?: Logger;
  clock?: Clock;
  metrics?: Metrics;
  /**
   * One transport for every service (the all-in-one's in-process transport, which carries
   * INTERNAL_API_TOKEN itself). Without it the services are called at their URLs.
   */
  transport?: Transport;
  /** Where each service is, overriding its `*_SERVICE_URL`. */
  serviceUrls?: Partial<Record<ServiceName, string>>;
  /**
   * Who the console is on its calls (the all-in-one's in-process identity); by default its
   * WORKLOAD_KEY, as `spiffe://<domain>/console` (operators, or both audiences) or
   * `…/merchant-dashboard` (CONSOLE_AUDIENCE=merchants), or WORKLOAD_ID.
   */
  identity?: CallerIdentity;
  /** The key that signs operator assertions, overriding OPERATOR_ASSERTION_PRIVATE_KEY (a KeyObject, PEM text or a path). */
  assertionPrivateKey?: KeyObject | string;
  /**
   * The split deployment's console (main.ts): DATABASE_URL is its own database, as given. Otherwise
   * (the all-in-one, tests) DATABASE_URL is the shared base and the console uses `<base>_console`.
   * CONSOLE_DATABASE_URL, when set, wins either way.
   */
  split?: boolean;
  /** Pages and endpoints beyond the built-in ones (later areas, tests). */
  routes?: ConsoleRoute[];
  /** What mails one-time links, overriding SMTP_URL/MAIL_FROM (closed with the console). */
  mailer?: Mailer;
}

/** The console built but not listening: its Koa app, for a server of the caller's (or a test's). */
export interface ConsoleInstance {
  app: Koa<ConsoleState>;
  context: ConsoleContext;
  config: ConsoleConfig;
  logger: Logger;
  metrics: Metrics;
  /** The signer of an operator's assertions (60 s, kind human, subject = email), for calls made on their behalf. */
  assertionsFor(operator: Pick<Operator, "email" | "displayName" | "role">): AssertionSigner;
  /** Readiness inputs the instance owns; the server that hosts it reports listening and draining. */
  setServing(state: { listening: () => boolean; draining: () => boolean }): void;
  /** Stops the background job and closes the database. */
  close(): Promise<void>;
}

export interface RunningConsole extends ConsoleInstance {
  port: number;
  /** A URL that reaches this process from the same machine, e.g. http://127.0.0.1:8081. */
  url: string;
  stop(): Promise<void>;
}

function databaseUrlOf(config: ConsoleConfig, split: boolean): string | undefined {
  if (config.CONSOLE_DATABASE_URL) return config.CONSOLE_DATABASE_URL;
  if (!config.DATABASE_URL) return undefined;
  return split ? config.DATABASE_URL : deriveDatabaseUrl(config.DATABASE_URL, "console");
}

function privateKeyOf(options: StartConsoleOptions, config: ConsoleConfig): KeyObject {
  const given = options.assertionPrivateKey ?? config.OPERATOR_ASSERTION_PRIVATE_KEY;
  if (!given) throw new ConfigError("invalid configuration:\n  OPERATOR_ASSERTION_PRIVATE_KEY: required (the console signs every operator's assertions with it)");
  if (typeof given !== "string") return given;
  try {
    return loadAssertionPrivateKey(given);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  OPERATOR_ASSERTION_PRIVATE_KEY: ${(err as Error).message}`);
  }
}

/**
 * The console's own workload identity from WORKLOAD_KEY: required, since the services believe no
 * caller that does not name itself. A console serving only merchants is the merchant dashboard,
 * which the services let carry merchant users' calls and nobody else's.
 */
function consoleIdentity(env: Env, config: ConsoleConfig, clock: Clock): CallerIdentity {
  const name = config.CONSOLE_AUDIENCE === "merchants" ? "merchant-dashboard" : "console";
  const signer = workloadSignerFromEnv(env, name, clock);
  if (!signer) throw new ConfigError(`invalid configuration:\n  WORKLOAD_KEY: required: the ${name}'s Ed25519 workload key, which every call to a service is signed with (README, "Workload identities")`);
  return signedIdentity(signer);
}

/** How often ended sessions are swept from the table (they are refused when met anyway). */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * env → config → database (created if missing, migrated) → context → Koa app. Nothing listens:
 * `startConsole` does that, and an embedding process may mount `app.callback()` itself.
 */
export async function createConsole(options: StartConsoleOptions = {}): Promise<ConsoleInstance> {
  const env = options.env ?? process.env;
  const config = loadConsoleConfig(env);
  const privateKey = privateKeyOf(options, config);
  const logger = options.logger?.child({ component: "console" }) ?? createLogger({ service: "console", level: config.LOG_LEVEL });
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics ?? createMetrics();
  const totpKey = config.CONSOLE_TOTP_KEY ? keyBytes(config.CONSOLE_TOTP_KEY) : undefined;
  if (!totpKey && options.split) logger.warn("CONSOLE_TOTP_KEY is not set: operators' TOTP secrets are stored unsealed");

  const url = databaseUrlOf(config, options.split ?? false);
  assertMigrationSettings(config, config.CONSOLE_DATABASE_URL ?? config.DATABASE_URL);
  // With MIGRATE_DATABASE_URL its user creates, migrates and grants; DATABASE_URL's only serves (kit prepareDatabase).
  const migrateUrl = migrationUrlFor(config, url);
  let db: Knex;
  if (url) {
    if (config.MIGRATE_ON_START && !migrateUrl) await ensureDatabase(url);
    db = openDatabase({ url, poolMax: config.DATABASE_POOL_MAX, logger });
  } else {
    db = openDatabase({ sqliteFile: join(config.DATA_DIR, "console.sqlite"), logger });
  }
  let migrated = false;
  let serving = { listening: () => true, draining: () => false };
  try {
    const applied = await prepareDatabase(db, consoleMigrations, { config, logger, migrateUrl, appendOnlyTables: APPEND_ONLY_TABLES });
    if (applied.length > 0) logger.info({ migrations: applied }, "migrated");
    migrated = true;
  } catch (err) {
    await db.destroy();
    throw err;
  }

  const assertions = createAssertionIssuer(privateKey, clock);
  const identity = options.identity ?? consoleIdentity(env, config, clock);
  const context: ConsoleContext = {
    config,
    db,
    clock,
    logger,
    metrics,
    limits: { idleMs: config.CONSOLE_IDLE_TIMEOUT, browserLifetimeMs: config.CONSOLE_SESSION_LIFETIME, cliLifetimeMs: config.CONSOLE_CLI_SESSION_LIFETIME },
    throttle: new SignInThrottle({ perAccount: config.CONSOLE_SIGN_IN_ACCOUNT_LIMIT, perIp: config.CONSOLE_SIGN_IN_IP_LIMIT, windowMs: config.CONSOLE_SIGN_IN_WINDOW }),
    totp: totpSealer(totpKey),
    assertions,
    services: createServiceDirectory({
      urls: {
        merchant: options.serviceUrls?.merchant ?? config.MERCHANT_SERVICE_URL,
        "bank-catalog": options.serviceUrls?.["bank-catalog"] ?? config.BANK_CATALOG_SERVICE_URL,
        deposit: options.serviceUrls?.deposit ?? config.DEPOSIT_SERVICE_URL,
        payout: options.serviceUrls?.payout ?? config.PAYOUT_SERVICE_URL,
        "callback-sender": options.serviceUrls?.["callback-sender"] ?? config.CALLBACK_SENDER_SERVICE_URL,
      },
      transport: options.transport,
      identity,
      token: config.INTERNAL_API_TOKEN,
      timeoutMs: config.RPC_TIMEOUT,
      tls: loadClientTls(env),
      metrics,
    }),
    privateKey,
    publicUrl: config.CONSOLE_PUBLIC_URL ?? `http://localhost:${config.CONSOLE_PORT}`,
    secureCookies: secureCookies(config),
    mailer: options.mailer ?? mailerFromConfig(config),
  };

  const readiness = { listening: () => serving.listening(), draining: () => serving.draining(), migrated: () => migrated };
  const app = createApp(context, { routes: [...probes({ db, readiness }), ...(options.routes ?? [])] });

  const sweep = setInterval(() => {
    // Nothing is lost if a sweep fails: an ended session is refused when met, and the next sweep tries again.
    deleteEndedSessions(db, clock.now().getTime(), context.limits).catch((err: unknown) => logger.warn({ err }, "sweeping ended sessions failed"));
  }, SWEEP_EVERY_MS);
  sweep.unref();

  let closing: Promise<void> | undefined;
  return {
    app,
    context,
    config,
    logger,
    metrics,
    assertionsFor: (operator) => assertions.assertionsFor(operator),
    setServing(state) {
      serving = state;
    },
    close() {
      clearInterval(sweep);
      context.mailer?.close();
      return (closing ??= db.destroy());
    },
  };
}

/** createConsole, then listen on CONSOLE_HOST:CONSOLE_PORT. Used by main.ts, the all-in-one and tests. */
export async function startConsole(options: StartConsoleOptions = {}): Promise<RunningConsole> {
  const instance = await createConsole(options);
  const server = http.createServer({ requestTimeout: 30_000, headersTimeout: 10_000 });
  server.keepAliveTimeout = 5_000;
  let draining = false;
  instance.setServing({ listening: () => server.listening, draining: () => draining });
  const handle = instance.app.callback();
  // Koa's handler catches every error itself (errorHandler, then ctx.onerror), so its promise never rejects.
  server.on("request", (req, res) => void handle(req, res));
  let port: number;
  try {
    port = await listenHttp(server, instance.config.CONSOLE_PORT, instance.config.CONSOLE_HOST);
  } catch (err) {
    await instance.close();
    throw err;
  }
  if (!instance.config.CONSOLE_PUBLIC_URL) instance.context.publicUrl = `http://localhost:${port}`;
  let stopping: Promise<void> | undefined;
  return {
    ...instance,
    port,
    url: localHttpUrl(instance.config.CONSOLE_HOST, port),
    stop() {
      draining = true;
      stopping ??= (async () => {
        await closeHttp(server, instance.config.SHUTDOWN_GRACE);
        await instance.close();
      })();
      return stopping;
    },
  };
}
