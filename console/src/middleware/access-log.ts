import { observeHttpRequest, type Logger, type Metrics } from "@payments/kit";
import type { ConsoleMiddleware } from "../state.js";

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
      observeHttpRequest(options.metrics, { method: ctx.method, route: ctx.state.route, status: ctx.status }, seconds);
      options.logger.info({ method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1000), operator: ctx.state.operator?.email ?? ctx.state.actor?.subject }, "request");
    }
  };
}
