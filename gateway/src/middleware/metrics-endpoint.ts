import { timingSafeEqual } from "node:crypto";
import type { Metrics } from "@payments/kit";
import { ApiError } from "../errors.js";
import { callerIp, compileTrustedProxies, type TrustFunction } from "../ip-rule.js";
import type { GatewayMiddleware } from "../state.js";

/** Headers a proxy adds: on a request from a peer not in TRUSTED_PROXIES they mean the real caller is unknown. */
const FORWARDING_HEADERS = ["x-forwarded-for", "forwarded", "x-real-ip"];

export interface MetricsEndpointOptions {
  metrics: Metrics;
  trustedProxies: TrustFunction;
  /** METRICS_ALLOW: the caller ranges served without a token. */
  allow: readonly string[];
  /** METRICS_TOKEN: when set, the only way in. */
  token?: string | undefined;
}

/**
 * GET (and HEAD) /metrics on the public port: Prometheus text of the process's registry.
 * Who may read it: with METRICS_TOKEN, whoever sends `Authorization: Bearer <token>`;
 * without, a caller whose address (after TRUSTED_PROXIES) is in METRICS_ALLOW (loopback
 * and private ranges by default), provided the request did not come through a proxy the
 * gateway does not trust (forwarding headers from an unlisted peer). Everyone else gets
 * the same 404 as any unknown path: the endpoint is not advertised.
 */
export function metricsEndpoint(options: MetricsEndpointOptions): GatewayMiddleware {
  const allowed = options.allow.length > 0 ? compileTrustedProxies(options.allow) : () => false;
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;

  const permitted = (ctx: Parameters<GatewayMiddleware>[0]): boolean => {
    if (expected) {
      const given = Buffer.from(ctx.get("authorization"));
      return given.length === expected.length && timingSafeEqual(given, expected);
    }
    const peer = ctx.req.socket.remoteAddress ?? "";
    if (!options.trustedProxies(peer, 0) && FORWARDING_HEADERS.some((h) => ctx.req.headers[h] !== undefined)) return false;
    const caller = callerIp(ctx.req, options.trustedProxies);
    return caller !== "" && allowed(caller, 0);
  };

  return async (ctx, next) => {
    if (ctx.path !== "/metrics" || (ctx.method !== "GET" && ctx.method !== "HEAD")) {
      await next();
      return;
    }
    ctx.state.route = "/metrics";
    if (!permitted(ctx)) throw new ApiError(404, "NOT_FOUND", `No endpoint at ${ctx.path}`);
    ctx.status = 200;
    ctx.type = options.metrics.registry.contentType;
    ctx.set("Cache-Control", "no-store");
    ctx.body = await options.metrics.registry.metrics();
  };
}
