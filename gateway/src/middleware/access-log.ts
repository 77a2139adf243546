import type { Logger, Metrics } from "@payments/kit";
import type { GatewayMiddleware } from "../state.js";

/** One log line and one counter increment per request, with the status the client finally got. */
export function accessLog(options: { logger: Logger; metrics: Metrics }): GatewayMiddleware {
  const requests = options.metrics.counter("gateway_http_requests_total", "HTTP requests by method, route and status", ["method", "route", "status"]);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = ctx.state.route ?? "unmatched";
      requests.inc({ method: ctx.method, route, status: String(ctx.status) });
      options.logger.info(
        {
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          merchantId: ctx.state.merchant?.merchantId,
        },
        "request",
      );
    }
  };
}
