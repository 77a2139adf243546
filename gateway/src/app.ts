import Koa from "koa";
import Router from "@koa/router";
import type { Client } from "@connectrpc/connect";
import type { BankCatalogService } from "@payments/contracts/bank-catalog";
import type { CallbackService } from "@payments/contracts/callback";
import type { DepositService } from "@payments/contracts/deposit";
import type { MerchantService } from "@payments/contracts/merchant";
import type { PayoutService } from "@payments/contracts/payout";
import type { Clock, Logger, Metrics } from "@payments/kit";
import type { AvailableBanksLookup } from "./catalog-cache.js";
import type { GatewayConfig } from "./config.js";
import type { CredentialCache } from "./credential-cache.js";
import { compileTrustedProxies } from "./ip-rule.js";
import { accessLog } from "./middleware/access-log.js";
import { traceRequests } from "./middleware/trace.js";
import { authFailureLimit } from "./middleware/auth-failure-limit.js";
import { authenticate } from "./middleware/authenticate.js";
import { clientIp } from "./middleware/client-ip.js";
import { errorHandler } from "./middleware/error-handler.js";
import { ipAllowlist } from "./middleware/ip-allowlist.js";
import { keyScope } from "./middleware/key-scope.js";
import { EVERY_SCOPE, scopeMask } from "./key-scopes.js";
import { ipRateLimit } from "./middleware/ip-rate-limit.js";
import { metricsEndpoint } from "./middleware/metrics-endpoint.js";
import { jsonBody } from "./middleware/json-body.js";
import { rateLimit } from "./middleware/rate-limit.js";
import { readBody } from "./middleware/read-body.js";
import { requestId } from "./middleware/request-id.js";
import { routeMatch } from "./middleware/route-match.js";
import { assets } from "./routes/assets.js";
import { availableBanks } from "./routes/available-banks.js";
import { checkoutSecurityHeaders } from "./checkout/page.js";
import { checkout } from "./routes/checkout.js";
import { deposits } from "./routes/deposits.js";
import { docs } from "./routes/docs.js";
import { events } from "./routes/events.js";
import { openapi } from "./routes/openapi.js";
import { sandbox } from "./routes/sandbox.js";
import { statement } from "./routes/statement.js";
import { transactions } from "./routes/transactions.js";
import { withdrawals } from "./routes/withdrawals.js";
import { health, type HealthClient } from "./routes/health.js";
import type { Route } from "./routes/route.js";
import { MemoryRateLimits, type RateLimitStore } from "./rate-limit-store.js";
import type { GatewayState, RouteHandler } from "./state.js";

export interface GatewayDeps {
  config: GatewayConfig;
  merchants: Client<typeof MerchantService>;
  bankCatalog: Client<typeof BankCatalogService>;
  /** The bank lists the merchant routes serve, cached (CatalogCache); without it each request asks bankCatalog. */
  catalog?: AvailableBanksLookup;
  deposits: Client<typeof DepositService>;
  /** Withdrawals and balances. */
  payouts: Client<typeof PayoutService>;
  /** The callback-sender: the merchant's callback events and their redelivery. */
  callbacks: Client<typeof CallbackService>;
  /** grpc.health.v1 of each service the gateway needs, by name, for /healthz. */
  health: Record<string, HealthClient>;
  credentials: CredentialCache;
  logger: Logger;
  metrics: Metrics;
  clock: Clock;
  /** Endpoints beyond the built-in ones (later resources, tests); they get the same middleware. */
  routes?: Route[];
  /** Where the rate limits keep their buckets (RATE_LIMIT_STORE); default this process's memory. */
  rateLimits?: RateLimitStore;
}

export function publicBaseUrl(config: GatewayConfig): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
}

/** Socket errors that mean the client went away. */
const CLIENT_GONE = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ERR_STREAM_PREMATURE_CLOSE", "ERR_STREAM_DESTROYED"]);

/** A Node-style string `code` of an error, if it has one (ConnectError's numeric code is not one). */
function errorCode(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** The customer's checkout routes: /checkout and everything under it. */
function isCheckout(path: string): boolean {
  return path === "/checkout" || path.startsWith("/checkout/");
}

/** The Koa app: every route, and the one place the order of middleware is set. */
export function createApp(deps: GatewayDeps): Koa<GatewayState> {
  const { config, clock, logger, metrics } = deps;
  const routes: Route[] = [
    ...availableBanks({ bankCatalog: deps.catalog ?? deps.bankCatalog, clock, publicBaseUrl: publicBaseUrl(config) }),
    ...deposits({ deposits: deps.deposits, clock, publicBaseUrl: publicBaseUrl(config) }),
    ...withdrawals({ payouts: deps.payouts, clock }),
    ...transactions({ deposits: deps.deposits, payouts: deps.payouts, clock, publicBaseUrl: publicBaseUrl(config) }),
    ...statement({ payouts: deps.payouts, clock, logger }),
    ...events({ callbacks: deps.callbacks, clock }),
    ...sandbox({ deposits: deps.deposits, clock, publicBaseUrl: publicBaseUrl(config) }),
    ...checkout({ deposits: deps.deposits, clock, publicBaseUrl: publicBaseUrl(config) }),
    ...health({ services: deps.health, clock, timeoutMs: config.HEALTH_TIMEOUT }),
    ...assets({ bankCatalog: deps.bankCatalog, clock, cacheTtlMs: config.BANK_ASSET_CACHE_TTL }),
    ...docs({ publicBaseUrl: publicBaseUrl(config) }),
    ...openapi(),
    ...(deps.routes ?? []),
  ];

  const trustedProxies = compileTrustedProxies(config.TRUSTED_PROXIES);
  const bodyReader = readBody({ limit: config.BODY_LIMIT });
  const authenticator = authenticate({
    credentials: deps.credentials,
    clock,
    toleranceSeconds: Math.floor(config.TIMESTAMP_TOLERANCE / 1000),
  });
  const maxKeys = config.RATE_LIMIT_MAX_KEYS;
  // In memory (per replica), or one shared bucket per key for every replica (RATE_LIMIT_STORE=nats).
  const store = deps.rateLimits ?? new MemoryRateLimits({ clock, maxKeys });
  // Before the body and the key lookup: an IP that keeps failing to authenticate costs no more than a 429.
  const failureLimiter = authFailureLimit({ clock, perSecond: config.AUTH_FAILURE_LIMIT_RPS, burst: config.AUTH_FAILURE_LIMIT_BURST, limiter: store.limiter("auth-failure") });
  // One limiter for all routes: a merchant's budget is per merchant, not per endpoint.
  const limiter = rateLimit({ clock, perSecond: config.RATE_LIMIT_RPS, burst: config.RATE_LIMIT_BURST, limiter: store.limiter("merchant") });
  // The checkout is public, so the caller's IP is the only thing to charge; one budget for all its routes.
  const checkoutLimiter = ipRateLimit({
    clock,
    perSecond: config.CHECKOUT_RATE_LIMIT_RPS,
    burst: config.CHECKOUT_RATE_LIMIT_BURST,
    headers: checkoutSecurityHeaders(),
    limiter: store.limiter("checkout"),
  });
  const jsonParser = jsonBody();
  const optionalJsonParser = jsonBody({ optional: true });

  /**
   * A signed merchant request: 429 (failed-auth budget) → 413 → 401 → 403 IP → 403 scope → 429 →
   * 415/400, then the handler. A route every key may call (the bank list) has no scope step at all.
   */
  const merchantChain = (route: Route & { access: "merchant" }): RouteHandler[] => [
    failureLimiter,
    bodyReader,
    authenticator,
    ipAllowlist({ trustedProxies, requireAllowList: route.requireAllowList ?? false }),
    ...(scopeMask(route.scopes) === EVERY_SCOPE ? [] : [keyScope(route.scopes)]),
    limiter,
    route.body === "none" ? optionalJsonParser : jsonParser,
  ];

  // Paths are case-sensitive, as documented; a trailing slash is tolerated.
  const router = new Router<GatewayState>({ sensitive: true });
  for (const route of routes) {
    const chain = route.access === "merchant" ? merchantChain(route) : isCheckout(route.path) ? [checkoutLimiter] : [];
    // The router answers HEAD for every GET route by itself.
    router.register(route.path, [route.method], [...chain, route.handler]);
  }

  const app = new Koa<GatewayState>({ proxy: false });
  app.silent = true;
  app.on("error", (err: unknown) => {
    // Koa reports here what fails once a response is under way. A client that went away or
    // broke the connection is not the gateway's failure, and Node's parser errors carry the
    // raw request bytes (API key, signature, body): for those only the code is logged.
    const code = errorCode(err);
    if (code !== undefined && (code.startsWith("HPE_") || CLIENT_GONE.has(code))) logger.info({ code }, "client connection failed");
    else logger.error({ err }, "response failed");
  });

  app.use(traceRequests());
  app.use(requestId());
  app.use(accessLog({ logger, metrics }));
  app.use(errorHandler({ clock, logger, metrics }));
  // GET /metrics on the public port, for private callers or with METRICS_TOKEN (middleware/metrics-endpoint.ts).
  app.use(metricsEndpoint({ metrics, trustedProxies, allow: config.METRICS_ALLOW, token: config.METRICS_TOKEN }));
  app.use(routeMatch({ router }));
  app.use(clientIp({ trustedProxies }));
  app.use(router.routes());
  return app;
}
