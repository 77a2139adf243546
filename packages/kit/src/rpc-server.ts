import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { HealthRegistry } from "./health.js";
import type { ServerTlsOptions } from "./internal-tls.js";
import { bearerAuthInterceptor, errorInterceptor, requestIdInterceptor } from "./interceptors.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import { reflectionRoutes } from "./reflection.js";
import { Health } from "@payments/contracts/health";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface RpcServeOptions {
  routes: (router: ConnectRouter) => void;
  /** The services the routes register; they are listed by reflection and health. */
  services: readonly DescService[];
  logger: Logger;
  metrics: Metrics;
  internalToken?: string;
  interceptors?: Interceptor[];
}

export interface RpcServer {
  readonly port: number;
  readonly url: string;
  readonly health: HealthRegistry;
  /** Installs the handlers; calls that arrive before this get UNAVAILABLE. */
  serve(options: RpcServeOptions): void;
  /** Stops accepting, lets calls in flight finish (up to graceMs), then closes. */
  close(graceMs?: number): Promise<void>;
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
 * and gRPC-Web from browsers and curl, /metrics and /healthz for probes).
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
  let handler: Handler = (_req, res) => {
    res.writeHead(503, { "content-type": "text/plain" });
    res.end("starting");
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

  return {
    port: address.port,
    url: `${scheme}://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
    health,
    serve(serveOptions) {
      const registered = [...serveOptions.services];
      for (const s of registered) health.register(s.typeName);
      const adapter = connectNodeAdapter({
        routes(router) {
          serveOptions.routes(router);
          health.routes(router);
          reflectionRoutes(router, [...registered, Health]);
        },
        interceptors: [
          requestIdInterceptor(),
          errorInterceptor(serveOptions.logger, serveOptions.metrics),
          bearerAuthInterceptor(serveOptions.internalToken),
          ...(serveOptions.interceptors ?? []),
        ],
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
            const ok = health.get("") === 1;
            res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
            res.end(JSON.stringify({ status: ok ? "SERVING" : "NOT_SERVING" }));
            return;
          }
          res.writeHead(404, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: "not_found", message: "no such procedure" }));
        },
      });
      handler = adapter as Handler;
    },
    async close(graceMs = 10_000) {
      health.setAll(false);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      h1.closeIdleConnections();
      for (const session of sessions) session.close();
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
  };
}
