import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type ConnectRouterOptions, type Interceptor, type Transport } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
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
import { Health } from "@payments/contracts/health";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

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

const H2_PREFACE = "PRI * HTTP/2.0";

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
  let handler: Handler = (req, res) => {
    if (probe(req, res)) return;
    res.writeHead(503, { "content-type": "text/plain" });
    res.end("starting");
  };
  let served: RpcHandlers | undefined;
  let closing = false;
  /** /livez and /readyz, on any protocol, before and after serve(). */
  const probe = (req: { method?: string; url?: string }, res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown }): boolean => {
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
    if (!served || closing) {
      answer(503, { status: "NOT_READY", checks: { server: closing ? "shutting down" : "starting" } });
      return true;
    }
    readiness
      .evaluate()
      .then((report) => answer(report.ready ? 200 : 503, { status: report.ready ? "READY" : "NOT_READY", checks: report.checks }))
      .catch(() => answer(503, { status: "NOT_READY" }));
    return true;
  };
  const dispatch: Handler = (req, res) => handler(req, res);
  const h2 = http2.createServer({}, dispatch as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const h1 = http.createServer(dispatch as http.RequestListener);
  h1.keepAliveTimeout = 5000;
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  let server: net.Server;
  if (options.tls) {
    const { cert, key, clientCa } = options.tls;
    const secure = tls.createServer({
      cert,
      key,
      minVersion: "TLSv1.2",
      ALPNProtocols: ["h2", "http/1.1"],
      handshakeTimeout: 10_000,
      ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: true } : {}),
    });
    secure.on("connection", track);
    secure.on("secureConnection", (socket: tls.TLSSocket) => {
      track(socket);
      (socket.alpnProtocol === "h2" ? h2 : h1).emit("connection", socket);
    });
    // Plaintext callers and missing client certificates fail the handshake; a client
    // certificate from another CA is cut off right after it (Node's rejectUnauthorized),
    // before a byte of a request is read.
    secure.on("tlsClientError", (err, socket) => {
      options.logger.debug({ err: err.message, remote: socket.remoteAddress }, "TLS handshake refused");
    });
    server = secure;
  } else {
    server = net.createServer((socket) => {
      track(socket);
      socket.once("data", (chunk) => {
        socket.pause();
        socket.unshift(chunk);
        const target = chunk.toString("latin1", 0, H2_PREFACE.length) === H2_PREFACE ? h2 : h1;
        target.emit("connection", socket);
        process.nextTick(() => socket.resume());
      });
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const scheme = options.tls ? "https" : "http";

  // In-process calls: refused before serve() and from close() on, like the port; unary
  // calls in flight are waited for on close, and the shutdown signal ends the rest.
  let readinessTimer: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const shutdown = new AbortController();
  const inProcess = new Map<string, Transport>();
  const delegate = (options: TransportOptions): Transport => {
    let routed: Transport | undefined;
    const target = (): Transport => {
      if (closing) throw new ConnectError("the server is shutting down", Code.Unavailable);
      if (!served) throw new ConnectError("the server is starting", Code.Unavailable);
      routed ??= createInProcessTransport(served, { ...options, shutdownSignal: shutdown.signal });
      return routed;
    };
    return {
      async unary(method, signal, timeoutMs, header, input, contextValues) {
        const transport = target();
        inFlight++;
        try {
          return await transport.unary(method, signal, timeoutMs, header, input, contextValues);
        } finally {
          if (--inFlight === 0) drained?.();
        }
      },
      async stream(method, signal, timeoutMs, header, input, contextValues) {
        return target().stream(method, signal, timeoutMs, header, input, contextValues);
      },
    };
  };

  return {
    port: address.port,
    url: `${scheme}://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
    health,
    readiness,
    inProcessTransport(options = {}) {
      if (options.interceptors && options.interceptors.length > 0) return delegate(options);
      const key = `${options.token ?? ""}|${options.timeoutMs ?? ""}|${metricsKey(options.metrics)}`;
      let transport = inProcess.get(key);
      if (!transport) {
        transport = delegate({ token: options.token, timeoutMs: options.timeoutMs, metrics: options.metrics });
        inProcess.set(key, transport);
      }
      return transport;
    },
    serve(serveOptions) {
      for (const s of serveOptions.services) health.register(s.typeName);
      const handlers = rpcHandlers(serveOptions, health);
      const adapter = connectNodeAdapter({
        routes: handlers.routes,
        ...handlers.options,
        fallback(req, res) {
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
                const ok = health.get("") === 1;
                res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
                res.end(JSON.stringify({ status: ok ? "SERVING" : "NOT_SERVING" }));
              });
            return;
          }
          if (probe(req, res)) return;
          if (serveOptions.http && serveHttpRoute(serveOptions.http, req, res, serveOptions.logger)) return;
          res.writeHead(404, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: "not_found", message: "no such procedure" }));
        },
      });
      handler = adapter as Handler;
      served = handlers;
      // Keeps grpc.health.v1 statuses (and Watch) current between probes.
      void readiness.evaluate();
      readinessTimer = setInterval(() => void readiness.evaluate().catch(() => undefined), 1000);
      readinessTimer.unref();
    },
    async close(graceMs = 10_000) {
      readiness.setDraining();
      clearInterval(readinessTimer);
      health.setAll(false);
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const inProcessDone = new Promise<void>((resolve) => {
        drained = resolve;
        if (inFlight === 0) resolve();
      });
      h1.closeIdleConnections();
      for (const session of sessions) session.close();
      let gaveUp: () => void = () => undefined;
      const graceOver = new Promise<void>((resolve) => (gaveUp = resolve));
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
        gaveUp();
      }, graceMs);
      timer.unref();
      await Promise.all([closed, Promise.race([inProcessDone, graceOver])]);
      clearTimeout(timer);
      // Ends what is still running in process (health watches, calls past the grace).
      shutdown.abort(new ConnectError("the server is shutting down", Code.Unavailable));
    },
  };
}
