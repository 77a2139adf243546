import test from "ava";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock, registerServiceClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { createPayoutModule } from "../src/index.js";
import { recordingConnectors, transferReturnSuite, WORKER_ENV, type Sent } from "./transfer-returns-suite.js";

// Transfer returns on MySQL and JetStream: the payout service alone (a return needs no
// merchant, bank or deposit), its worker on.
const clock = manualClock(new Date("2026-11-26T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const sent: Sent = { sandbox: [], live: [] };
let running: RunningServices | undefined;
let unregisterClock: (() => void) | undefined;

test.before(async () => {
  running = await startServices([createPayoutModule(recordingConnectors(sent))], {
    mode: "all-in-one",
    clock,
    env: { ...TEST_OPERATOR_ENV, ...WORKER_ENV, DATABASE_URL: database.url, ...nats },
  });
  unregisterClock = registerServiceClock(running.server.url, clock);
});

test.after.always(async () => {
  unregisterClock?.();
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

transferReturnSuite(test, () => running!, sent);
