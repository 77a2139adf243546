import { Code, ConnectError } from "@connectrpc/connect";
import { failedCallOf, type Clock, type Logger, type Metrics } from "@payments/kit";
import { failure } from "../envelope.js";
import { ApiError, INTERNAL_MESSAGE, mapServiceError } from "../errors.js";
import type { GatewayMiddleware } from "../state.js";

/** The deployable that serves a proto service: `payments.bankcatalog.v1.BankCatalogService` → `bank-catalog`. */
const SERVICE_NAMES: Readonly<Record<string, string>> = {
  merchant: "merchant",
  bankcatalog: "bank-catalog",
  deposit: "deposit",
  payout: "payout",
  callback: "callback-sender",
};

export function serviceName(typeName: string): string {
  const pkg = /^payments\.([a-z0-9]+)\.v\d+\./.exec(typeName)?.[1];
  return (pkg && SERVICE_NAMES[pkg]) ?? typeName;
}

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
        // The service that failed is named (calledService, rpc); its message goes in `error`, so the line has one `msg`.
        const call = failedCallOf(err);
        options.logger[level](
          {
            calledService: call ? serviceName(call.service) : "unknown",
            rpc: call ? `${call.service}/${call.method}` : undefined,
            // A code this build's enum does not name (a newer peer) has no name: logged as its number.
            code: (Code[err.code] as string | undefined) ?? err.code,
            reason: err.metadata.get("x-error-reason") ?? undefined,
            error: err.rawMessage,
          },
          "service call failed",
        );
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
