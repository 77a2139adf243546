import test from "ava";
import { nextStep, parseRetryAfter } from "../src/retry-schedule.js";

const schedule = [5_000, 300_000, 1_800_000];
const DAY = 24 * 3600_000;

test("each failed attempt waits its step of the schedule, and the attempt after the last step fails the event", (t) => {
  t.deepEqual(nextStep(1, schedule, undefined, DAY), { kind: "retry", delayMs: 5_000 });
  t.deepEqual(nextStep(2, schedule, undefined, DAY), { kind: "retry", delayMs: 300_000 });
  t.deepEqual(nextStep(3, schedule, undefined, DAY), { kind: "retry", delayMs: 1_800_000 });
  t.deepEqual(nextStep(4, schedule, undefined, DAY), { kind: "failed" });
});

test("Retry-After longer than the step is honoured, a shorter one never brings the retry forward, and it is capped", (t) => {
  t.deepEqual(nextStep(1, schedule, 60_000, DAY), { kind: "retry", delayMs: 60_000 });
  t.deepEqual(nextStep(2, schedule, 1_000, DAY), { kind: "retry", delayMs: 300_000 });
  t.deepEqual(nextStep(1, schedule, 7 * DAY, DAY), { kind: "retry", delayMs: DAY });
  t.deepEqual(nextStep(4, schedule, 1_000, DAY), { kind: "failed" }, "Retry-After does not extend the schedule");
});

test("Retry-After is read as delta-seconds or an HTTP date; anything else is ignored", (t) => {
  const now = Date.parse("2026-11-22T10:00:00.000Z");
  t.is(parseRetryAfter("120", now), 120_000);
  t.is(parseRetryAfter(" 0 ", now), 0);
  t.is(parseRetryAfter("Sun, 22 Nov 2026 10:05:00 GMT", now), 300_000);
  t.is(parseRetryAfter("Sun, 22 Nov 2026 09:00:00 GMT", now), 0, "a date in the past means now");
  t.is(parseRetryAfter(undefined, now), undefined);
  t.is(parseRetryAfter("soon", now), undefined);
  t.is(parseRetryAfter("-5", now), undefined);
  t.is(parseRetryAfter("1.5", now), undefined);
});
