import net from "node:net";

/**
 * A TCP round-robin balancer in front of a service's replicas, as a Kubernetes Service or
 * compose's DNS puts one: each new connection goes to the next replica; a replica that
 * refuses the connection is skipped. Long-lived connections (HTTP/2, keep-alive) stay on
 * the replica they reached until it goes away, as in production.
 */
export class Balancer {
  private next = 0;
  private readonly sockets = new Set<net.Socket>();
  private server?: net.Server;
  /** Connections no replica took. */
  refused = 0;

  constructor(
    readonly name: string,
    private readonly backends: readonly number[],
  ) {}

  async listen(port: number): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  }

  private accept(client: net.Socket): void {
    this.track(client);
    client.pause();
    const start = this.next++ % this.backends.length;
    const tryBackend = (tries: number) => {
      if (tries >= this.backends.length || client.destroyed) {
        this.refused++;
        client.destroy();
        return;
      }
      const port = this.backends[(start + tries) % this.backends.length]!;
      const upstream = net.connect({ port, host: "127.0.0.1" });
      this.track(upstream);
      let connected = false;
      upstream.once("connect", () => {
        connected = true;
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on("error", () => {
        if (!connected) tryBackend(tries + 1);
        else client.destroy();
      });
      upstream.on("close", () => {
        if (connected) client.destroy();
      });
      client.on("error", () => upstream.destroy());
      client.on("close", () => upstream.destroy());
    };
    tryBackend(0);
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }

  /** Drops every open connection (the clients reconnect, maybe to another replica). */
  resetConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.resetConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
