import type { Clock } from "@payments/kit";

/** A clock tests move by hand. */
export type ManualClock = Clock & { set(date: Date): void; advance(ms: number): void };

/** A clock tests move by hand, at `start` until they do. */
export function manualClock(start = new Date("2026-11-22T10:00:00.000Z")): ManualClock {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    set: (date) => {
      now = date.getTime();
    },
    advance: (ms) => {
      now += ms;
    },
  };
}
