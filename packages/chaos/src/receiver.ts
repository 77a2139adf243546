import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { verifyCallback } from "@payments/signing";

/** How the merchant's endpoint answers right now. */
export type ReceiverMode = "ok" | "slow" | "error" | "down";

/** One callback as it arrived. */
export interface Arrival {
  eventId: string;
  type: string;
  transactionId: string;
  status: string;
  sequence: number;
  /** Date.now() at arrival. */
  at: number;
  /** What the receiver answered (0: it hung up / was slow past the sender's timeout is not known here). */
  answered: number;
}

/**
 * The merchants' callback endpoint, sometimes slow, sometimes 500, sometimes down. Every
 * request is verified with the merchant's API secret (X-Signature) before it counts; it notes
 * each arrival (event id, transaction, status, sequence) whatever it answers.
 */
export class MerchantReceiver {
  mode: ReceiverMode = "ok";
  /** How long a "slow" answer takes (ms), longer than the sender's timeout on purpose at times. */
  slowMs = 3_000;
  readonly arrivals: Arrival[] = [];
  badSignatures = 0;
  malformed = 0;
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  /** `secretOf(shop)`: the API secret of the merchant whose callback URL ends in `?shop=<shop>`. */
  constructor(private readonly secretOf: (shop: string) => string | undefined) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/merchant/callbacks`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
  }

  /** Down: the port refuses connections until `up()`. */
  async down(): Promise<void> {
    this.mode = "down";
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async up(): Promise<void> {
    this.mode = "ok";
    if (!this.server) await this.start();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const mode = this.mode;
      const answer = mode === "error" ? 500 : 200;
      let parsed: { id?: string; type?: string; data?: { transactionId?: string; status?: string; sequence?: number; merchantId?: string } } | undefined;
      try {
        parsed = JSON.parse(body.toString("utf8")) as typeof parsed;
      } catch {
        this.malformed++;
      }
      const shop = new URL(req.url ?? "/", "http://x").searchParams.get("shop") ?? "";
      const secret = this.secretOf(shop);
      const verified = secret ? verifyCallback({ secrets: secret, headers: req.headers, body, path: req.url ?? "/" }) : { ok: false };
      if (!verified.ok) this.badSignatures++;
      if (parsed?.id && verified.ok) {
        this.arrivals.push({
          eventId: parsed.id,
          type: parsed.type ?? "",
          transactionId: parsed.data?.transactionId ?? "",
          status: parsed.data?.status ?? "",
          sequence: Number(parsed.data?.sequence ?? 0),
          at: Date.now(),
          answered: answer,
        });
      }
      const send = () => {
        if (!res.writableEnded) res.writeHead(answer, { "content-type": "application/json" }).end("{}");
      };
      if (mode === "slow") setTimeout(send, this.slowMs);
      else send();
    });
  }

  async close(): Promise<void> {
    await this.down();
  }
}
