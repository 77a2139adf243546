import { z } from "zod";
import { envVar, isTrustedProxyEntry, loadConfig, trustedProxiesVar, type Env } from "@payments/kit";

/**
 * Every setting of the gateway, read from the environment. Durations follow the kit:
 * "300s", "5m", "100ms"; a plain number is milliseconds.
 */
export const gatewayConfigSchema = z.object({
  PORT: envVar.port(8080),
  HOST: z.string().default("0.0.0.0"),
  // Where each service the gateway calls is (split mode; required there). The all-in-one process passes them in.
  MERCHANT_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  BANK_CATALOG_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  DEPOSIT_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  PAYOUT_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  /** The callback-sender, behind /v1/events. */
  CALLBACK_SENDER_SERVICE_URL: envVar.url(["http", "https"]).optional(),
  INTERNAL_API_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** Where merchants and their customers reach the gateway; logo paths and checkout links start with it. */
  PUBLIC_BASE_URL: envVar
    .url(["http", "https"])
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  TRUSTED_PROXIES: trustedProxiesVar(),
  // At least a second: a bare "300" would be 300 ms under the kit's duration rules and refuse every request.
  TIMESTAMP_TOLERANCE: envVar.duration("300s").refine((value) => value >= 1000, "must be at least 1s (a plain number is milliseconds: write 300s)"),
  BODY_LIMIT: envVar.int(65536, 1),
  RATE_LIMIT_RPS: envVar.int(100),
  RATE_LIMIT_BURST: envVar.int(200),
  // Per client IP: failed authentications (then 429 before the key lookup), and every checkout request. 0 turns each off.
  AUTH_FAILURE_LIMIT_RPS: envVar.int(5),
  AUTH_FAILURE_LIMIT_BURST: envVar.int(20, 1),
  CHECKOUT_RATE_LIMIT_RPS: envVar.int(10),
  CHECKOUT_RATE_LIMIT_BURST: envVar.int(30, 1),
  /** Most client IPs (or merchants) each limiter remembers; past it the least recently seen is forgotten. */
  RATE_LIMIT_MAX_KEYS: envVar.int(100_000, 1),
  /**
   * Where the rate limits above keep their buckets: `memory` (each gateway process counts
   * alone, so N replicas admit N times the rate) or `nats` (one bucket per key in a NATS
   * key-value bucket every replica shares; needs NATS_URL). Unset: `nats` for the split
   * deployment's gateway (main.ts) when NATS_URL is set, else `memory` (the all-in-one).
   */
  RATE_LIMIT_STORE: z.enum(["memory", "nats"]).optional(),
  /** The shared key-value bucket (created when missing); unset: `<NATS_STREAM>_RATE_LIMITS`, one per deployment. */
  RATE_LIMIT_NATS_BUCKET: z.string().regex(/^[A-Za-z0-9_-]+$/, "letters, digits, _ and - only").optional(),
  /** A key nobody wrote for this long vanishes from the shared bucket; keep it above the longest burst / rate. */
  RATE_LIMIT_NATS_TTL: envVar.duration("10m").refine((value) => value >= 1000, "must be at least 1s"),
  /**
   * How long tokens a gateway takes ahead from the shared bucket (as many as it served of that
   * key since its last round trip, at most a quarter of the burst) may serve its next requests
   * without a round trip; 0: a round trip per request. Over-admission: at most rate · this.
   */
  RATE_LIMIT_NATS_LEASE: envVar.duration("100ms").refine((value) => value <= 10_000, "must be at most 10s"),
  /** The most a request waits for the shared bucket before this gateway's own limiter answers it. */
  RATE_LIMIT_NATS_TIMEOUT: envVar.duration("50ms").refine((value) => value >= 1 && value <= 5000, "must be between 1ms and 5s"),
  CREDENTIAL_CACHE_TTL: envVar.duration("30s"),
  NEGATIVE_CACHE_TTL: envVar.duration("5s"),
  BANK_ASSET_CACHE_TTL: envVar.duration("5m"),
  /** How long a merchant's bank list is kept when no CatalogChanged event drops it first; 0: asked on every request. */
  CATALOG_CACHE_TTL: envVar.duration("30s"),
  RPC_TIMEOUT: envVar.duration("5s"),
  HEALTH_TIMEOUT: envVar.duration("1s"),
  NATS_URL: envVar.url(["nats", "tls", "ws", "wss"]).optional(),
  NATS_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/).default("PAYMENTS"),
  NATS_SUBJECT_PREFIX: z.string().regex(/^[a-z0-9_-]+$/).default("payments"),
  /**
   * Who may read GET /metrics on PORT without METRICS_TOKEN: the caller's address (after
   * TRUSTED_PROXIES) must be in these ranges (IPs, CIDRs, `loopback`, `uniquelocal` = the
   * private ranges, `linklocal`); `none` turns the address rule off.
   */
  METRICS_ALLOW: z
    .string()
    .default("loopback,uniquelocal")
    .transform((text) => (text.trim() === "none" ? [] : text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)))
    .refine((entries) => entries.every(isTrustedProxyEntry), {
      message: "expected a comma-separated list of IPs or CIDRs (or loopback, linklocal, uniquelocal), or none",
    }),
  /** With it, GET /metrics on PORT answers only `Authorization: Bearer <METRICS_TOKEN>`, from any address. */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /** A separate port for GET /metrics as well (unset: none). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().default("0.0.0.0"),
  SHUTDOWN_GRACE: envVar.duration("10s"),
  LOG_LEVEL: envVar.logLevel(),
}).superRefine((config, ctx) => {
  if (config.RATE_LIMIT_STORE === "nats" && !config.NATS_URL) ctx.addIssue({ code: "custom", path: ["RATE_LIMIT_STORE"], message: "nats needs NATS_URL" });
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function loadGatewayConfig(env: Env = process.env): GatewayConfig {
  return loadConfig(gatewayConfigSchema, env);
}
