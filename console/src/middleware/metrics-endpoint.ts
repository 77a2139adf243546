import { timingSafeEqual } from "node:crypto";
import ipaddr from "ipaddr.js";
import type { Metrics } from "@payments/kit";
import { ConsoleError } from "../errors.js";
import type { ConsoleContextKoa, ConsoleMiddleware } from "../state.js";

const PRIVATE_RANGES = new Set(["loopback", "private", "uniqueLocal", "linkLocal"]);

function privatePeer(ctx: ConsoleContextKoa): boolean {
  // Anything that came through a proxy is treated as from outside: the peer is then the proxy.
  if (ctx.get("x-forwarded-for") || ctx.get("forwarded")) return false;
  try {
    return PRIVATE_RANGES.has(ipaddr.process(ctx.req.socket.remoteAddress ?? "").range());
  } catch {
    return false;
  }
}

/**
 * GET /metrics: Prometheus text, to `Authorization: Bearer <METRICS_TOKEN>` when it is set,
 * else to loopback and private peers (the scraper inside the cluster) not behind a proxy.
 * Everyone else gets the same 404 as any unknown path.
 */
export function metricsEndpoint(options: { metrics: Metrics; token?: string | undefined }): ConsoleMiddleware {
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;
  return async (ctx, next) => {
    if (ctx.path !== "/metrics" || (ctx.method !== "GET" && ctx.method !== "HEAD")) {
      await next();
      return;
    }
    ctx.state.route = "/metrics";
    const given = Buffer.from(ctx.get("authorization"));
    const allowed = expected ? given.length === expected.length && timingSafeEqual(given, expected) : privatePeer(ctx);
    if (!allowed) throw new ConsoleError(404, "NOT_FOUND", "no route");
    ctx.type = options.metrics.registry.contentType;
    ctx.body = await options.metrics.registry.metrics();
  };
}
