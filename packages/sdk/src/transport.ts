import { signedHeaders } from "@payments/signing";
import { PaymentsError, failureOf } from "./errors.js";
import { DEFAULT_RETRY_POLICY, isRetryableStatus, retryDelay, type RetryPolicy } from "./retry.js";

/** The fetch the client calls: Node's global one by default, or any compatible function (a proxy agent, a test double). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  fetch?: FetchLike | undefined;
  maxRetries?: number | undefined;
  timeoutMs?: number | undefined;
  retryBaseDelayMs?: number | undefined;
  retryMaxDelayMs?: number | undefined;
}

/** Query values a listing takes; undefined ones are left out. */
export type QueryValues = Readonly<Record<string, string | number | boolean | undefined | null>>;

export interface RequestSpec {
  method: "GET" | "POST";
  /** Path from the API root, e.g. "/v1/deposit"; ids already encoded. */
  path: string;
  query?: QueryValues | undefined;
  /** JSON body of a POST; none for GET and for the action POSTs (cancel, redeliver). */
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** A download (GET /v1/statement?format=csv): a success is this media type, answered as its text; failures are still the JSON envelope. */
  text?: "text/csv" | undefined;
  /** A file download (GET /v1/statement?format=csv|xlsx): a success that is not JSON is answered as its bytes (a Download); failures are still the JSON envelope. */
  download?: true | undefined;
}

/** A file the gateway sent as an attachment, byte for byte. */
export interface Download {
  /** The name from Content-Disposition (`statement-TRY-2026-11-01-2026-11-30.xlsx`); "" when the gateway named none. */
  fileName: string;
  /** The media type, e.g. `text/csv; charset=utf-8`. */
  contentType: string;
  /** The file as sent: a CSV's byte-order mark included. */
  bytes: Uint8Array;
}

export interface Answer<T> {
  data: T;
  status: number;
  requestId: string | undefined;
  /** How many attempts were made, 1 when the first one answered. */
  attempts: number;
}

/** `?a=1&b=x` of the defined values, or "". The same text is signed and sent. */
export function queryString(query: QueryValues | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the caller's own abort reason, as is (as fetch rejects with it, and the client documents): abort("x") makes it a string
    const abort = () => reject(signal?.reason);
    if (signal?.aborted) return abort();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), abort()), { once: true });
  });

/**
 * Signs, sends and retries one API call, and unwraps the envelope. Each attempt is signed
 * afresh: a retry after a long Retry-After would otherwise carry a timestamp near the end of
 * the gateway's 5-minute window.
 */
export class Transport {
  readonly #origin: string;
  readonly #prefix: string;
  readonly #credentials: { apiKey: string; apiSecret: string };
  readonly #fetch: FetchLike;
  readonly #policy: RetryPolicy;
  readonly #timeoutMs: number;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError("PaymentsClient needs a baseUrl, e.g. https://api.example.com");
    if (!options.apiKey || !options.apiSecret) throw new TypeError("PaymentsClient needs an apiKey and an apiSecret");
    const base = new URL(options.baseUrl);
    this.#origin = base.origin;
    // A base URL with a path (https://host/payments) is kept: that full path is what is sent and signed.
    this.#prefix = base.pathname.replace(/\/+$/, "");
    this.#credentials = { apiKey: options.apiKey, apiSecret: options.apiSecret };
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== "function") throw new TypeError("no fetch: use Node 20+ or pass options.fetch");
    this.#fetch = fetchFn;
    this.#policy = {
      maxRetries: Math.max(0, Math.floor(options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries)),
      baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
      maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    };
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  async request<T>(spec: RequestSpec): Promise<Answer<T>> {
    const path = `${this.#prefix}${spec.path}${queryString(spec.query)}`;
    const body = spec.body === undefined ? "" : JSON.stringify(spec.body);
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = this.#policy.maxRetries - (attempt - 1);
      let response: Response;
      try {
        response = await this.#send(spec.method, path, body, spec.signal, spec.download ? "*/*" : spec.text);
      } catch (error) {
        // The caller's own abort is not a failure to retry.
        if (spec.signal?.aborted) throw spec.signal.reason;
        if (retriesLeft > 0) {
          await sleep(retryDelay(attempt - 1, undefined, this.#policy), spec.signal);
          continue;
        }
        throw networkError(error, spec.method, path, attempt);
      }
      if (isRetryableStatus(response.status) && retriesLeft > 0) {
        // Drain the body so the connection can be reused.
        await response.arrayBuffer().catch(() => undefined);
        await sleep(retryDelay(attempt - 1, response.headers.get("retry-after"), this.#policy), spec.signal);
        continue;
      }
      if (spec.download) return { ...(await unwrapDownload(response, attempt)), attempts: attempt } as Answer<T>;
      return { ...(await unwrap<T>(response, attempt, spec.text)), attempts: attempt };
    }
  }

  #send(method: string, path: string, body: string, signal: AbortSignal | undefined, text: string | undefined): Promise<Response> {
    const headers: Record<string, string> = {
      ...signedHeaders(this.#credentials, { method, path, body }),
      accept: text ? `${text}, application/json` : "application/json",
      ...(body ? { "content-type": "application/json" } : {}),
    };
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    return this.#fetch(`${this.#origin}${path}`, {
      method,
      headers,
      ...(body ? { body } : {}),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  }
}

function networkError(error: unknown, method: string, path: string, attempts: number): PaymentsError {
  const timedOut = error instanceof Error && (error.name === "TimeoutError" || (error as { cause?: { name?: string } }).cause?.name === "TimeoutError");
  const reason = error instanceof Error ? ((error as { cause?: Error }).cause?.message ?? error.message) : String(error);
  return new PaymentsError({
    status: 0,
    code: timedOut ? "TIMEOUT" : "NETWORK_ERROR",
    message: `${method} ${path}: ${timedOut ? "no answer in time" : reason} (${attempts} attempt${attempts === 1 ? "" : "s"})`,
    attempts,
    cause: error,
  });
}

/** The quoted `filename` of a Content-Disposition header, or "". */
function attachmentName(header: string | null): string {
  return /filename="([^"]*)"/.exec(header ?? "")?.[1] ?? "";
}

/** A successful non-JSON answer as the Download it is; anything else as unwrap reads it (an error envelope is a PaymentsError). */
async function unwrapDownload(response: Response, attempts: number): Promise<Omit<Answer<Download>, "attempts">> {
  const contentType = response.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.ok && mediaType !== "" && mediaType !== "application/json") {
    const download = { fileName: attachmentName(response.headers.get("content-disposition")), contentType, bytes };
    return { data: download, status: response.status, requestId: response.headers.get("x-request-id") ?? undefined };
  }
  return unwrap<Download>(response, attempts, undefined, new TextDecoder().decode(bytes));
}

/** The `data` of a success envelope, or the PaymentsError of anything else. */
async function unwrap<T>(response: Response, attempts: number, mediaType?: string, body?: string): Promise<Omit<Answer<T>, "attempts">> {
  const requestId = response.headers.get("x-request-id") ?? undefined;
  const text = body ?? (await response.text());
  const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (mediaType !== undefined && response.ok && contentType === mediaType) return { data: text as T, status: response.status, requestId };
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.ok && typeof json === "object" && json !== null && (json as { success?: unknown }).success === true) {
    return { data: (json as { data: T }).data, status: response.status, requestId };
  }
  const failure = failureOf(json);
  if (failure) return Promise.reject(new PaymentsError({ status: response.status, ...failure, requestId, attempts }));
  return Promise.reject(
    new PaymentsError({
      status: response.status,
      code: "INVALID_RESPONSE",
      message: `HTTP ${response.status} without the gateway's JSON envelope: ${text.slice(0, 200)}`,
      requestId,
      attempts,
    }),
  );
}
