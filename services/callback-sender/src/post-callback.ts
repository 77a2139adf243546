import { Agent, request } from "undici";
import { AddressRefused, checkLiteralHost, guardedLookup, markSpanError, SpanKind, withSpan } from "@payments/kit";
import { parseRetryAfter } from "./retry-schedule.js";

/** One HTTP POST of a callback and what came of it. Never throws for the merchant's side of things. */
export interface CallbackPoster {
  post(attempt: PostRequest): Promise<PostResult>;
  close(): Promise<void>;
}

export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Bytes of the response body to hand back as `body`, whatever the status (SendTestEvent); unset: none kept. */
  keepBody?: number;
}

export interface PostResult {
  /** A 2xx status arrived within the timeout. */
  delivered: boolean;
  /** The HTTP status; 0 when no answer arrived. */
  statusCode: number;
  /** From sending to the status line, or to the failure. */
  latencyMs: number;
  /** Why it is not delivered: "HTTP 500: <trimmed body>", a timeout, a refused address, ... */
  error: string;
  /** What Retry-After asked for, in ms. */
  retryAfterMs?: number;
  /** The first `keepBody` bytes of the response body as UTF-8 text, when the request asked for them. */
  body?: string;
}

export interface PosterOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** How much of an error response's body is read (and kept as the attempt's error). */
  responseLimit?: number;
  /** For Retry-After dates. */
  now?: () => number;
}

/** Bytes of a response body worth keeping as an attempt's error text. */
export const RESPONSE_LIMIT = 1024;
/** The error column's length. */
export const ERROR_MAX_LENGTH = 500;

function trimmed(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > ERROR_MAX_LENGTH ? `${flat.slice(0, ERROR_MAX_LENGTH - 1)}…` : flat;
}

/** The first cause in an error chain that says what went wrong on the wire. */
function describeFailure(err: unknown, timeoutMs: number): string {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    if (current instanceof AddressRefused || current.name === "AddressRefused") return current.message;
    const code = (current as { code?: unknown }).code;
    if (current.name === "TimeoutError" || current.name === "AbortError" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_CONNECT_TIMEOUT") {
      return `no answer within ${timeoutMs} ms`;
    }
    if (typeof code === "string" && code.startsWith("E")) return `${current.message} (${code})`;
    current = (current as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Reads at most `limit` bytes of a body, then drops the rest: a merchant endpoint that
 * answers with megabytes (or never ends its body) costs us `limit` bytes, not memory.
 */
async function readSome(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // A body cut short still says what it said so far.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/**
 * The real poster: undici with no redirects followed (a 3xx is an answer, not a place to
 * go), every connection's addresses checked by the address policy, and the whole attempt
 * bounded by the timeout.
 */
export function createCallbackPoster(options: PosterOptions): CallbackPoster {
  const limit = options.responseLimit ?? RESPONSE_LIMIT;
  const now = options.now ?? Date.now;
  const agent = new Agent({
    connect: { lookup: guardedLookup(options.allowPrivate), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4_000,
    // Per origin; the sender's own limits keep the number of attempts in flight lower.
    connections: 16,
  });

  return {
    // One CLIENT span per POST, in the trace the attempt runs in (sender.ts). No traceparent
    // goes to the merchant: trace ids are internal and their endpoint is not ours.
    post(request) {
      return withSpan("callback POST", { kind: SpanKind.CLIENT, attributes: { "http.request.method": "POST" } }, async (span) => {
        const result = await postOnce(request);
        span.setAttribute("http.response.status_code", result.statusCode);
        if (!result.delivered) markSpanError(span, result.error);
        return result;
      });
    },
    async close() {
      await agent.close();
    },
  };

  async function postOnce({ url, headers, body, keepBody }: PostRequest): Promise<PostResult> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let target: URL;
      try {
        target = new URL(url);
        checkLiteralHost(target, options.allowPrivate);
      } catch (err) {
        return { delivered: false, statusCode: 0, latencyMs: 0, error: trimmed(describeFailure(err, options.timeoutMs)) };
      }
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        const response = await request(target, { method: "POST", headers, body, dispatcher: agent, signal });
        const latencyMs = elapsed();
        const statusCode = response.statusCode;
        // Cutting a body short makes the stream error; that is expected, not a fault.
        response.body.on("error", () => {});
        const kept = keepBody === undefined ? {} : { body: "" };
        if (statusCode >= 200 && statusCode < 300) {
          if (keepBody !== undefined) return { delivered: true, statusCode, latencyMs, error: "", body: (await readSome(response.body, keepBody)).toString("utf8") };
          // A success's body is not read: dump keeps the connection reusable when it is short.
          await response.body.dump({ limit: limit }).catch(() => {});
          return { delivered: true, statusCode, latencyMs, error: "" };
        }
        const header = response.headers["retry-after"];
        const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, now());
        const read = await readSome(response.body, Math.max(limit, keepBody ?? 0));
        if (keepBody !== undefined) kept.body = read.subarray(0, keepBody).toString("utf8");
        const text = read.subarray(0, limit).toString("utf8");
        return { delivered: false, statusCode, latencyMs, error: trimmed(`HTTP ${statusCode}: ${text}`).replace(/:$/, ""), retryAfterMs, ...kept };
      } catch (err) {
        return { delivered: false, statusCode: 0, latencyMs: elapsed(), error: trimmed(describeFailure(err, options.timeoutMs)) };
      }
  }
}
