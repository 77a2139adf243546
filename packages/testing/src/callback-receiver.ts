import http from "node:http";
import type { AddressInfo } from "node:net";

// A merchant's callback endpoint on 127.0.0.1: records every signed callback as it arrived
// (raw body, headers, path with query) and answers as the test says.

export interface ReceivedCallback {
  /** Path with query, as the receiver saw it (what the signature covers). */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body. */
  body: Buffer;
  /** The body as UTF-8 text. */
  text: string;
  /** Date.now() when the request arrived. */
  at: number;
  /** Its X-Event-Id ("" without one). */
  eventId: string;
  /** The status it was answered with; undefined while it hangs. */
  status?: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** How the receiver answers a callback: given it and how many times its event arrived (this one included); "hang" never answers until released. */
export type AnswerPolicy = (callback: ReceivedCallback, arrival: number) => Answer | "hang";

export class CallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  private readonly arrivals = new Map<string, number>();
  private readonly hanging = new Set<http.ServerResponse>();
  private server?: http.Server;
  /** Requests being answered right now, and the most there were at once. */
  open = 0;
  maxOpen = 0;

  /** `policy`: 200 to everything unless told; a test may change it at any time. */
  constructor(public policy: AnswerPolicy = () => ({ status: 200 })) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const eventId = String(req.headers["x-event-id"] ?? "");
        const callback: ReceivedCallback = { path: req.url ?? "", headers: req.headers, body, text: body.toString("utf8"), at: Date.now(), eventId };
        this.received.push(callback);
        const arrival = (this.arrivals.get(eventId) ?? 0) + 1;
        this.arrivals.set(eventId, arrival);
        this.open++;
        this.maxOpen = Math.max(this.maxOpen, this.open);
        res.on("close", () => this.open--);
        const answer = this.policy(callback, arrival);
        if (answer === "hang") {
          this.hanging.add(res);
          return;
        }
        callback.status = answer.status;
        res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? "");
      });
    });
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return this;
  }

  /** The URL of `path` (with any query) on this receiver. */
  url(path = "/callbacks"): string {
    if (!this.server) throw new Error("the receiver is not started");
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** The callbacks of one event, in arrival order. */
  of(eventId: string): ReceivedCallback[] {
    return this.received.filter((c) => c.eventId === eventId);
  }

  /** The callbacks that reached one URL of this receiver (path and query), in arrival order. */
  to(url: string): ReceivedCallback[] {
    const { pathname, search } = new URL(url);
    return this.received.filter((c) => c.path === `${pathname}${search}`);
  }

  /** Answers every hanging request with 200 (their sender may have given up long ago). */
  release(): void {
    for (const res of this.hanging) if (!res.writableEnded) res.writeHead(200).end();
    this.hanging.clear();
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The receivers a test file starts as it goes, stopped together at its end. */
export class CallbackReceivers {
  private readonly started: CallbackReceiver[] = [];

  async start(policy?: AnswerPolicy): Promise<CallbackReceiver> {
    const receiver = await new CallbackReceiver(policy).start();
    this.started.push(receiver);
    return receiver;
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.started.splice(0).map((r) => r.stop()));
  }
}
