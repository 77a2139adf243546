import http from "node:http";
import type { AddressInfo } from "node:net";
import { Code, createClient, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService, MerchantStatus } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { API_KEY_SCOPES } from "@payments/access";
import { createLogger, createMetrics, serviceError, type Metrics } from "@payments/kit";
import { manualClock } from "@payments/testing";
import { createApp } from "../src/app.js";
import { loadGatewayConfig } from "../src/config.js";
import { CredentialCache } from "../src/credential-cache.js";
import type { RateLimitStore } from "../src/rate-limit-store.js";
import type { Credentials } from "./http-client.js";

/** A merchant the fake merchant service knows. */
export interface FakeMerchant extends Credentials {
  merchantId: string;
  allowedIps?: string[];
  rateLimitPerSecond?: number;
  rateLimitBurst?: number;
  /** A sandbox merchant (default: live). */
  sandbox?: boolean;
  /** The key's scopes (default every scope). */
  scopes?: readonly string[];
  /** The key is trusted for automatic payouts (default not). */
  trusted?: boolean;
}

export interface FakeApp {
  url: string;
  clock: ReturnType<typeof manualClock>;
  /** Every log line of the gateway, as written. */
  logLines: string[];
  /** API keys the merchant service was asked about, in order. */
  lookups: string[];
  server: http.Server;
  close(): Promise<void>;
}

/**
 * The gateway's app over in-memory fakes of the services, on a manual clock, served by a
 * plain node:http server on 127.0.0.1 (a trusted proxy when `TRUSTED_PROXIES` says so, so
 * X-Forwarded-For can play many client IPs). Services not given answer Unimplemented.
 */
export async function startFakeApp(
  options: {
    merchants?: FakeMerchant[];
    env?: Record<string, string>;
    deposits?: Partial<ServiceImpl<typeof DepositService>>;
    payouts?: Partial<ServiceImpl<typeof PayoutService>>;
    callbacks?: Partial<ServiceImpl<typeof CallbackService>>;
    /** A clock several apps share (default one of its own). */
    clock?: ReturnType<typeof manualClock>;
    /** Where the rate limits count (default in memory, per app). */
    rateLimits?: RateLimitStore;
    metrics?: Metrics;
  } = {},
): Promise<FakeApp> {
  const clock = options.clock ?? manualClock();
  const logLines: string[] = [];
  const lookups: string[] = [];
  const known = new Map((options.merchants ?? []).map((m) => [m.apiKey, m]));
  const transport = createRouterTransport(({ service }) => {
    service(MerchantService, {
      getCredentials: (req) => {
        lookups.push(req.apiKey);
        const merchant = known.get(req.apiKey);
        if (!merchant) throw serviceError(Code.NotFound, "API_KEY_NOT_FOUND", "unknown");
        return {
          merchantId: merchant.merchantId,
          status: MerchantStatus.ACTIVE,
          secrets: [{ secret: merchant.apiSecret }],
          allowedIps: merchant.allowedIps ?? [],
          sandbox: merchant.sandbox ?? false,
          scopes: [...(merchant.scopes ?? API_KEY_SCOPES)],
          trusted: merchant.trusted ?? false,
          ...(merchant.rateLimitPerSecond !== undefined ? { rateLimitPerSecond: merchant.rateLimitPerSecond } : {}),
          ...(merchant.rateLimitBurst !== undefined ? { rateLimitBurst: merchant.rateLimitBurst } : {}),
        };
      },
    });
    service(BankCatalogService, { listAvailableBanks: () => ({ banks: [] }) });
    service(DepositService, options.deposits ?? {});
    service(PayoutService, options.payouts ?? {});
    service(CallbackService, options.callbacks ?? {});
  });
  const merchants = createClient(MerchantService, transport);
  const app = createApp({
    config: loadGatewayConfig({ PORT: "0", ...options.env }),
    merchants,
    bankCatalog: createClient(BankCatalogService, transport),
    deposits: createClient(DepositService, transport),
    payouts: createClient(PayoutService, transport),
    callbacks: createClient(CallbackService, transport),
    health: {},
    // No negative cache: every unknown key is a lookup, so a test can count what reached the service.
    credentials: new CredentialCache({ merchants, clock, ttlMs: 30_000, negativeTtlMs: 0 }),
    logger: createLogger({ service: "gateway", level: "debug", destination: { write: (line: string) => void logLines.push(line) } }),
    metrics: options.metrics ?? createMetrics(),
    clock,
    ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
  });
  const handle = app.callback();
  // Fire-and-forget is safe: Koa catches every error of a request itself (the error handler answers
  // with the envelope), so the promise never rejects.
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    clock,
    logLines,
    lookups,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
