import type { Command } from "commander";
import { signedHeaders } from "@payments/signing";
import type { CommandContext } from "../context.js";
import { CommandFailed, UnreachableError, UsageError } from "../errors.js";
import { localGatewayUrl } from "../local-addresses.js";

export const DEFAULT_GATEWAY_URL = "http://localhost:8080";
const REQUEST_TIMEOUT_MS = 30_000;
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]);

export interface MerchantRequest {
  method: string;
  /** Path with its query string, starting with "/". */
  path: string;
  /** Sent as is: the signature covers these exact bytes. */
  data?: string;
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
}

/** The URL and fetch options of a request signed the way the gateway verifies it. */
export function signedRequest(request: MerchantRequest, now?: Date): { url: URL; init: RequestInit & { headers: Record<string, string> } } {
  const method = request.method.toUpperCase();
  if (!METHODS.has(method)) throw new UsageError(`unsupported method "${request.method}": use one of ${[...METHODS].join(", ")}`);
  if (!request.path.startsWith("/")) throw new UsageError(`the path must start with "/", e.g. /v1/banks (got "${request.path}")`);
  let base: URL;
  try {
    base = new URL(request.baseUrl);
  } catch {
    throw new UsageError(`--base-url must be an http:// or https:// URL, got "${request.baseUrl}"`);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw new UsageError(`--base-url must be an http:// or https:// URL, got "${request.baseUrl}"`);
  const url = new URL(request.path, base);
  const hasBody = method !== "GET" && method !== "HEAD";
  if (!hasBody && request.data !== undefined) throw new UsageError(`a ${method} request has no body: drop --data`);
  const body = hasBody ? (request.data ?? "") : "";
  // Sign the path exactly as fetch will send it (URL parsing may percent-encode it).
  const headers = signedHeaders({ apiKey: request.apiKey, apiSecret: request.apiSecret }, { method, path: `${url.pathname}${url.search}`, body }, now);
  if (hasBody) headers["Content-Type"] = "application/json";
  return { url, init: { method, headers, ...(hasBody ? { body } : {}) } };
}

/** `error.code` and `error.message` of a failure envelope, when the body is one. */
function envelopeError(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
  const error = body.error;
  if (typeof error !== "object" || error === null) return undefined;
  const code = "code" in error && typeof error.code === "string" ? error.code : undefined;
  const message = "message" in error && typeof error.message === "string" ? error.message : undefined;
  return [code, message].filter((part) => part !== undefined).join(": ") || undefined;
}

function causeCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? err.cause : undefined;
  if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string") return cause.code;
  return undefined;
}

export function registerRequestCommand(program: Command, ctx: CommandContext): void {
  program
    .command("request")
    .description("send a signed request to the merchant API, as a merchant would, and print the response")
    .argument("<method>", "GET, POST, …")
    .argument("<path>", "path with query, e.g. /v1/banks or /v1/deposit?processId=o-1")
    .option("--data <json>", "request body, sent byte for byte (and signed as such)")
    .option("--api-key <key>", "the merchant's API key (default: $PAYMENTS_API_KEY)")
    .option("--api-secret <secret>", "the merchant's API secret (default: $PAYMENTS_API_SECRET)")
    .option("--base-url <url>", `gateway address (default: $GATEWAY_URL, else http://localhost:$PORT, ${DEFAULT_GATEWAY_URL} when PORT is unset)`)
    .addHelpText(
      "after",
      `
Examples:
  $ pnpm cli request GET /v1/banks --api-key KEY --api-secret SECRET
  $ pnpm cli request POST /v1/deposit --data '{"processId":"o-1","amount":15050}' --api-key KEY --api-secret SECRET

Prints the response body (pretty, after the status line; with --json the body alone).
Exits 1 when the response status is not 2xx.`,
    )
    .action(async (method: string, path: string, opts: { data?: string; apiKey?: string; apiSecret?: string; baseUrl?: string }, cmd: Command) => {
      const { io, out } = ctx.session(cmd);
      const apiKey = opts.apiKey ?? io.env.PAYMENTS_API_KEY;
      const apiSecret = opts.apiSecret ?? io.env.PAYMENTS_API_SECRET;
      if (!apiKey || !apiSecret) throw new UsageError("give the merchant's credentials: --api-key and --api-secret (or PAYMENTS_API_KEY and PAYMENTS_API_SECRET)");
      const baseUrl = opts.baseUrl ?? (io.env.GATEWAY_URL?.trim() || localGatewayUrl(io.env));
      const { url, init } = signedRequest({ method, path, data: opts.data, baseUrl, apiKey, apiSecret });

      let response: Response;
      try {
        response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      } catch (err) {
        if (err instanceof Error && err.name === "TimeoutError") throw new CommandFailed(`no response from ${url.origin} within ${REQUEST_TIMEOUT_MS / 1000}s`);
        throw new UnreachableError(url.origin, causeCode(err) ?? (err instanceof Error ? err.message : String(err)));
      }
      const text = await response.text();
      let body: unknown;
      let isJson = false;
      try {
        body = JSON.parse(text);
        isJson = true;
      } catch {
        body = text;
      }

      if (out.json) {
        if (isJson) out.data(body);
        else if (text !== "") out.line(text);
      } else {
        out.line(`HTTP ${response.status} ${response.statusText}`.trimEnd());
        const requestId = response.headers.get("x-request-id");
        if (requestId) out.line(`X-Request-Id: ${requestId}`);
        if (text !== "") out.line(isJson ? JSON.stringify(body, null, 2) : text);
      }
      if (!response.ok) {
        const reason = isJson ? envelopeError(body) : undefined;
        throw new CommandFailed(`HTTP ${response.status}${reason ? `: ${reason}` : ""}`);
      }
    });
}
