import test from "ava";
import { InProcessBus, JetStreamBus, type BusMessage, type EventBus } from "../src/bus.js";
import { currentRequestId, withRequestId } from "../src/logger.js";
import { eventually, natsTestUrl, uniqueName } from "@payments/testing";

// Issue 12: an event carries where it came from (traceparent, x-request-id) in its headers;
// the consumer's handler runs under that request id, never the one of whoever published.
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

async function roundTrip(bus: EventBus, topic: string, headers: Record<string, string> | undefined) {
  const seen: Array<{ message: BusMessage; requestId: string | undefined }> = [];
  const subscription = await bus.consume(uniqueName("d"), [topic], async (message) => void seen.push({ message, requestId: currentRequestId() }));
  try {
    // Published from inside an unrelated request: that id must not leak into the consumer.
    await withRequestId("req-unrelated", () => bus.publish(topic, new Uint8Array([1]), uniqueName("m"), headers));
    await eventually(() => seen.length === 1, "consumed");
    return seen[0]!;
  } finally {
    await subscription.stop();
  }
}

for (const kind of ["in-process", "jetstream"] as const) {
  test(`${kind}: traceparent and x-request-id travel as headers and the handler runs under that request id; without them, under none`, async (t) => {
    const id = uniqueName("h");
    const bus: EventBus = kind === "in-process" ? new InProcessBus() : await JetStreamBus.connect({ url: natsTestUrl, stream: id.toUpperCase(), subjectPrefix: id, name: "trace-test" });
    try {
      const withHeaders = await roundTrip(bus, "x.v1.with", { traceparent: TRACEPARENT, "x-request-id": "req-origin" });
      t.is(withHeaders.message.headers?.traceparent, TRACEPARENT);
      t.is(withHeaders.message.headers?.["x-request-id"], "req-origin");
      t.is(withHeaders.requestId, "req-origin");
      const without = await roundTrip(bus, "x.v1.without", undefined);
      t.is(without.requestId, undefined);
    } finally {
      if (bus instanceof JetStreamBus) await bus.deleteStream();
      await bus.close();
    }
  });
}
