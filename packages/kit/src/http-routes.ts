import type { IncomingHttpHeaders } from "node:http";
import { isDatabaseUnavailable } from "./db.js";
import type { Logger } from "./logger.js";

/**
 * Plain HTTP endpoints a service adds to its RPC port, next to gRPC/Connect, /metrics and the
 * probes: for callers that speak neither gRPC nor Connect (a bank's or an aggregator's push
 * of signed JSON). They sit behind the port's own protection only (loopback, TLS, mTLS), not
 * behind INTERNAL_API_TOKEN: each route authenticates its callers itself, and like the port
 * is meant for the internal network only.
 *
 * The kit reads the body (up to `maxBodyBytes`, else 413 and the handler never runs), hands
 * the exact bytes to the handler (what a signature covers), writes its JSON answer, and turns
 * a throw into 500 `{ "code": "INTERNAL" }`, logged here: no stack or SQL leaves the process.
 */
export interface HttpRoute {
  /** "POST", "GET", …: a request to the prefix with another method gets 405. */
  method: string;
  /** The path this route owns, and everything under it: "/internal/bank-feed/". */
  pathPrefix: string;
  /** The largest body read; a larger one is refused with 413 before the handler runs. Default 1 MiB. */
  maxBodyBytes?: number;
  handle(request: HttpRouteRequest): Promise<HttpRouteResponse> | HttpRouteResponse;
}

export interface HttpRouteRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  /** Lower-case names; a repeated header is joined with ", ". */
  headers: Readonly<Record<string, string | undefined>>;
  /** The body exactly as received. */
  rawBody: Buffer;
}

export interface HttpRouteResponse {
  status: number;
  /** Sent as JSON. */
  body: unknown;
  headers?: Record<string, string>;
}

export const DEFAULT_HTTP_BODY_LIMIT = 1024 * 1024;

/** What is used of an HTTP/1.1 or HTTP/2 request (node:http, node:http2 compat). */
interface Request {
  url?: string | undefined;
  method?: string | undefined;
  headers: IncomingHttpHeaders;
  httpVersionMajor: number;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
  resume(): unknown;
}

/** What is used of a response, either protocol. */
interface Response {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

function writeJson(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "cache-control": "no-store", "content-length": String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The body, or undefined once it grew past `limit` (the rest is then discarded, not kept). */
function readBody(req: Request, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}

function headersOf(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(":")) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * Serves `req` when one of `routes` owns its path; false otherwise (the caller answers 404).
 * The longest matching prefix wins.
 */
export function serveHttpRoute(routes: readonly HttpRoute[], req: Request, res: Response, logger: Logger): boolean {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const owners = routes.filter((r) => path.startsWith(r.pathPrefix)).sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
  if (owners.length === 0) return false;
  const method = (req.method ?? "GET").toUpperCase();
  const route = owners.find((r) => r.method.toUpperCase() === method);
  if (!route) {
    req.resume();
    writeJson(res, 405, { code: "METHOD_NOT_ALLOWED", message: `${method} is not allowed here` }, { allow: [...new Set(owners.map((r) => r.method.toUpperCase()))].join(", ") });
    return true;
  }
  const limit = route.maxBodyBytes ?? DEFAULT_HTTP_BODY_LIMIT;
  void (async () => {
    try {
      const rawBody = await readBody(req, limit);
      if (!rawBody) {
        writeJson(res, 413, { code: "PAYLOAD_TOO_LARGE", message: `the body must be at most ${limit} bytes` }, req.httpVersionMajor === 1 ? { connection: "close" } : {});
        return;
      }
      const answer = await route.handle({ method, path, headers: headersOf(req), rawBody });
      writeJson(res, answer.status, answer.body, answer.headers);
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // The database restarting: the sender retries later; nothing of ours broke.
        logger.warn({ err: { code: (err as { code?: string }).code }, method, path }, "HTTP route unavailable: the database cannot be reached");
        writeJson(res, 503, { code: "UNAVAILABLE", message: "the service's database is unavailable; retry later" }, { "retry-after": "5" });
        return;
      }
      logger.error({ err, method, path }, "HTTP route failed");
      writeJson(res, 500, { code: "INTERNAL", message: "internal error" });
    }
  })();
  return true;
}
