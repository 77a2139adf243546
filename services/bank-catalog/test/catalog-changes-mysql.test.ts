import test from "ava";
import { createTestDatabase, deleteTestStream, jetStreamTestEnv } from "@payments/testing";
import { catalogChangesSuite } from "./catalog-changes-suite.js";

// MySQL and JetStream, with a second replica of the service on the same database and stream.
const database = await createTestDatabase();
const nats = jetStreamTestEnv();

catalogChangesSuite(test, {
  env: async () => ({ DATABASE_URL: database.url, ...nats }),
  replicaEnv: async () => ({ DATABASE_URL: database.url, ...nats }),
  cleanUp: async () => {
    await database.drop();
    await deleteTestStream(nats);
  },
});
