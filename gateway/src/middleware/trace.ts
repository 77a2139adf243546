import { extractTraceContext, injectTraceContext, markSpanError, SpanKind, withSpan } from "@payments/kit";
import type { GatewayMiddleware } from "../state.js";

/**
 * One server span per HTTP request, continuing the caller's W3C `traceparent` when it sent
 * one, named `METHOD route` once the route is known (`POST /v1/deposit`; `GET unmatched`
 * when none matched); a 5xx marks it failed. The response carries the span's `traceparent`,
 * so a caller (a bank integration reporting a transfer) can continue the trace. A no-op
 * with tracing off.
 */
export function traceRequests(): GatewayMiddleware {
  return async (ctx, next) => {
    const parent = extractTraceContext((key) => ctx.get(key) || undefined);
    await withSpan(
      `${ctx.method}`,
      { kind: SpanKind.SERVER, parent, attributes: { "http.request.method": ctx.method, "url.path": ctx.path } },
      async (span) => {
        injectTraceContext((key, value) => {
          if (key === "traceparent") ctx.set("traceparent", value);
        });
        try {
          await next();
        } finally {
          const route = ctx.state.route;
          span.updateName(`${ctx.method} ${route ?? "unmatched"}`);
          if (route) span.setAttribute("http.route", route);
          span.setAttribute("http.response.status_code", ctx.status);
          if (ctx.state.requestId) span.setAttribute("request.id", ctx.state.requestId);
          if (ctx.status >= 500) markSpanError(span);
        }
      },
    );
  };
}
