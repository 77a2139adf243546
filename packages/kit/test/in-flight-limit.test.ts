import test from "ava";
import { Code, ConnectError, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { createInFlightLimit, errorInfo } from "../src/index.js";

// The in-flight limit of a connection (src/in-flight-limit.ts), against a hand-driven `next`.

type Next = (req: UnaryRequest) => Promise<UnaryResponse>;

function harness(max: number) {
  const limit = createInFlightLimit(max);
  const sent: string[] = [];
  const pending = new Map<string, () => void>();
  const next: Next = (req) => {
    const id = (req as unknown as { id: string }).id;
    sent.push(id);
    return new Promise((resolve) => pending.set(id, () => resolve({} as UnaryResponse)));
  };
  const call = (id: string, signal = new AbortController().signal, stream = false) =>
    (limit.interceptor(next as never) as unknown as (req: unknown) => Promise<unknown>)({ id, signal, stream });
  return { limit, sent, pending, call };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("beyond the limit calls wait, and go out in order as slots free", async (t) => {
  const h = harness(2);
  const done = ["a", "b", "c", "d"].map((id) => h.call(id));
  await tick();
  t.deepEqual(h.sent, ["a", "b"]);
  t.deepEqual(h.limit.stats(), { inFlight: 2, waiting: 2 });
  h.pending.get("a")!();
  await done[0];
  await tick();
  t.deepEqual(h.sent, ["a", "b", "c"]);
  h.pending.get("b")!();
  h.pending.get("c")!();
  await tick();
  await tick();
  t.deepEqual(h.sent, ["a", "b", "c", "d"]);
  h.pending.get("d")!();
  await Promise.all(done);
  t.deepEqual(h.limit.stats(), { inFlight: 0, waiting: 0 });
});

test("a call whose deadline passes while it waits is never sent and fails with the deadline's reason", async (t) => {
  const h = harness(1);
  const first = h.call("a");
  const controller = new AbortController();
  const waiting = h.call("b", controller.signal);
  controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  t.is(errorInfo(await t.throwsAsync(waiting)).code, Code.DeadlineExceeded);
  h.pending.get("a")!();
  await first;
  await tick();
  t.deepEqual(h.sent, ["a"], "b never reached the wire");
  t.deepEqual(h.limit.stats(), { inFlight: 0, waiting: 0 });
});

test("streams take no slot", async (t) => {
  const h = harness(1);
  void h.call("unary");
  void h.call("watch", new AbortController().signal, true);
  await tick();
  t.deepEqual([...h.sent].sort(), ["unary", "watch"], "the stream went out although the one slot is taken");
});
