import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type ConnectRouterOptions, type Interceptor, type Transport } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter, type ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { metricsKey, type TransportOptions } from "./clients.js";
import { HealthRegistry } from "./health.js";
import { serveHttpRoute, type HttpRoute } from "./http-routes.js";
import { Readiness } from "./readiness.js";
import { createInProcessTransport } from "./in-process-transport.js";
import type { ServerTlsOptions } from "./internal-tls.js";
import { bearerAuthInterceptor, errorInterceptor, requestIdInterceptor } from "./interceptors.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { reflectionRoutes } from "./reflection.js";
import { openRpcPort, type Handler } from "./rpc-port.js";
import { Health, HealthCheckResponse_ServingStatus as HealthStatus } from "@payments/contracts/health";

export type { HttpRoute, HttpRouteRequest, HttpRouteResponse } from "./http-routes.js";
export { DEFAULT_HTTP_BODY_LIMIT } from "./http-routes.js";

export interface RpcServeOptions {
  routes: (router: ConnectRouter) => void;
  /** The services the routes register; they are listed by reflection and health. */
  services: readonly DescService[];
  logger: Logger;
  metrics: Metrics;
  internalToken?: string;
  interceptors?: Interceptor[];
  /** Plain HTTP endpoints on the same port (http-routes.ts), consulted before the 404. */
  http?: readonly HttpRoute[];
}

export interface RpcServer {
  readonly port: number;
  readonly url: string;
  readonly health: HealthRegistry;
  /**
   * Whether this process should get work: `/readyz`, and every grpc.health.v1 status,
   * follow it. Add checks with `readiness.add(name, check)`; `close` sets it draining.
   */
  readonly readiness: Readiness;
  /** Installs the handlers; calls that arrive before this get UNAVAILABLE. */
  serve(options: RpcServeOptions): void;
  /**
   * This server's own procedures without the network (see createInProcessTransport): the
   * handlers and server interceptors `serve` installs, plus the client's outgoing
   * interceptor. Usable at once; like the port, it answers UNAVAILABLE before `serve` and
   * once `close` has begun. One transport per token, deadline (and extra interceptors).
   * `tls` is ignored: nothing leaves the process.
   */
  inProcessTransport(options?: TransportOptions): Transport;
  /** Stops accepting (on the port and in process), lets calls in flight finish (up to graceMs), then closes. */
  close(graceMs?: number): Promise<void>;
}

/** What the port serves, built once by `rpcHandlers` and shared by the HTTP adapter and the in-process transport. */
export interface RpcHandlers {
  /**
   * Registers every procedure: the services' routes, health and reflection. The route
   * factories ran once, when `rpcHandlers` was called; each router gets the same
   * implementations (one set of closures and caches, whichever path a call takes).
   */
  routes(router: ConnectRouter): void;
  /** Server-side options of every router: the interceptors, in order, and compression. */
  options: ConnectRouterOptions;
}

/**
 * Compression on the server side. Requests compressed with gzip or br are accepted (an
 * external gRPC client may send them; decompressing costs the caller's choice only). A
 * response is compressed only when the caller asks for it (grpc-accept-encoding,
 * connect-accept-encoding or accept-encoding, or a compressed request without one) and the
 * message is at least 1 KiB. Kit clients never ask (clients.ts), so internal calls are
 * never compressed in either direction.
 */
export const serverCompression = {
  acceptCompression: [compressionGzip, compressionBrotli],
  compressMinBytes: 1024,
};

/** Runs `register` once against a recorder and returns a function that replays it on any router. */
function recordRoutes(register: (router: ConnectRouter) => void): (router: ConnectRouter) => void {
  const steps: Array<(router: ConnectRouter) => void> = [];
  const recorder: ConnectRouter = {
    handlers: [],
    service(service, implementation, options) {
      steps.push((router) => router.service(service, implementation, options));
      return recorder;
    },
    rpc(method, implementation, options) {
      steps.push((router) => router.rpc(method, implementation, options));
      return recorder;
    },
  };
  register(recorder);
  return (router) => {
    for (const step of steps) step(router);
  };
}

/**
 * The one definition of what an RPC server runs: the routes (services, health,
 * reflection) and the server interceptors (request id, errors and metrics, internal
 * token, then any extras). `serve` hands it to the HTTP/2 + HTTP/1.1 adapter and to the
 * in-process transport, so a call gets the same treatment whichever way it arrives.
 */
export function rpcHandlers(options: RpcServeOptions, health: HealthRegistry): RpcHandlers {
  const services = [...options.services];
  return {
    routes: recordRoutes((router) => {
      options.routes(router);
      health.routes(router);
      reflectionRoutes(router, [...services, Health]);
    }),
    options: {
      interceptors: [
        requestIdInterceptor(),
        errorInterceptor(options.logger, options.metrics),
        bearerAuthInterceptor(options.internalToken),
        ...(options.interceptors ?? []),
      ],
      ...serverCompression,
    },
  };
}

export interface ListenRpcOptions {
  port: number;
  host: string;
  logger: Logger;
  /** TLS on the one port (GRPC_TLS_*); with clientCa, mTLS. Cleartext without it. */
  tls?: ServerTlsOptions | undefined;
}

/**
 * One port for everything: gRPC, Connect and gRPC-Web over HTTP/2, and HTTP/1.1 (Connect
 * and gRPC-Web from browsers and curl, /metrics, and /livez, /readyz and /healthz for
 * probes). `/livez` is 200 whenever the event loop answers, from the moment the port is
 * bound; `/readyz` is 200 only once serving and every readiness check passes (503 with the
 * checks otherwise, and while starting or draining); `/healthz` is kept for compatibility
 * and answers as grpc.health.v1 Check("") does, which follows readiness.
 *
 * Cleartext: the first bytes of each connection pick the protocol (the HTTP/2 preface or
 * not). TLS: ALPN picks it (`h2`, else HTTP/1.1). With a client CA (mTLS) the handshake
 * itself refuses a peer without a certificate signed by that CA, so nothing on the port,
 * health checks and /metrics included, answers such a peer: probes and scrapers present
 * a client certificate too (e.g. grpc_health_probe -tls -tls-ca-cert -tls-client-cert
 * -tls-client-key).
 */
export async function listenRpc(options: ListenRpcOptions): Promise<RpcServer> {
  const health = new HealthRegistry();
  const readiness = new Readiness();
  health.follow(readiness);
  const state: ServingState = { served: undefined, closing: false };
  const probe = probeRoutes(readiness, state);
  let handler: Handler = (req, res) => {
    if (probe(req, res)) return;
    res.writeHead(503, { "content-type": "text/plain" });
    res.end("starting");
  };
  const port = await openRpcPort(options, (req, res) => handler(req, res));
  const calls = new InProcessCalls(state);
  let readinessTimer: NodeJS.Timeout | undefined;

  return {
    port: port.port,
    url: port.url,
    health,
    readiness,
    inProcessTransport(options = {}) {
      return calls.transport(options);
    },
    serve(serveOptions) {
      for (const s of serveOptions.services) health.register(s.typeName);
      const handlers = rpcHandlers(serveOptions, health);
      const adapter = connectNodeAdapter({
        routes: handlers.routes,
        ...handlers.options,
        fallback: fallbackRoutes(serveOptions, health, readiness, probe),
      });
      handler = adapter;
      state.served = handlers;
      // Keeps grpc.health.v1 statuses (and Watch) current between probes.
      void readiness.evaluate();
      readinessTimer = setInterval(() => void readiness.evaluate().catch(() => undefined), 1000);
      readinessTimer.unref();
    },
    async close(graceMs = 10_000) {
      readiness.setDraining();
      clearInterval(readinessTimer);
      health.setAll(false);
      state.closing = true;
      await port.close(graceMs, calls.drained());
      // Ends what is still running in process (health watches, calls past the grace).
      calls.abort();
    },
  };
}

/** Where a server is: serving (once `serve` ran) and closing (once `close` began). */
interface ServingState {
  served: RpcHandlers | undefined;
  closing: boolean;
}

type Probe = (req: { method?: string; url?: string }, res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown }) => boolean;

/** /livez and /readyz, on any protocol, before and after serve(): true when it answered. */
function probeRoutes(readiness: Readiness, state: ServingState): Probe {
  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const path = (req.url ?? "/").split("?")[0];
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify(body));
    };
    if (path === "/livez") {
      answer(200, { status: "ok" });
      return true;
    }
    if (path !== "/readyz") return false;
    if (!state.served || state.closing) {
      answer(503, { status: "NOT_READY", checks: { server: state.closing ? "shutting down" : "starting" } });
      return true;
    }
    readiness
      .evaluate()
      .then((report) => answer(report.ready ? 200 : 503, { status: report.ready ? "READY" : "NOT_READY", checks: report.checks }))
      .catch(() => answer(503, { status: "NOT_READY" }));
    return true;
  };
}

/** What the port answers besides the procedures: /metrics, /healthz, the probes, the service's HTTP routes, else 404. */
function fallbackRoutes(serveOptions: RpcServeOptions, health: HealthRegistry, readiness: Readiness, probe: Probe): NonNullable<ConnectNodeAdapterOptions["fallback"]> {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      serveOptions.metrics.registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { "content-type": serveOptions.metrics.registry.contentType });
          res.end(text);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
      return;
    }
    if (req.method === "GET" && path === "/healthz") {
      void readiness
        .evaluate()
        .catch(() => undefined)
        .then(() => {
          const ok = health.get("") === HealthStatus.SERVING;
          res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
          res.end(JSON.stringify({ status: ok ? "SERVING" : "NOT_SERVING" }));
        });
      return;
    }
    if (probe(req, res)) return;
    if (serveOptions.http && serveHttpRoute(serveOptions.http, req, res, serveOptions.logger)) return;
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: "not_found", message: "no such procedure" }));
  };
}

/**
 * In-process calls: refused before serve() and from close() on, like the port; unary
 * calls in flight are waited for on close, and the shutdown signal ends the rest.
 */
class InProcessCalls {
  private inFlight = 0;
  private whenDrained: (() => void) | undefined;
  private readonly shutdown = new AbortController();
  private readonly transports = new Map<string, Transport>();

  constructor(private readonly state: ServingState) {}

  /** One transport per token, deadline and metrics; one of its own with extra interceptors. */
  transport(options: TransportOptions): Transport {
    if (options.interceptors && options.interceptors.length > 0) return this.delegate(options);
    const key = `${options.token ?? ""}|${options.timeoutMs ?? ""}|${metricsKey(options.metrics)}`;
    let transport = this.transports.get(key);
    if (!transport) {
      transport = this.delegate({ token: options.token, timeoutMs: options.timeoutMs, metrics: options.metrics });
      this.transports.set(key, transport);
    }
    return transport;
  }

  /** Resolves once no unary call is in flight. */
  drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.whenDrained = resolve;
      if (this.inFlight === 0) resolve();
    });
  }

  /** Ends every call still running. */
  abort(): void {
    this.shutdown.abort(new ConnectError("the server is shutting down", Code.Unavailable));
  }

  private delegate(options: TransportOptions): Transport {
    let routed: Transport | undefined;
    const target = (): Transport => {
      if (this.state.closing) throw new ConnectError("the server is shutting down", Code.Unavailable);
      if (!this.state.served) throw new ConnectError("the server is starting", Code.Unavailable);
      routed ??= createInProcessTransport(this.state.served, { ...options, shutdownSignal: this.shutdown.signal });
      return routed;
    };
    return {
      unary: async (method, signal, timeoutMs, header, input, contextValues) => {
        const transport = target();
        this.inFlight++;
        try {
          return await transport.unary(method, signal, timeoutMs, header, input, contextValues);
        } finally {
          if (--this.inFlight === 0) this.whenDrained?.();
        }
      },
      stream: async (method, signal, timeoutMs, header, input, contextValues) => {
        return target().stream(method, signal, timeoutMs, header, input, contextValues);
      },
    };
  }
}
