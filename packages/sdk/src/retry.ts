/** Retry policy of the client: which failures are sent again, and how long to wait first. */

export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. */
  maxRetries: number;
  /** The first back-off; each later one doubles it. */
  baseDelayMs: number;
  /** No back-off, and no Retry-After, makes the client wait longer than this. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * 429 and 5xx are worth another try: the gateway was busy or failed before deciding. Any
 * other 4xx is an answer about the request itself and would only be refused again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * Retry-After in milliseconds: delta-seconds ("3") or an HTTP date; undefined when absent or
 * unreadable, so the caller falls back to its own back-off. A date in the past means now.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the HTTP-date forms: Date.parse would also read "1.5" or "tomorrow"-ish text.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Exponential back-off with jitter: base·2^attempt, capped, then a random point in its upper
 * half. The jitter keeps many clients that failed together from coming back together; the
 * floor keeps the wait from collapsing to zero.
 */
export function backoffDelay(retry: number, policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** How long to wait before retry number `retry` (0-based): the server's Retry-After when it gave one, else the back-off. */
export function retryDelay(retry: number, retryAfter: string | null | undefined, policy: RetryPolicy, random?: () => number): number {
  const told = parseRetryAfter(retryAfter);
  if (told !== undefined) return Math.min(told, policy.maxDelayMs);
  return backoffDelay(retry, policy, random);
}
