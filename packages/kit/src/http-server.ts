import type http from "node:http";
import type { AddressInfo } from "node:net";

/** Listens on host:port and resolves with the port bound (the one chosen when port is 0); rejects if binding fails. */
export function listenHttp(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Stops accepting, lets requests in flight finish for up to graceMs, then cuts the connections
 * still open; idle keep-alive connections are closed at once so they do not hold the close.
 */
export function closeHttp(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** A URL that reaches a server bound to host:port from the same machine (a wildcard address is reached at 127.0.0.1). */
export function localHttpUrl(host: string, port: number): string {
  const local = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `http://${local.includes(":") ? `[${local}]` : local}:${port}`;
}
