import { ConnectError } from "@connectrpc/connect";
import type { Clock, Logger, Metrics } from "@payments/kit";
import { failure } from "../envelope.js";
import { ApiError, INTERNAL_MESSAGE, mapServiceError } from "../errors.js";
import type { GatewayMiddleware } from "../state.js";

/**
 * The single place an error becomes a response: the failure envelope with the right
 * status. Service errors go through the one mapper; anything unexpected is logged with its
 * stack and answered with a generic 500, so no stack, SQL or driver text is ever sent.
 */
export function errorHandler(options: { clock: Clock; logger: Logger; metrics: Metrics }): GatewayMiddleware {
  const errors = options.metrics.counter("gateway_http_errors_total", "Failure responses by public error code", ["code"]);
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      let apiError: ApiError;
      if (err instanceof ApiError) {
        apiError = err;
        if (apiError.status === 500) options.logger.error({ err }, "request failed");
      } else if (err instanceof ConnectError) {
        apiError = mapServiceError(err);
        const level = apiError.status === 500 ? "error" : apiError.status > 500 ? "warn" : "info";
        options.logger[level]({ code: err.code, reason: err.metadata.get("x-error-reason") ?? undefined, msg: err.rawMessage }, "service call failed");
      } else {
        options.logger.error({ err }, "unexpected error");
        apiError = new ApiError(500, "INTERNAL_ERROR", INTERNAL_MESSAGE);
      }
      errors.inc({ code: apiError.code });
      ctx.status = apiError.status;
      if (apiError.headers) ctx.set(apiError.headers);
      ctx.body = failure(apiError.code, apiError.message, options.clock, apiError.details);
    }
  };
}
