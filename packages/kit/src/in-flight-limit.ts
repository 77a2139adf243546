import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * How many unary calls one process keeps on the wire to one service address at once; the rest
 * wait here, in order. Why: all calls to a service share one HTTP/2 session, and a call whose
 * deadline passes while on the wire is cancelled with an RST_STREAM. Past nghttp2's rapid-reset
 * guard (a burst of 1,000 resets, then 33/s; Node 20 cannot raise it) the service closes the
 * session with INTERNAL_ERROR, failing every call on it at once. A call whose deadline passes
 * while it waits here never opened a stream, so it resets nothing; and a service under load
 * gets at most this many calls from a caller, so their wait stays short and few ever time out
 * on the wire. 256: the bank-report bench lost throughput at 64 (a service waits on its database
 * for most of a call, so it needs many calls at once to stay busy), and 256 calls at a few
 * milliseconds each still drain well inside a deadline.
 */
export const DEFAULT_MAX_IN_FLIGHT = 256;

export interface InFlightLimit {
  readonly interceptor: Interceptor;
  /** Calls on the wire and waiting now, for tests and metrics. */
  stats(): { inFlight: number; waiting: number };
}

export function createInFlightLimit(max = DEFAULT_MAX_IN_FLIGHT): InFlightLimit {
  let inFlight = 0;
  const waiting: Array<{ start: () => void; signal: AbortSignal; onAbort: () => void }> = [];

  let draining = false;
  const drain = () => {
    draining = false;
    while (waiting.length > 0 && inFlight < max) {
      const next = waiting.shift()!;
      if (next.signal.aborted) continue;
      next.signal.removeEventListener("abort", next.onAbort);
      inFlight++;
      next.start();
    }
  };
  const release = () => {
    inFlight--;
    // After the timers now due have run: a waiting call whose deadline passes in this same
    // moment is dropped, not sent to be reset at once.
    if (!draining && waiting.length > 0) {
      draining = true;
      setImmediate(drain);
    }
  };

  const acquire = (signal: AbortSignal): Promise<void> => {
    if (inFlight < max) {
      inFlight++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        start: resolve,
        signal,
        onAbort: () => {
          const at = waiting.indexOf(entry);
          if (at >= 0) waiting.splice(at, 1);
          // The deadline (or the caller) gave up before a slot came: nothing reached the service.
          reject(ConnectError.from(signal.reason ?? new ConnectError("the call was cancelled while waiting to be sent", Code.Canceled)));
        },
      };
      if (signal.aborted) return entry.onAbort();
      signal.addEventListener("abort", entry.onAbort, { once: true });
      waiting.push(entry);
    });
  };

  return {
    interceptor: (next) => async (req) => {
      // Streams can live for hours (watches): they take no slot.
      if (req.stream) return next(req);
      await acquire(req.signal);
      try {
        return await next(req);
      } finally {
        release();
      }
    },
    stats: () => ({ inFlight, waiting: waiting.length }),
  };
}
