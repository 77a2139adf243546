/**
 * When the next attempt of a callback is due. Pure, so the schedule is tested without
 * waiting for it.
 */

export type NextStep = { kind: "retry"; delayMs: number } | { kind: "failed" };

/**
 * After the `roundAttempts`-th attempt of the current round failed: wait the schedule's
 * step for it, or longer when the merchant asked for that with Retry-After (never longer
 * than `maxRetryAfterMs`); once every step is used, the event has failed.
 */
export function nextStep(roundAttempts: number, schedule: readonly number[], retryAfterMs: number | undefined, maxRetryAfterMs: number): NextStep {
  const step = schedule[roundAttempts - 1];
  if (step === undefined) return { kind: "failed" };
  const asked = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, maxRetryAfterMs);
  return { kind: "retry", delayMs: Math.max(step, asked) };
}

/**
 * The wait a Retry-After header asks for, in ms: delta-seconds or an HTTP date (RFC 9110
 * 10.2.3). undefined when absent or unreadable, so a malformed header is ignored rather
 * than obeyed.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  // The three HTTP date forms all name the month; anything else Date.parse accepts ("1.5") is not one.
  if (!/\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
