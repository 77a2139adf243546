import test from "ava";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv } from "@payments/testing";
import { merchantServiceSuite } from "./merchant-service-suite.js";

// The production shape: MySQL/MariaDB and JetStream, each test file on its own database and stream.
const nats = jetStreamTestEnv();
let drop: (() => Promise<void>) | undefined;

merchantServiceSuite(test, {
  async env() {
    const database = await createTestDatabase();
    drop = database.drop;
    return { ...nats, DATABASE_URL: database.url };
  },
  async cleanUp() {
    await drop?.();
    await deleteTestStream(nats);
  },
});
