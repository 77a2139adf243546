import http from "node:http";
import type { ExecutionContext } from "ava";
import type { Clock } from "@payments/kit";
import { sign } from "@payments/signing";
import { checkOpenApiResponse } from "../../test/openapi-check.js";

/** The envelope as a test reads it. */
export interface Envelope {
  success: boolean;
  data?: Record<string, unknown>;
  error?: { code: string; message: string; details?: Record<string, string> };
  timestamp: number;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed body when it is JSON. */
  json: Envelope;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** Plain node:http, so a test controls every header and byte (a GET with a body, X-Forwarded-For, raw bytes). */
export function call(baseUrl: string, req: RawRequest): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.path, baseUrl);
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, "utf8");
    const request = http.request(
      url,
      {
        method: req.method ?? "GET",
        agent: false,
        headers: { ...(body ? { "Content-Length": String(body.length) } : {}), ...req.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json = {} as Envelope;
          try {
            // A reply that says JSON but is not must fail this call, not throw inside the listener.
            if (text !== "" && (res.headers["content-type"] ?? "").includes("json")) json = JSON.parse(text) as Envelope;
            // Every answer of a documented route must be one the OpenAPI document describes.
            checkOpenApiResponse(req.method ?? "GET", req.path, res.statusCode ?? 0, json, res.headers["content-type"]);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

export interface Credentials {
  apiKey: string;
  apiSecret: string;
}

/** The three authentication headers, at the (manual) clock's time shifted by offsetSeconds. */
export function authHeaders(
  credentials: Credentials,
  clock: Clock,
  request: { method: string; path: string; body?: string | Buffer },
  options: { offsetSeconds?: number; timestamp?: string } = {},
): Record<string, string> {
  const timestamp = options.timestamp ?? String(Math.floor(clock.now().getTime() / 1000) + (options.offsetSeconds ?? 0));
  return {
    "X-API-Key": credentials.apiKey,
    "X-Timestamp": timestamp,
    "X-Signature": sign(credentials.apiSecret, { timestamp, method: request.method, path: request.path, body: request.body ?? "" }),
  };
}

/** A correctly signed request, with optional extra headers. */
export function signedCall(baseUrl: string, credentials: Credentials, clock: Clock, req: RawRequest, options: { offsetSeconds?: number } = {}): Promise<Reply> {
  const method = req.method ?? "GET";
  return call(baseUrl, {
    ...req,
    method,
    headers: { ...authHeaders(credentials, clock, { method, path: req.path, body: req.body ?? "" }, options), ...req.headers },
  });
}

/** Every reply: the envelope of api.md, a request id, and nothing from inside (stack, SQL, driver text). */
export function checkReply(t: ExecutionContext, reply: Reply): Reply {
  t.regex(String(reply.headers["content-type"]), /^application\/json/, reply.text);
  t.truthy(reply.headers["x-request-id"]);
  t.is(typeof reply.json.success, "boolean");
  t.true(Number.isInteger(reply.json.timestamp));
  if (reply.json.success) {
    t.deepEqual(Object.keys(reply.json).sort(), ["data", "success", "timestamp"]);
  } else {
    t.deepEqual(Object.keys(reply.json).sort(), ["error", "success", "timestamp"]);
    t.is(typeof reply.json.error?.code, "string");
    t.true(typeof reply.json.error?.message === "string" && reply.json.error.message.length > 0);
  }
  t.notRegex(reply.text, /\bat .+:\d+:\d+|\.ts:\d+|node_modules|SELECT |INSERT |UPDATE .+ SET|(?<![\w-])(?:SQLITE|ER_[A-Z_]+|knex)/i, reply.text);
  return reply;
}
