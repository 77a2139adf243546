import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import type { ServerTlsOptions } from "./internal-tls.js";
import type { Logger } from "./logger.js";
import type { ListenRpcOptions } from "./rpc-server.js";

/** A request handler either server (HTTP/2 or HTTP/1.1) calls. */
export type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

const H2_PREFACE = "PRI * HTTP/2.0";

/** The one port of an RPC server, bound: where it is, and how it stops. */
export interface RpcPort {
  readonly port: number;
  readonly url: string;
  /**
   * Stops accepting, closes idle connections and HTTP/2 sessions, and waits for the
   * connections to end and for `inProcessDone`; after graceMs it destroys the sockets
   * still open and waits no longer for `inProcessDone`.
   */
  close(graceMs: number, inProcessDone: Promise<void>): Promise<void>;
}

/**
 * Binds the port and hands every request, HTTP/2 or HTTP/1.1, to `dispatch`. Cleartext: the
 * first bytes of each connection pick the protocol (the HTTP/2 preface or not). TLS: ALPN
 * picks it (`h2`, else HTTP/1.1); with a client CA the handshake refuses a peer without a
 * certificate signed by it.
 */
export async function openRpcPort(options: ListenRpcOptions, dispatch: Handler): Promise<RpcPort> {
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
  const server = options.tls ? tlsServer(options.tls, options.logger, { h1, h2, track }) : cleartextServer({ h1, h2, track });
  await listen(server, options.port, options.host);
  const address = server.address() as net.AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const scheme = options.tls ? "https" : "http";
  return {
    port: address.port,
    url: `${scheme}://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
    async close(graceMs, inProcessDone) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
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
    },
  };
}

/** The two protocol servers a connection is handed to, and what keeps count of the sockets. */
interface Protocols {
  h1: http.Server;
  h2: http2.Http2Server;
  track: (socket: net.Socket) => void;
}

function tlsServer({ cert, key, clientCa }: ServerTlsOptions, logger: Logger, { h1, h2, track }: Protocols): net.Server {
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
    logger.debug({ err: err.message, remote: socket.remoteAddress }, "TLS handshake refused");
  });
  return secure;
}

function cleartextServer({ h1, h2, track }: Protocols): net.Server {
  return net.createServer((socket) => {
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

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
