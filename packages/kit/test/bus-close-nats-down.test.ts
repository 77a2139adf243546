import test from "ava";
import { JetStreamBus } from "../src/bus.js";
import { createLogger } from "../src/logger.js";
import { startNatsServer, uniqueName } from "@payments/testing";

// A service stopped while NATS is away (SIGTERM during an outage) must end: closing the bus closes
// its NATS connection even when it cannot drain, so no reconnect loop keeps the process alive.
// Alone in its file: it counts the process's timers.

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

test("a bus closed while NATS is down leaves no reconnect loop behind", async (t) => {
  const nats = await startNatsServer();
  const before = timers();
  const id = uniqueName("c");
  const bus = JetStreamBus.open({ url: nats.url, stream: id.toUpperCase(), subjectPrefix: id, name: "bus-close-test", logger: createLogger({ service: "test", level: "silent" }), reconnectWaitMs: 100 });
  t.true(await bus.whenReady(10_000));
  await nats.stop();
  // Reconnecting now: the client's dial loop and heartbeat hold timers.
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.true(timers() > before, "the client is trying to reconnect");
  await bus.close();
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(timers(), before, "no timer of the NATS client is left");
  await nats.destroy();
});
