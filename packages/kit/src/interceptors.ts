import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { isDatabaseUnavailable } from "./db.js";
import { ERROR_REASON_KEY, serviceError } from "./errors.js";
import { newId } from "./ids.js";
import { currentRequestId, isValidRequestId, withRequestId, type Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { extractTraceContext, injectTraceContext, markSpanError, SpanKind, withSpan } from "./tracing.js";

const HEALTH_SERVICE = "grpc.health.v1.Health";

/**
 * Adopts the caller's x-request-id (or makes one) for the logs of this call and the calls it
 * makes, and runs the call in a server span (`<service>/<method>`) continuing the caller's
 * trace from its `traceparent` header (when tracing is on).
 */
export function requestIdInterceptor(): Interceptor {
  return (next) => async (req) => {
    const incoming = req.header.get("x-request-id");
    const requestId = isValidRequestId(incoming) ? incoming : newId("req");
    const parent = extractTraceContext((key) => req.header.get(key));
    return withRequestId(requestId, () =>
      withSpan(
        `${req.service.typeName}/${req.method.name}`,
        { kind: SpanKind.SERVER, parent, attributes: rpcAttributes(req.header, req.service.typeName, req.method.name) },
        async (span) => {
          try {
            return await next(req);
          } catch (err) {
            span.setAttribute("rpc.grpc.status_code", Number(statusCodeOf(err)));
            throw err;
          }
        },
      ),
    );
  };
}

function rpcAttributes(header: Headers, service: string, method: string): Record<string, string> {
  return { "rpc.system": rpcSystemOf(header), "rpc.service": service, "rpc.method": method };
}

/** OpenTelemetry's `rpc.system` of a call: `grpc` (gRPC and gRPC-Web) or `connect_rpc`, from its content type. */
export function rpcSystemOf(header: Headers): string {
  return (header.get("content-type") ?? "").startsWith("application/grpc") ? "grpc" : "connect_rpc";
}

/** The numeric gRPC status code of an outcome (Connect's codes are the same numbers): 0 for OK, 2 (UNKNOWN) for anything not a ConnectError. */
function statusCodeOf(err: unknown): string {
  if (err === undefined) return "0";
  return String(err instanceof ConnectError ? err.code : Code.Unknown);
}

/** The RPC an error came back from, for callers' logs: see `failedCallOf`. */
export interface FailedCall {
  /** The proto service, e.g. `payments.deposit.v1.DepositService`. */
  service: string;
  method: string;
}

const failedCalls = new WeakMap<object, FailedCall>();

/** Which outgoing call (made through a kit client) an error came back from, if it did. */
export function failedCallOf(err: unknown): FailedCall | undefined {
  return typeof err === "object" && err !== null ? failedCalls.get(err) : undefined;
}

/**
 * Logs every call and turns anything that is not a deliberate ConnectError into a bare
 * INTERNAL, so no stack, SQL or driver text leaves the service. Records
 * `rpc_server_duration_seconds`.
 */
export function errorInterceptor(logger: Logger, metrics?: Metrics): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const service = req.service.typeName;
    const method = req.method.name;
    let code = "ok";
    let failure: unknown;
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError) {
        failure = err;
        // An unknown number from a peer has no name: the enum lookup can miss at runtime.
        code = Code[err.code] || String(err.code);
        const level = err.code === Code.Internal || err.code === Code.Unknown || err.code === Code.DataLoss ? "error" : "info";
        logger[level]({ rpc: `${service}/${method}`, code, reason: err.metadata.get("x-error-reason") ?? undefined, error: err.rawMessage }, "rpc failed");
        throw err;
      }
      if (isDatabaseUnavailable(err)) {
        // A restart or failover of the database: the caller may retry (the gateway's 503), no bug of ours.
        code = "Unavailable";
        failure = new ConnectError("the service's database is unavailable; retry later", Code.Unavailable);
        logger.warn({ err: { code: (err as { code?: string }).code, message: (err as Error).message }, rpc: `${service}/${method}` }, "rpc unavailable: the database cannot be reached");
        throw failure;
      }
      code = "Internal";
      failure = new ConnectError("internal error", Code.Internal);
      logger.error({ err, rpc: `${service}/${method}` }, "rpc crashed");
      throw failure;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      metrics?.rpcDuration.observe(
        { rpc_system: rpcSystemOf(req.header), rpc_service: service, rpc_method: method, rpc_grpc_status_code: statusCodeOf(failure) },
        seconds,
      );
      logger.debug({ rpc: `${service}/${method}`, code, ms: Math.round(seconds * 1000) }, "rpc");
    }
  };
}

/** Node's errors of a connection that broke under a call: the HTTP/2 session or stream, or the socket. */
const TRANSPORT_ERROR_CODES = /^(ERR_HTTP2_|ECONNRESET$|EPIPE$|ECONNREFUSED$|ECONNABORTED$|ETIMEDOUT$|EHOSTUNREACH$|ENETUNREACH$)/;

/**
 * A call whose connection broke (the HTTP/2 session closed under it, the stream was reset, the
 * socket died) never reached a service's own decision: the backing service is unavailable to
 * this caller, which is UNAVAILABLE (the gateway's 503), not the INTERNAL Connect gives it (a
 * 500 is for a fault, and says nothing a client can retry on). A service's deliberate error
 * carries its reason in the metadata and is left as it is.
 */
export function transportFailureAsUnavailable(error: ConnectError, callerAborted = false): ConnectError {
  // CANCEL from the peer (its session went away) is a break too, unless this caller gave up itself.
  const cancelledByPeer = error.code === Code.Canceled && !callerAborted;
  if (error.code !== Code.Internal && error.code !== Code.Unknown && !cancelledByPeer) return error;
  if (error.metadata.has(ERROR_REASON_KEY)) return error;
  const broken =
    /^http\/2 stream closed with error code/.test(error.rawMessage) ||
    unwrapCauses(error).some((e) => typeof (e as { code?: unknown }).code === "string" && TRANSPORT_ERROR_CODES.test((e as { code: string }).code));
  return broken ? new ConnectError(`the connection to the service broke: ${error.rawMessage}`, Code.Unavailable, undefined, undefined, error) : error;
}

function unwrapCauses(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e instanceof Error && !chain.includes(e); e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
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

/**
 * Client side: forwards the current request id and the internal token on outgoing calls,
 * records `rpc_client_duration_seconds` (with metrics) and remembers which call an error
 * came back from (`failedCallOf`).
 */
export function outgoingInterceptor(token: string | undefined, metrics?: Metrics): Interceptor {
  return (next) => async (req) => {
    const requestId = currentRequestId();
    if (requestId && !req.header.has("x-request-id")) req.header.set("x-request-id", requestId);
    if (token && !req.header.has("authorization")) req.header.set("authorization", `Bearer ${token}`);
    const started = performance.now();
    let failure: unknown;
    try {
      return await withSpan(
        `${req.service.typeName}/${req.method.name}`,
        {
          kind: SpanKind.CLIENT,
          attributes: rpcAttributes(req.header, req.service.typeName, req.method.name),
          // A caller that set traceparent itself (a bank integration continuing a deposit's trace) is the parent.
          ...(req.header.has("traceparent") ? { parent: extractTraceContext((key) => req.header.get(key)) } : {}),
        },
        async (span) => {
          injectTraceContext((key, value) => req.header.set(key, value));
          try {
            return await next(req);
          } catch (err) {
            span.setAttribute("rpc.grpc.status_code", Number(statusCodeOf(ConnectError.from(err))));
            markSpanError(span);
            throw err;
          }
        },
      );
    } catch (err) {
      // Connect turns whatever a call throws into a ConnectError after the interceptors (the
      // same object when it already is one; the abort reason when the deadline passed): the
      // caller gets one of these, and each remembers the call.
      const error = transportFailureAsUnavailable(ConnectError.from(err), req.signal.aborted);
      const call = { service: req.service.typeName, method: req.method.name };
      failedCalls.set(error, call);
      const reason: unknown = req.signal.aborted ? req.signal.reason : undefined;
      if (typeof reason === "object" && reason !== null) failedCalls.set(reason, call);
      failure = error;
      throw error;
    } finally {
      metrics?.rpcClientDuration.observe(
        { rpc_system: rpcSystemOf(req.header), rpc_service: req.service.typeName, rpc_method: req.method.name, rpc_grpc_status_code: statusCodeOf(failure) },
        (performance.now() - started) / 1000,
      );
    }
  };
}
