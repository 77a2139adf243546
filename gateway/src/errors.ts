import { Code } from "@connectrpc/connect";
import { errorInfo } from "@payments/kit";

/** A failure meant for the merchant: its HTTP status, public code, message and optional details. */
export class ApiError extends Error {
  override name = "ApiError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, string>,
    /** Response headers that belong to this failure (Allow, Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/**
 * Service reasons that are already public error codes, with their HTTP status. Later
 * resources add theirs here; a reason not listed never reaches a merchant.
 */
export const publicReasons: Readonly<Record<string, number>> = {
  DUPLICATE_TRANSACTION: 400,
  AMOUNT_OUT_OF_RANGE: 400,
  INVALID_IBAN: 400,
  INSUFFICIENT_BALANCE: 400,
  /** No receiving account of the merchant's kind (sandbox or live) is active for the chosen bank: nothing was stored. */
  BANK_UNAVAILABLE: 400,
  TRANSACTION_NOT_FOUND: 404,
  /** A move the transaction's current status does not allow (cancelling a completed deposit); details.status says where it is. */
  INVALID_TRANSACTION_STATE: 409,
  /** A sandbox helper (/v1/sandbox/…) called by a live merchant or on a live deposit: nothing changed. */
  SANDBOX_ONLY: 403,
  /** A callback event the merchant does not have (unknown, or another merchant's). */
  EVENT_NOT_FOUND: 404,
  /** A deposit or withdrawal asked for while the merchant switches between sandbox and live (seconds at most): nothing was created; retry. */
  MERCHANT_MODE_CHANGING: 409,
};

/** One thing wrong with a request: the merchant's field name (`customer.name`) and what is wrong with it. */
export interface Problem {
  field: string;
  problem: string;
}

/** 400 VALIDATION_ERROR naming every problem: `processId: is required; amount: is required`. */
export function validationFailure(problems: readonly Problem[]): ApiError {
  const message = problems.length === 0 ? "request: is invalid" : problems.map((p) => `${p.field}: ${p.problem}`).join("; ");
  return new ApiError(400, "VALIDATION_ERROR", message);
}

/**
 * 429 RATE_LIMITED with Retry-After: whole seconds (HTTP has no finer unit), rounded up and
 * at least 1, so a client that waits as told finds a token.
 */
export function rateLimited(retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError(429, "RATE_LIMITED", `Too many requests; retry after ${seconds} s`, undefined, { "Retry-After": String(seconds) });
}

export const INTERNAL_MESSAGE = "An unexpected error occurred. Quote the X-Request-Id header when contacting support.";

export interface MapOptions {
  /**
   * The merchant's JSON names of the request's fields, by proto field path
   * (`process_id` → `processId`). A path not listed is looked up by its first segment, so
   * `customer` → `customer` also renames `customer.name`. Unlisted paths stay as they are.
   */
  fields?: Readonly<Record<string, string>>;
}

/** The merchant's name of a proto field path, per `fields`. */
export function publicFieldName(field: string, fields: Readonly<Record<string, string>> = {}): string {
  if (Object.hasOwn(fields, field)) return fields[field]!;
  const dot = field.indexOf(".");
  if (dot > 0) {
    const head = field.slice(0, dot);
    if (Object.hasOwn(fields, head)) return `${fields[head]!}${field.slice(dot)}`;
  }
  return field;
}

function validationMessage(info: { field?: string; message: string }, fields: Readonly<Record<string, string>> | undefined): string {
  if (!info.field) return info.message || "invalid request";
  const name = publicFieldName(info.field, fields);
  // Services start the message with "<proto field>: "; the merchant reads its own field name there.
  if (info.message.startsWith(`${info.field}: `)) return `${name}: ${info.message.slice(info.field.length + 2)}`;
  if (info.message.includes(name)) return info.message;
  return info.message ? `${name}: ${info.message}` : `${name}: is invalid`;
}

/** The one mapping from an error thrown by a service call to what the merchant sees. */
export function mapServiceError(err: unknown, options: MapOptions = {}): ApiError {
  const info = errorInfo(err);
  if (info.reason === "VALIDATION_ERROR") {
    return new ApiError(400, "VALIDATION_ERROR", validationMessage(info, options.fields), info.details);
  }
  if (info.reason !== undefined && Object.hasOwn(publicReasons, info.reason)) {
    return new ApiError(publicReasons[info.reason]!, info.reason, info.message, info.details);
  }
  if (info.code === Code.Unavailable) {
    return new ApiError(503, "SERVICE_UNAVAILABLE", "A backing service is unavailable. Retry later.");
  }
  if (info.code === Code.DeadlineExceeded) {
    return new ApiError(504, "UPSTREAM_TIMEOUT", "A backing service did not answer in time. Retry later.");
  }
  return new ApiError(500, "INTERNAL_ERROR", INTERNAL_MESSAGE);
}

/**
 * Awaits a service call made for a route. A failure meant for the merchant (a 4xx) is
 * mapped here, where the route's field names are known; anything else is rethrown as it
 * came, so the error handler logs the original error before answering 5xx.
 */
export async function callService<T>(call: Promise<T>, options: MapOptions = {}): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const mapped = mapServiceError(err, options);
    if (mapped.status < 500) throw mapped;
    throw err;
  }
}

/**
 * A call about one resource named by an id taken from the path. An id the service will not
 * even parse (too long: VALIDATION_ERROR on `idField`) is as unknown as any other: the
 * resource's 404, not a validation error about a URL.
 */
export async function callAboutPathId<T>(call: Promise<T>, options: MapOptions & { idField: string; notFound: () => ApiError }): Promise<T> {
  const unparsable = call.catch((err: unknown) => {
    const info = errorInfo(err);
    if (info.reason === "VALIDATION_ERROR" && info.field === options.idField) throw options.notFound();
    throw err;
  });
  return callService(unparsable, options);
}

/** callAboutPathId for a deposit or withdrawal: 404 TRANSACTION_NOT_FOUND. */
export async function callAboutTransaction<T>(call: Promise<T>, options: MapOptions & { idField: string; noun: string }): Promise<T> {
  return callAboutPathId(call, { ...options, notFound: () => new ApiError(404, "TRANSACTION_NOT_FOUND", `no ${options.noun} with this transactionId`) });
}
