import test from "ava";
import { type RunningServices } from "@payments/kit";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv, manualClock } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { withheldCreditSuite } from "./withheld-credits-suite.js";

// Withheld credits on MySQL and JetStream: the merchant service (GetMerchant) and the payout
// service, worker off; row locks and the unique index decide the races here.
const clock = manualClock(new Date("2026-11-27T10:00:00.000Z"));
const database = await createTestDatabase();
const nats = jetStreamTestEnv();
let running: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "bank-catalog", "payout"], {
    clock,
    env: { LOG_LEVEL: "fatal", MASTER_KEY: "ab".repeat(32), PAYOUT_WORKER: "0", DATABASE_URL: database.url, ...nats },
  });
});

test.after.always(async () => {
  await running?.stop();
  await database.drop();
  await deleteTestStream(nats);
});

withheldCreditSuite(test, () => running!, clock);
