import http from "node:http";
import { createClient, type Transport } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { Health } from "@payments/contracts/health";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import {
  ConfigError,
  createLogger,
  startTracing,
  createMetrics,
  createServiceTransport,
  JetStreamBus,
  listenHttp,
  closeHttp,
  localHttpUrl,
  loadClientTls,
  systemClock,
  type Clock,
  type Env,
  type EventBus,
  type Logger,
  type Metrics,
  type Subscription,
} from "@payments/kit";
import { signedIdentity, withWorkloadIdentity, workloadIdentityInterceptor, workloadSignerFromEnv, type CallerIdentity } from "@payments/access";
import { createApp, publicBaseUrl } from "./app.js";
import { answerClientError, answerConnect } from "./client-error.js";
import { loadGatewayConfig, type GatewayConfig } from "./config.js";
import { CatalogCache } from "./catalog-cache.js";
import { CredentialCache } from "./credential-cache.js";
import { probes } from "./routes/health.js";
import { NatsRateLimits } from "./nats-rate-limits.js";
import { MemoryRateLimits, type RateLimitStore } from "./rate-limit-store.js";

export interface StartGatewayOptions {
  env?: Env;
  /** The event bus to hear MerchantChanged on; without one, NATS_URL is used, else only the TTL expires credentials. */
  bus?: EventBus;
  logger?: Logger;
  clock?: Clock;
  metrics?: Metrics;
  /** Override MERCHANT_SERVICE_URL (all-in-one: the local RPC server). */
  merchantUrl?: string;
  /** Override BANK_CATALOG_SERVICE_URL. */
  bankCatalogUrl?: string;
  /** Override DEPOSIT_SERVICE_URL. */
  depositUrl?: string;
  /** Override PAYOUT_SERVICE_URL. */
  payoutUrl?: string;
  /** Override CALLBACK_SENDER_SERVICE_URL. */
  callbackUrl?: string;
  /**
   * Ready-made transports, per service, used instead of its URL (the all-in-one passes its
   * services' in-process transport). A service without one is called at its URL.
   */
  transports?: GatewayServiceTransports;
  /**
   * Who the gateway is on its calls (the all-in-one's in-process identity); by default its
   * WORKLOAD_KEY (`spiffe://<domain>/gateway`, or WORKLOAD_ID).
   */
  identity?: CallerIdentity;
  /**
   * This process is a gateway of the split deployment (main.ts), which may run as several
   * replicas: RATE_LIMIT_STORE then defaults to `nats` when NATS_URL is set. Otherwise (the
   * all-in-one, tests, tools) it defaults to `memory`.
   */
  split?: boolean;
}

/** A transport per service the gateway calls; each carries that service's calls and its health checks. */
export interface GatewayServiceTransports {
  merchant?: Transport;
  bankCatalog?: Transport;
  deposit?: Transport;
  payout?: Transport;
  callback?: Transport;
}

export interface RunningGateway {
  port: number;
  /** A URL that reaches this process from the same machine, e.g. http://127.0.0.1:8080 (PUBLIC_BASE_URL may differ). */
  url: string;
  /** The address and port the socket is bound to, as HOST says: "0.0.0.0:8080" is every interface. */
  listening: string;
  config: GatewayConfig;
  credentials: CredentialCache;
  /** The merchants' bank lists, dropped on CatalogChanged. */
  catalog: CatalogCache;
  logger: Logger;
  /** The registry GET /metrics serves (on PORT, and on METRICS_PORT when set). */
  metrics: Metrics;
  /** Set when METRICS_PORT is configured. */
  metricsPort?: number;
  /** Where the rate limits count: this process (`memory`) or the bucket every replica shares (`nats`). */
  rateLimitStore: RateLimitStore["kind"];
  stop(): Promise<void>;
}

/** The gateway's own workload identity from WORKLOAD_KEY: required, since the services believe no caller that does not name itself. */
function gatewayIdentity(env: Env, clock: Clock): CallerIdentity {
  const signer = workloadSignerFromEnv(env, "gateway", clock);
  if (!signer) throw new ConfigError("invalid configuration:\n  WORKLOAD_KEY: required: the gateway's Ed25519 workload key, which every call to a service is signed with (README, \"Workload identities\")");
  return signedIdentity(signer);
}

function required(value: string | undefined, variable: string): string {
  if (!value) throw new ConfigError(`invalid configuration:\n  ${variable}: required (the gateway calls this service)`);
  return value;
}

/** env → config → clients → cache (+ invalidation) → app → listen. Used by main.ts, the all-in-one process and tests. */
export async function startGateway(options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const config = loadGatewayConfig(options.env ?? process.env);
  const given = options.transports ?? {};
  const endpoint = (transport: Transport | undefined, url: string | undefined, variable: string) => transport ?? required(url, variable);
  const merchantAt = endpoint(given.merchant, options.merchantUrl ?? config.MERCHANT_SERVICE_URL, "MERCHANT_SERVICE_URL");
  const bankCatalogAt = endpoint(given.bankCatalog, options.bankCatalogUrl ?? config.BANK_CATALOG_SERVICE_URL, "BANK_CATALOG_SERVICE_URL");
  const depositAt = endpoint(given.deposit, options.depositUrl ?? config.DEPOSIT_SERVICE_URL, "DEPOSIT_SERVICE_URL");
  const payoutAt = endpoint(given.payout, options.payoutUrl ?? config.PAYOUT_SERVICE_URL, "PAYOUT_SERVICE_URL");
  const callbackAt = endpoint(given.callback, options.callbackUrl ?? config.CALLBACK_SENDER_SERVICE_URL, "CALLBACK_SENDER_SERVICE_URL");
  const logger = options.logger?.child({ component: "gateway" }) ?? createLogger({ service: "gateway", level: config.LOG_LEVEL });
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics ?? createMetrics();
  // OTLP tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set (once per process: all-in-one shares the services' SDK).
  const tracing = await startTracing("gateway", options.env ?? process.env);

  // INTERNAL_TLS_* (CA, client certificate) apply to https:// service URLs. One transport
  // (one connection) per address: services at the same URL share it (kit's transport cache).
  // Every call names the gateway (and, inside a merchant's request, the merchant it verified): without an identity the services refuse it all.
  const identity = options.identity ?? gatewayIdentity(options.env ?? process.env, clock);
  const transportOptions = { token: config.INTERNAL_API_TOKEN, timeoutMs: config.RPC_TIMEOUT, tls: loadClientTls(options.env ?? process.env), metrics, interceptors: [workloadIdentityInterceptor(identity)] };
  const transportOf = (at: Transport | string): Transport => (typeof at === "string" ? createServiceTransport(at, transportOptions) : withWorkloadIdentity(at, identity));
  const merchantTransport = transportOf(merchantAt);
  const bankCatalogTransport = transportOf(bankCatalogAt);
  const depositTransport = transportOf(depositAt);
  const payoutTransport = transportOf(payoutAt);
  const callbackTransport = transportOf(callbackAt);
  const merchants = createClient(MerchantService, merchantTransport);
  const bankCatalog = createClient(BankCatalogService, bankCatalogTransport);
  const deposits = createClient(DepositService, depositTransport);
  const payouts = createClient(PayoutService, payoutTransport);
  const callbacks = createClient(CallbackService, callbackTransport);
  const healthClients = {
    merchant: createClient(Health, merchantTransport),
    "bank-catalog": createClient(Health, bankCatalogTransport),
    deposit: createClient(Health, depositTransport),
    payout: createClient(Health, payoutTransport),
    "callback-sender": createClient(Health, callbackTransport),
  };
  const credentials = new CredentialCache({
    merchants,
    clock,
    ttlMs: config.CREDENTIAL_CACHE_TTL,
    negativeTtlMs: config.NEGATIVE_CACHE_TTL,
    logger,
  });
  const catalog = new CatalogCache({ bankCatalog, clock, ttlMs: config.CATALOG_CACHE_TTL, logger });

  const cleanups: Array<() => Promise<void>> = [];
  /** Set when stop() begins: /readyz answers 503 from then on. */
  let draining = false;
  const stopAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((err: unknown) => logger.warn({ err }, "stop step failed"));
  };

  cleanups.push(() => tracing.shutdown());
  try {
    let bus = options.bus;
    if (!bus && config.NATS_URL) {
      // In the background: the gateway starts, and stays ready, without NATS (see routes/health.ts).
      const owned = JetStreamBus.open({
        url: config.NATS_URL,
        stream: config.NATS_STREAM,
        subjectPrefix: config.NATS_SUBJECT_PREFIX,
        name: "gateway",
        logger,
      });
      cleanups.push(() => owned.close());
      bus = owned;
    }
    if (bus) {
      const subscription: Subscription = await credentials.watch(bus);
      cleanups.push(() => subscription.stop());
      const catalogSubscription = await catalog.watch(bus);
      cleanups.push(() => catalogSubscription.stop());
    } else {
      logger.warn({ ttlMs: config.CREDENTIAL_CACHE_TTL }, "no event bus (NATS_URL unset): merchant changes reach the gateway only when cached credentials expire");
    }

    let rateLimits: RateLimitStore;
    if ((config.RATE_LIMIT_STORE ?? (options.split && config.NATS_URL ? "nats" : "memory")) === "nats" && config.NATS_URL) {
      const shared = NatsRateLimits.open({
        url: config.NATS_URL,
        bucket: config.RATE_LIMIT_NATS_BUCKET ?? `${config.NATS_STREAM}_RATE_LIMITS`,
        ttlMs: config.RATE_LIMIT_NATS_TTL,
        timeoutMs: config.RATE_LIMIT_NATS_TIMEOUT,
        leaseMs: config.RATE_LIMIT_NATS_LEASE,
        clock,
        maxKeys: config.RATE_LIMIT_MAX_KEYS,
        logger,
        metrics,
      });
      cleanups.push(() => shared.close());
      // A moment for the first requests to count together already; start-up never waits for NATS longer (the local limiter answers meanwhile).
      await shared.whenReady(1_000);
      rateLimits = shared;
    } else {
      if (options.split) logger.warn("rate limits in memory (RATE_LIMIT_STORE=memory or no NATS_URL): each gateway replica admits the full rate on its own");
      rateLimits = new MemoryRateLimits({ clock, maxKeys: config.RATE_LIMIT_MAX_KEYS });
    }

    const server = http.createServer({ requestTimeout: 30_000, headersTimeout: 10_000 });
    server.keepAliveTimeout = 5_000;
    // Requests Node refuses itself get the envelope, and their raw bytes never reach a log.
    server.on("clientError", answerClientError({ clock, logger }));
    // CONNECT never reaches the app (unheard, Node closes the socket without a word): a JSON 405.
    server.on("connect", answerConnect({ clock, logger }));
    const port = await listenHttp(server, config.PORT, config.HOST);
    cleanups.push(() => closeHttp(server, config.SHUTDOWN_GRACE));
    const resolved: GatewayConfig = { ...config, PORT: port, PUBLIC_BASE_URL: publicBaseUrl({ ...config, PORT: port }) };
    const readiness = { listening: () => server.listening, draining: () => draining };
    const app = createApp({ config: resolved, merchants, bankCatalog, deposits, payouts, callbacks, health: healthClients, credentials, catalog, logger, metrics, clock, rateLimits, routes: probes({ readiness, clock }) });
    const handle = app.callback();
    // Fire-and-forget is safe: Koa's handler catches every error itself (the error handler answers
    // with the envelope, ctx.onerror behind it), so its promise never rejects and nothing is lost.
    server.on("request", (req, res) => void handle(req, res));
    // An Expect other than 100-continue (unheard, Node answers a bare 417): the app answers it
    // like any other request, as RFC 9110 lets a server ignore an expectation it does not know.
    server.on("checkExpectation", (req, res) => void handle(req, res));

    let metricsPort: number | undefined;
    if (config.METRICS_PORT !== undefined) {
      const metricsServer = http.createServer((req, res) => {
        if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
          res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
          return;
        }
        metrics.registry
          .metrics()
          .then((text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text))
          .catch(() => res.writeHead(500).end());
      });
      metricsPort = await listenHttp(metricsServer, config.METRICS_PORT, config.METRICS_HOST);
      cleanups.push(() => closeHttp(metricsServer, 1_000));
    }

    let stopping: Promise<void> | undefined;
    return {
      port,
      url: localHttpUrl(config.HOST, port),
      listening: `${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}`,
      config: resolved,
      credentials,
      catalog,
      logger,
      metrics,
      ...(metricsPort !== undefined ? { metricsPort } : {}),
      rateLimitStore: rateLimits.kind,
      stop: () => {
        draining = true;
        return (stopping ??= stopAll());
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
