import type { Logger, Metrics } from "@payments/kit";
import type { ConsoleMiddleware } from "../state.js";

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One log line, one counter increment and one duration observation per request, by route pattern (never the raw path: it may hold a link token). */
export function accessLog(options: { logger: Logger; metrics: Metrics }): ConsoleMiddleware {
  const requests = options.metrics.counter("console_http_requests_total", "Console HTTP requests by method, route and status", ["method", "route", "status"]);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const route = ctx.state.route ?? "unmatched";
      requests.inc({ method: ctx.method, route, status: String(ctx.status) });
      options.metrics.httpDuration.observe(
        { http_request_method: KNOWN_METHODS.has(ctx.method) ? ctx.method : "_OTHER", http_route: ctx.state.route ?? "", http_response_status_code: String(ctx.status) },
        seconds,
      );
      options.logger.info({ method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1000), operator: ctx.state.operator?.email ?? ctx.state.actor?.subject }, "request");
    }
  };
}
