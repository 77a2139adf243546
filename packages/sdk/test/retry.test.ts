import test from "ava";
import { backoffDelay, parseRetryAfter, retryDelay, DEFAULT_RETRY_POLICY } from "../src/retry.js";

test("Retry-After is read as delta-seconds or an HTTP date, and anything else is ignored", (t) => {
  const now = Date.parse("2026-11-23T10:00:00Z");
  t.is(parseRetryAfter("3", now), 3000);
  t.is(parseRetryAfter(" 0 ", now), 0);
  t.is(parseRetryAfter("Mon, 23 Nov 2026 10:00:05 GMT", now), 5000);
  t.is(parseRetryAfter("Mon, 23 Nov 2026 09:00:00 GMT", now), 0, "a date in the past means now");
  t.is(parseRetryAfter("1.5", now), undefined);
  t.is(parseRetryAfter("-1", now), undefined);
  t.is(parseRetryAfter("soon", now), undefined);
  t.is(parseRetryAfter(null, now), undefined);
});

test("back-off doubles per retry, stays in the upper half of its step, and is capped", (t) => {
  const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
  t.is(backoffDelay(0, policy, () => 0), 50);
  t.is(backoffDelay(0, policy, () => 1), 100);
  t.is(backoffDelay(1, policy, () => 1), 200);
  t.is(backoffDelay(2, policy, () => 0.5), 300);
  t.is(backoffDelay(10, policy, () => 1), 1000, "capped");
  for (let i = 0; i < 100; i++) {
    const d = backoffDelay(3, policy);
    t.true(d >= 400 && d <= 800, String(d));
  }
});

test("a Retry-After wins over the back-off but not over the cap", (t) => {
  t.is(retryDelay(0, "2", DEFAULT_RETRY_POLICY), 2000);
  t.is(retryDelay(0, "3600", DEFAULT_RETRY_POLICY), DEFAULT_RETRY_POLICY.maxDelayMs);
  t.is(retryDelay(1, undefined, { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100 }, () => 1), 200);
});
