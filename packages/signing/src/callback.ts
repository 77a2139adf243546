import { verify } from "./signing.js";

/**
 * Verification of the callbacks the gateway POSTs to a merchant (decisions.md, Callbacks):
 * headers X-Event-Id, X-Event-Type, X-Timestamp, X-Signature; the signature is the request
 * scheme, `sign(secret, { timestamp, method: "POST", path, body })`, with `path` the path
 * and query of the callback URL and `body` the exact bytes sent.
 */

/** Every event type a merchant can receive, in the order of decisions.md. */
export const CALLBACK_EVENT_TYPES = [
  "deposit.completed",
  "deposit.failed",
  "deposit.expired",
  "deposit.cancelled",
  "withdrawal.processing",
  "withdrawal.completed",
  "withdrawal.failed",
  "withdrawal.cancelled",
] as const;

export type CallbackEventType = (typeof CALLBACK_EVENT_TYPES)[number];

/** Whether a string is one of the event types this version of the package knows. */
export function isCallbackEventType(type: string): type is CallbackEventType {
  return (CALLBACK_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * The transaction record a callback carries: the same record the API answers reads with
 * (a deposit or a withdrawal). Only the fields every record has are typed here.
 */
export type CallbackData = Record<string, unknown> & {
  transactionId: string;
  /** Grows with every change of this transaction: a callback with a smaller one than you have seen is stale. */
  sequence: number;
  status: string;
};

/** The JSON body of a callback. `id` is the X-Event-Id, `type` the X-Event-Type. */
export interface CallbackEvent {
  /** The event id, stable across redeliveries of the same event: de-duplicate on it. */
  id: string;
  /**
   * One of {@link CALLBACK_EVENT_TYPES}. A later gateway may add types; a correctly signed
   * callback of a type this package does not know still verifies (see {@link isCallbackEventType}).
   */
  type: CallbackEventType | (string & {});
  /** When the status changed, ISO 8601 UTC. */
  createdAt: string;
  data: CallbackData;
}

/** Why a callback was refused. */
export type CallbackRefusalReason =
  /** X-Event-Id, X-Event-Type, X-Timestamp or X-Signature is absent or empty. */
  | "MISSING_HEADER"
  /** X-Timestamp is not whole Unix seconds (digits only). */
  | "INVALID_TIMESTAMP"
  /** X-Timestamp is further than the tolerance from now, in the past or the future. */
  | "TIMESTAMP_OUT_OF_TOLERANCE"
  /** X-Signature is malformed or matches none of the secrets (wrong secret, changed body, other path). */
  | "INVALID_SIGNATURE"
  /** The signed body is not a JSON object of the callback's shape. */
  | "INVALID_BODY"
  /** The body's `id` or `type` differs from X-Event-Id or X-Event-Type. */
  | "EVENT_MISMATCH";

export const CALLBACK_REFUSAL_REASONS = [
  "MISSING_HEADER",
  "INVALID_TIMESTAMP",
  "TIMESTAMP_OUT_OF_TOLERANCE",
  "INVALID_SIGNATURE",
  "INVALID_BODY",
  "EVENT_MISMATCH",
] as const satisfies readonly CallbackRefusalReason[];

export type CallbackVerificationResult =
  | { ok: true; event: CallbackEvent }
  | { ok: false; reason: CallbackRefusalReason; message: string };

/** A WHATWG `Headers` (fetch, undici, Web frameworks), or anything with the same `get`. */
export interface HeadersLike {
  get(name: string): string | null;
}

/** Node's `IncomingMessage.headers` shape; keys in any case. */
export type HeadersRecord = { readonly [name: string]: string | readonly string[] | undefined };

export interface VerifyCallbackOptions {
  /** The merchant's API secret, or several while rotating: the callback verifies if one matches. */
  secrets: string | readonly string[];
  /** The request headers: a plain object (Node's `req.headers`, any key case) or a `Headers`. */
  headers: HeadersLike | HeadersRecord;
  /** The raw body exactly as received. Never a parsed and re-serialised object. */
  body: Uint8Array | ArrayBuffer | string;
  /** The path with query the callback was sent to, as received: `req.url` in Node, e.g. "/payments/callback?shop=1". */
  path: string;
  /** How far X-Timestamp may be from now, either way. Default 300. */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date;
}

export const DEFAULT_CALLBACK_TOLERANCE_SECONDS = 300;

const UNIX_SECONDS = /^\d{1,15}$/;

function headerReader(headers: HeadersLike | HeadersRecord): (name: string) => string | undefined {
  if (typeof (headers as HeadersLike).get === "function") {
    const like = headers as HeadersLike;
    return (name) => like.get(name) ?? undefined;
  }
  const record = headers as HeadersRecord;
  return (name) => {
    // Keys may be in any case; values of repeated keys or arrays are joined as Node and fetch join them.
    const values: string[] = [];
    for (const key of Object.keys(record)) {
      if (key.toLowerCase() !== name) continue;
      const value = record[key];
      if (typeof value === "string") values.push(value);
      else if (Array.isArray(value)) values.push(...value.filter((v): v is string => typeof v === "string"));
    }
    return values.length === 0 ? undefined : values.join(", ");
  };
}

function refuse(reason: CallbackRefusalReason, message: string): CallbackVerificationResult {
  return { ok: false, reason, message };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkArguments(options: VerifyCallbackOptions): { secrets: readonly string[]; body: Uint8Array | string; tolerance: number; now: Date } {
  if (!isObject(options)) throw new TypeError("verifyCallback: pass an options object { secrets, headers, body, path }");
  const secrets = typeof options.secrets === "string" ? [options.secrets] : options.secrets;
  if (!Array.isArray(secrets) || secrets.length === 0) throw new TypeError("verifyCallback: secrets must be a non-empty string or a non-empty array of them");
  if (!secrets.every((s) => typeof s === "string" && s.length > 0)) throw new TypeError("verifyCallback: every secret must be a non-empty string");
  if (!isObject(options.headers) && typeof (options.headers as HeadersLike | undefined)?.get !== "function") {
    throw new TypeError("verifyCallback: headers must be the request's headers (req.headers or a Headers)");
  }
  const raw: unknown = options.body;
  let body: Uint8Array | string;
  if (typeof raw === "string" || raw instanceof Uint8Array) body = raw;
  else if (raw instanceof ArrayBuffer) body = new Uint8Array(raw);
  else if (raw === undefined || raw === null || (isObject(raw) && Object.keys(raw).length === 0)) {
    // What body parsers leave for a request without a body, or with a content type they skip
    // (Express: `{}` or undefined). The request decides that, so it is an empty body, not a
    // wrong call; no callback has one, and its signature will not match.
    body = "";
  } else {
    throw new TypeError(
      "verifyCallback: body must be the raw body (Buffer, Uint8Array, ArrayBuffer or string) exactly as received; " +
        "a parsed body cannot be verified (with Express use express.raw({ type: 'application/json' }), not express.json())",
    );
  }
  if (typeof options.path !== "string") throw new TypeError("verifyCallback: path must be the path with query as received, e.g. req.url");
  const tolerance = options.toleranceSeconds ?? DEFAULT_CALLBACK_TOLERANCE_SECONDS;
  if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance < 0) throw new TypeError("verifyCallback: toleranceSeconds must be a non-negative number");
  const now = options.now ?? new Date();
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError("verifyCallback: now must be a valid Date");
  return { secrets, body, tolerance, now };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function parseEvent(body: Uint8Array | string): CallbackEvent | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === "string" ? body : utf8.decode(body));
  } catch {
    return "the body is not JSON";
  }
  if (!isObject(parsed)) return "the body is not a JSON object";
  const { id, type, createdAt, data } = parsed;
  if (typeof id !== "string" || id === "") return "the body has no id";
  if (typeof type !== "string" || type === "") return "the body has no type";
  if (typeof createdAt !== "string") return "the body has no createdAt";
  if (!isObject(data)) return "the body has no data object";
  if (typeof data.transactionId !== "string") return "data has no transactionId";
  if (typeof data.status !== "string") return "data has no status";
  if (typeof data.sequence !== "number" || !Number.isSafeInteger(data.sequence)) return "data has no integer sequence";
  return parsed as unknown as CallbackEvent;
}

/**
 * Verifies a callback from the payments gateway: the four headers are present, X-Timestamp
 * is within the tolerance of now, X-Signature matches one of the secrets (constant time)
 * over the exact body and path, and the body is a callback whose id and type are the
 * headers'. Never throws for anything the request carries; throws a TypeError only for a
 * wrong call (no secret, a parsed body, no headers).
 */
export function verifyCallback(options: VerifyCallbackOptions): CallbackVerificationResult {
  const { secrets, body, tolerance, now } = checkArguments(options);
  const header = headerReader(options.headers);

  const eventId = header("x-event-id");
  const eventType = header("x-event-type");
  const timestamp = header("x-timestamp");
  const signature = header("x-signature");
  const missing = (
    [
      ["X-Event-Id", eventId],
      ["X-Event-Type", eventType],
      ["X-Timestamp", timestamp],
      ["X-Signature", signature],
    ] as const
  )
    .filter(([, value]) => value === undefined || value.trim() === "")
    .map(([name]) => name);
  if (missing.length > 0 || eventId === undefined || eventType === undefined || timestamp === undefined || signature === undefined) {
    return refuse("MISSING_HEADER", `missing header${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  }

  if (!UNIX_SECONDS.test(timestamp)) return refuse("INVALID_TIMESTAMP", "X-Timestamp must be whole Unix seconds");
  const skew = Number(timestamp) - Math.floor(now.getTime() / 1000);
  if (Math.abs(skew) > tolerance) {
    return refuse(
      "TIMESTAMP_OUT_OF_TOLERANCE",
      `X-Timestamp is ${Math.abs(skew)} s ${skew < 0 ? "in the past" : "in the future"}, more than the tolerance of ${tolerance} s (a replay, or a clock out of sync)`,
    );
  }

  if (!verify(secrets, { timestamp, method: "POST", path: options.path, body }, signature.trim())) {
    const hint = body.length === 0 ? " (the body is empty: pass the raw body as received)" : " (pass the raw body bytes and the path with query, e.g. req.url)";
    return refuse("INVALID_SIGNATURE", `X-Signature does not match: wrong secret, or the body or path is not exactly what was sent${hint}`);
  }

  const event = parseEvent(body);
  if (typeof event === "string") return refuse("INVALID_BODY", event);
  if (event.id !== eventId) return refuse("EVENT_MISMATCH", "the body's id is not X-Event-Id");
  if (event.type !== eventType) return refuse("EVENT_MISMATCH", "the body's type is not X-Event-Type");
  return { ok: true, event };
}
