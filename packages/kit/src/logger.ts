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

/**
 * Runs fn with the given request id, or with none at all when it is missing (background work
 * started from inside a request must not log that request's id).
 */
export function withRequestIdOrNone<T>(requestId: string | null | undefined, fn: () => T): T {
  return isValidRequestId(requestId) ? scope.run({ requestId }, fn) : scope.exit(fn);
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An incoming X-Request-Id is echoed only when it is short and plain; anything else is replaced. */
export function isValidRequestId(value: string | null | undefined): value is string {
  return typeof value === "string" && REQUEST_ID.test(value);
}

/** Headers that carry a credential: a merchant's API key and signature, the internal bearer token. */
export const SECRET_HEADERS = ["X-API-Key", "X-Signature", "Authorization"] as const;

/** How deep under a logged object headers may sit and still be redacted: `headers`, `req.headers`, `err.response.headers`, … */
const REDACT_DEPTH = 4;

/**
 * Paths pino censors in every log line. Redaction paths are exact, so each header is listed
 * in the spellings code uses: Node's lowercase, the canonical one, all caps, Title-Case.
 * Header arrays (`rawHeaders`) and Node's parser errors' `rawPacket` (the raw request bytes:
 * credentials and body) are censored whole.
 */
function redactPaths(): string[] {
  const spellings = SECRET_HEADERS.flatMap((name) => {
    const title = name.toLowerCase().replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
    return [...new Set([name, name.toLowerCase(), name.toUpperCase(), title])];
  });
  const paths: string[] = [];
  for (let depth = 0; depth < REDACT_DEPTH; depth++) {
    const prefix = "*.".repeat(depth);
    for (const header of spellings) paths.push(`${prefix}headers[${JSON.stringify(header)}]`);
    paths.push(`${prefix}rawHeaders`, `${prefix}rawPacket`);
  }
  return paths;
}

const REDACT = { paths: redactPaths(), censor: "[REDACTED]" };

/** JSON logs, one object per line, each carrying the service name and the current request id; credentials in headers are censored. */
export function createLogger(options: { service: string; level?: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level ?? "info",
      redact: REDACT,
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

/**
 * A process that could not start says so in one JSON line on stderr, like every other log
 * line: level fatal, the process name in `service`, a readable `msg` ("failed to start:
 * invalid configuration: …") and the error in `err` (a configuration error without its
 * stack: the message says all). Written synchronously, so it is out before process.exit.
 */
export function logStartupFailure(service: string, err: unknown, destination?: DestinationStream): void {
  const error = err instanceof Error ? err : new Error(String(err));
  const logger = createLogger({ service, destination: destination ?? pino.destination({ fd: 2, sync: true }) });
  if (error.name === "ConfigError") {
    const plain = logger.child({}, { serializers: { err: (e: unknown) => e } });
    plain.fatal({ err: { type: error.name, message: error.message } }, `failed to start: ${error.message}`);
  } else {
    logger.fatal({ err: error }, `failed to start: ${error.message}`);
  }
}
