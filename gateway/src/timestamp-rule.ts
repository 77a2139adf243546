const UNIX_SECONDS = /^\d{1,15}$/;

/**
 * Check 5 of the authentication table: X-Timestamp is whole Unix seconds within the
 * tolerance of the server clock, before or after it. Anything else (fractions, signs,
 * spaces, milliseconds far in the future) is refused.
 */
export function timestampAcceptable(timestamp: string, now: Date, toleranceSeconds: number): boolean {
  if (!UNIX_SECONDS.test(timestamp)) return false;
  const seconds = Number(timestamp);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return Math.abs(seconds - nowSeconds) <= toleranceSeconds;
}
