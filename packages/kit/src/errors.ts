import { Code, ConnectError } from "@connectrpc/connect";

/** Response metadata keys carrying the machine-readable side of a service error. */
export const ERROR_REASON_KEY = "x-error-reason";
export const ERROR_FIELD_KEY = "x-error-field";
export const ERROR_DETAILS_KEY = "x-error-details";

export interface ErrorExtras {
  /** The request field at fault, for validation errors. */
  field?: string;
  /** Small string map surfaced to merchants as `error.details` (for example transactionId). */
  details?: Record<string, string>;
  /** The underlying error, kept for the service's own log; never sent. */
  cause?: unknown;
}

/** A ConnectError with a gRPC code and a machine reason the gateway maps to a public error code. */
export function serviceError(code: Code, reason: string, message: string, extras: ErrorExtras = {}): ConnectError {
  const metadata = new Headers({ [ERROR_REASON_KEY]: reason });
  if (extras.field) metadata.set(ERROR_FIELD_KEY, extras.field);
  if (extras.details) metadata.set(ERROR_DETAILS_KEY, JSON.stringify(extras.details));
  return new ConnectError(message, code, metadata, undefined, extras.cause);
}

export function validationError(field: string, message: string): ConnectError {
  return serviceError(Code.InvalidArgument, "VALIDATION_ERROR", message, { field });
}

export interface ErrorInfo {
  code: Code;
  reason?: string;
  field?: string;
  details?: Record<string, string>;
  message: string;
}

/** Reads code, reason, field and details back from any error thrown by a client call. */
export function errorInfo(err: unknown): ErrorInfo {
  const connectError = ConnectError.from(err);
  const meta = connectError.metadata;
  let details: Record<string, string> | undefined;
  const rawDetails = meta.get(ERROR_DETAILS_KEY);
  if (rawDetails) {
    try {
      details = JSON.parse(rawDetails) as Record<string, string>;
    } catch {
      details = undefined;
    }
  }
  return {
    code: connectError.code,
    reason: meta.get(ERROR_REASON_KEY) ?? undefined,
    field: meta.get(ERROR_FIELD_KEY) ?? undefined,
    details,
    message: connectError.rawMessage,
  };
}
