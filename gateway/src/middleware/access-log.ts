import { observeHttpRequest, type Logger, type Metrics } from "@payments/kit";
import type { GatewayMiddleware } from "../state.js";

/**
 * One log line, one counter increment and one `http_server_request_duration_seconds`
 * observation per request, with the status the client finally got. The route is the
 * pattern that matched (`/v1/deposit/:transactionId`), never the raw path; a request no
 * route matched has an empty `http_route`.
 */
export function accessLog(options: { logger: Logger; metrics: Metrics }): GatewayMiddleware {
  const requests = options.metrics.counter("gateway_http_requests_total", "HTTP requests by method, route and status", ["method", "route", "status"]);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const route = ctx.state.route ?? "unmatched";
      requests.inc({ method: ctx.method, route, status: String(ctx.status) });
      observeHttpRequest(options.metrics, { method: ctx.method, route: ctx.state.route, status: ctx.status }, seconds);
      options.logger.info(
        {
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          ms: Math.round(seconds * 1000),
          merchantId: ctx.state.merchant?.merchantId,
        },
        "request",
      );
    }
  };
}
