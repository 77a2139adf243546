/**
 * The one error type the client throws for anything the gateway refused and for a request
 * that never got an answer, so a merchant's code needs a single `instanceof` check.
 */
export class PaymentsError extends Error {
  override readonly name = "PaymentsError";
  /** HTTP status of the answer; 0 when there was none (network failure or timeout). */
  readonly status: number;
  /**
   * The envelope's `error.code` (VALIDATION_ERROR, DUPLICATE_TRANSACTION, RATE_LIMITED, …);
   * without an answer NETWORK_ERROR or TIMEOUT; for an answer that is not the gateway's JSON
   * envelope (a proxy's HTML error page) INVALID_RESPONSE.
   */
  readonly code: string;
  /** The envelope's `error.details`, when the gateway sent any (e.g. `{ transactionId }` of a duplicate). */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  /** The X-Request-Id of the answer: quote it to support. Undefined without an answer. */
  readonly requestId: string | undefined;
  /** Attempts made before giving up (1 + retries). More than 1 means an earlier attempt may have reached the gateway. */
  readonly attempts: number;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    details?: Readonly<Record<string, unknown>> | undefined;
    requestId?: string | undefined;
    attempts?: number | undefined;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.attempts = init.attempts ?? 1;
  }

  /** True for a failure worth sending again: no answer, 429 or 5xx. The client already did so `maxRetries` times. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** What a failure envelope holds; anything else is not one. */
export function failureOf(json: unknown): { code: string; message: string; details?: Record<string, unknown> } | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const error = (json as { success?: unknown; error?: unknown }).error;
  if ((json as { success?: unknown }).success !== false || typeof error !== "object" || error === null) return undefined;
  const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof code !== "string") return undefined;
  return {
    code,
    message: typeof message === "string" ? message : code,
    ...(typeof details === "object" && details !== null ? { details: details as Record<string, unknown> } : {}),
  };
}
