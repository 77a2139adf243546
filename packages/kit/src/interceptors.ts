import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { serviceError } from "./errors.js";
import { newId } from "./ids.js";
import { currentRequestId, isValidRequestId, withRequestId, type Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";

const HEALTH_SERVICE = "grpc.health.v1.Health";

/** Adopts the caller's x-request-id (or makes one) for the logs of this call and the calls it makes. */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    const incoming = req.header.get("x-request-id");
    const requestId = isValidRequestId(incoming) ? incoming : newId("req");
    return withRequestId(requestId, () => next(req));
  };
}

/**
 * Logs every call and turns anything that is not a deliberate ConnectError into a bare
 * INTERNAL, so no stack, SQL or driver text leaves the service.
 */
export function errorInterceptor(logger: Logger, metrics?: Metrics): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const service = req.service.typeName;
    const method = req.method.name;
    let code = "ok";
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError) {
        code = Code[err.code] ?? String(err.code);
        const level = err.code === Code.Internal || err.code === Code.Unknown || err.code === Code.DataLoss ? "error" : "info";
        logger[level]({ rpc: `${service}/${method}`, code, reason: err.metadata.get("x-error-reason") ?? undefined, error: err.rawMessage }, "rpc failed");
        throw err;
      }
      code = "Internal";
      logger.error({ err, rpc: `${service}/${method}` }, "rpc crashed");
      throw new ConnectError("internal error", Code.Internal);
    } finally {
      const seconds = (performance.now() - started) / 1000;
      metrics?.rpcDuration.observe({ service, method, code }, seconds);
      logger.debug({ rpc: `${service}/${method}`, code, ms: Math.round(seconds * 1000) }, "rpc");
    }
  };
}

/** With INTERNAL_API_TOKEN set, every call but health checks must carry `Authorization: Bearer <token>`. */
export function bearerAuthInterceptor(token: string | undefined): Interceptor {
  const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
  return (next) => async (req) => {
    if (expected && req.service.typeName !== HEALTH_SERVICE) {
      const given = Buffer.from(req.header.get("authorization") ?? "");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw serviceError(Code.Unauthenticated, "UNAUTHENTICATED", "missing or invalid internal API token");
      }
    }
    return next(req);
  };
}

/** Client side: forwards the current request id and the internal token on outgoing calls. */
export function outgoingInterceptor(token: string | undefined): Interceptor {
  return (next) => async (req) => {
    const requestId = currentRequestId();
    if (requestId && !req.header.has("x-request-id")) req.header.set("x-request-id", requestId);
    if (token && !req.header.has("authorization")) req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}
