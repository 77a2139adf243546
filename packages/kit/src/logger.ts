import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type DestinationStream, type Logger as PinoLogger } from "pino";

export type Logger = PinoLogger;

interface RequestScope {
  requestId: string;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs fn with the request id attached to every log line and outgoing RPC inside it. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return scope.run({ requestId }, fn);
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

/** An incoming X-Request-Id is echoed only when it is short and plain; anything else is replaced. */
export function isValidRequestId(value: string | null | undefined): value is string {
  return typeof value === "string" && REQUEST_ID.test(value);
}

/** JSON logs, one object per line, each carrying the service name and the current request id. */
export function createLogger(options: { service: string; level?: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
    },
    options.destination,
  );
}
