import { connect, createServer, type AddressInfo, type Socket } from "node:net";

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** Waits until 127.0.0.1:port accepts connections, or fails after timeoutMs. */
export async function waitForPort(port: number, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await acceptsConnections(port))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What a test gives countingRelay to close it at the end (ava's `t`). */
export interface Teardowns {
  teardown(fn: () => unknown): void;
}

/** A TCP relay on 127.0.0.1 to `target` (a URL) that counts the connections it accepted; closed, with its connections, at `t`'s teardown. */
export async function countingRelay(t: Teardowns, target: string): Promise<{ url: string; connections: () => number }> {
  const { hostname, port } = new URL(target);
  let connections = 0;
  const sockets = new Set<Socket>();
  const relay = createServer((socket) => {
    connections++;
    const upstream = connect(Number(port), hostname);
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => relay.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, connections: () => connections };
}
