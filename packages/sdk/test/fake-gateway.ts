import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { verify } from "@payments/signing";

/** One request as the fake gateway saw it, with whether its signature checked out. */
export interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
  signatureOk: boolean;
}

export type Reply = (req: Seen, res: ServerResponse, index: number) => void;

export const SECRET = "sk_test_secret";
export const KEY = "pk_test_key";

/** JSON answer with an X-Request-Id, as the gateway sends. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_${status}`, ...headers }).end(JSON.stringify(body));
}

export const ok = (data: unknown) => ({ success: true, data, timestamp: Math.floor(Date.now() / 1000) });
export const failure = (code: string, message: string, details?: Record<string, unknown>) => ({
  success: false,
  error: details ? { code, message, details } : { code, message },
  timestamp: Math.floor(Date.now() / 1000),
});

/**
 * A tiny local gateway: answers the n-th request with replies[n] (the last one repeats), and
 * checks each signature the way the real gateway does, so tests use the real fetch and the
 * real signer, no mocks.
 */
export async function fakeGateway(replies: Reply[]) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const parts = { timestamp: String(req.headers["x-timestamp"] ?? ""), method: req.method ?? "", path: req.url ?? "", body };
      const entry: Seen = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
        at: Date.now(),
        signatureOk: req.headers["x-api-key"] === KEY && verify([SECRET], parts, String(req.headers["x-signature"] ?? "")),
      };
      seen.push(entry);
      const reply = replies[Math.min(seen.length - 1, replies.length - 1)]!;
      reply(entry, res, seen.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    seen,
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
