import type { Logger, Metrics } from "@payments/kit";
import type { GatewayMiddleware } from "../state.js";

/** HTTP methods reported as they are; anything else is `_OTHER` (OpenTelemetry's rule, bounding the label). */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]);

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
      options.metrics.httpDuration.observe(
        {
          http_request_method: KNOWN_METHODS.has(ctx.method) ? ctx.method : "_OTHER",
          http_route: ctx.state.route ?? "",
          http_response_status_code: String(ctx.status),
        },
        seconds,
      );
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
