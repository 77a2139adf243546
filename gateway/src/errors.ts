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
  TRANSACTION_NOT_FOUND: 404,
};

export const INTERNAL_MESSAGE = "An unexpected error occurred. Quote the X-Request-Id header when contacting support.";

/** The one mapping from an error thrown by a service call to what the merchant sees. */
export function mapServiceError(err: unknown): ApiError {
  const info = errorInfo(err);
  if (info.reason === "VALIDATION_ERROR") {
    const message = info.field && !info.message.includes(info.field) ? `${info.field}: ${info.message}` : info.message || "invalid request";
    return new ApiError(400, "VALIDATION_ERROR", message, info.details);
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
