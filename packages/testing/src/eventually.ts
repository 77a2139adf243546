/**
 * The one way a test waits for something that happens on its own (a job, a consumer, another
 * process), on real time: poll every `intervalMs` (25 ms unless told) until it is there, or
 * fail naming `what` after `timeoutMs` (10 s unless told).
 */

type Probe<V> = () => Promise<V | undefined | false> | V | undefined | false;

/** What a wait is for: a description, or one made from the last value read (to say where it stopped). */
type What<V> = string | ((last: V) => string);

async function poll<V>(read: () => Promise<V> | V, done: (value: V) => boolean, what: What<V>, timeoutMs = 10_000, intervalMs = 25): Promise<V> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Polls `condition` until it holds. */
export async function eventually(condition: () => Promise<boolean> | boolean, what: string, timeoutMs?: number, intervalMs?: number): Promise<void> {
  await poll(condition, (holds) => holds, what, timeoutMs, intervalMs);
}

/** Polls `probe` until it gives a value other than undefined or false, and returns that value. */
export function eventuallyValue<V>(probe: Probe<V>, what: string, timeoutMs?: number, intervalMs?: number): Promise<V>;
/** Polls `read` until `done` holds for what it read, and returns that; `what` may name the last value read. */
export function eventuallyValue<V>(read: () => Promise<V> | V, done: (value: V) => boolean, what: What<V>, timeoutMs?: number, intervalMs?: number): Promise<V>;
export function eventuallyValue<V>(read: Probe<V>, doneOrWhat: string | ((value: V) => boolean), ...rest: Array<What<V> | number | undefined>): Promise<V> {
  if (typeof doneOrWhat !== "string") {
    const [what, timeoutMs, intervalMs] = rest as [What<V>, number?, number?];
    return poll(read as () => Promise<V> | V, doneOrWhat, what, timeoutMs, intervalMs);
  }
  const [timeoutMs, intervalMs] = rest as [number?, number?];
  return poll(read, (value): value is V => value !== undefined && value !== false, doneOrWhat, timeoutMs, intervalMs) as Promise<V>;
}

/** Polls `condition` until it holds, and returns when (Date.now()) the answer that held arrived: the later end, so a bound measured with it is never flattered. */
export function eventuallyAt(condition: () => Promise<boolean> | boolean, what: string, timeoutMs?: number, intervalMs?: number): Promise<number> {
  return eventuallyValue(async () => (await condition()) && Date.now(), what, timeoutMs, intervalMs);
}
