import test from "ava";
import { startServices, type RunningServices } from "@payments/kit";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock } from "@payments/testing";
import { createPayoutModule } from "../src/index.js";
import { recordingConnectors, transferReturnSuite, WORKER_ENV, type Sent } from "./transfer-returns-suite.js";

// Transfer returns on MySQL and JetStream: the payout service alone (a return needs no
// merchant, bank or deposit), its worker on.
const clock = manualClock(new Date("2026-11-26T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
const sent: Sent = { sandbox: [], live: [] };
let running: RunningServices | undefined;

test.before(async () => {
  running = await startServices([createPayoutModule(recordingConnectors(sent))], {
    mode: "all-in-one",
    clock,
    env: { ...WORKER_ENV, DATABASE_URL: database.url, ...nats },
  });
});

test.after.always(async () => {
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

transferReturnSuite(test, () => running!, sent);
