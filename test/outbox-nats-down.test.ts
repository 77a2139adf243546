import test from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { JetStreamBus, type BusMessage } from "@payments/kit";
import { addTestReceivingAccounts, createServiceClient, credentialsOf, eventuallyValue, type OwnNatsServer, startNatsServer, TEST_OPERATOR_ENV } from "@payments/testing";
import { startSplitDeployment, type SplitDeployment } from "@payments/testing/services";
import { signedFetch, type Credentials } from "./helpers.js";

// Issue 10: with NATS down, the outbox relay must not make the changes that record events
// wait for it. Split mode on MySQL, with a NATS server of this suite's own so it can be
// stopped: gateway, merchant, bank-catalog and deposit services.
const token = "outbox-nats-down-internal-token";
let nats: OwnNatsServer;
let split: SplitDeployment | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;

test.before(async () => {
  nats = await startNatsServer();
  split = await startSplitDeployment({
    services: ["merchant", "bank-catalog", "deposit"],
    token,
    natsUrl: nats.url,
    common: { LOG_LEVEL: "fatal" },
    env: { merchant: { MASTER_KEY: "d".repeat(64) } },
  });
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      ...split.js,
      PORT: "0",
      HOST: "127.0.0.1",
      INTERNAL_API_TOKEN: token,
      // Payout and callback-sender are not on the deposit path; the gateway only needs an address for them.
      ...split.serviceUrls("http://127.0.0.1:9"),
      PUBLIC_BASE_URL: "https://pay.example.test",
      LOG_LEVEL: "fatal",
    },
  });
});

test.after.always(async () => {
  await gateway?.stop();
  await split?.stop();
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (nats as typeof nats | undefined)?.destroy();
});

test("with NATS stopped a deposit cancel answers at once; its event reaches JetStream once NATS is back, once", async (t) => {
  const merchants = createServiceClient(MerchantService, split!.url("merchant"), { token });
  const created = await merchants.createMerchant({ name: "Outage Shop" });
  const creds: Credentials = credentialsOf(created);

  // Receiving accounts of both kinds made through the catalog's RPCs, as a split install
  // starts with none.
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, split!.url("bank-catalog"), { token }));

  const depositIds: string[] = [];
  for (const processId of ["outage-1", "outage-2", "outage-3"]) {
    const res = await signedFetch(gateway!.url, creds, "POST", "/v1/deposit", { processId, amount: 50_000, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
    t.is(res.status, 201, JSON.stringify(res.json));
    depositIds.push((res.json.data as { transactionId: string }).transactionId);
  }

  await nats.stop();
  // One cancel after another, each while the relay is stuck publishing the events before it
  // (a JetStream publish gives up only after 5 s): none may wait for that.
  const timings: number[] = [];
  for (const id of depositIds) {
    const started = Date.now();
    const res = await signedFetch(gateway!.url, creds, "POST", `/v1/deposit/${id}/cancel`);
    timings.push(Date.now() - started);
    t.is(res.status, 200, JSON.stringify(res.json));
    t.is((res.json.data as { status: string }).status, "cancelled");
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  t.log(`cancel times with NATS down: ${timings.join(", ")} ms`);
  t.true(
    timings.every((ms) => ms < 500),
    `every cancel under 500 ms: ${timings.join(", ")} ms`,
  );

  const outbox = split!.service("deposit").contexts.get("deposit")!.db;
  const pending = await outbox("outbox").whereNull("published_at").where("topic", "deposit.v1.deposit_cancelled").select<Array<{ event_id: string }>>("event_id");
  t.is(pending.length, depositIds.length, "the events wait in the outbox while NATS is down");

  await nats.start();
  await eventuallyValue(
    async () => Number((await outbox("outbox").whereNull("published_at").count({ n: "*" }))[0]?.n),
    (n) => n === 0,
    "the outbox drained after NATS came back",
    30_000,
    100,
  );

  // Read the stream itself: every cancel's event, each once, under its outbox event id.
  const { js } = split!;
  const observer = await JetStreamBus.connect({ url: js.NATS_URL, stream: js.NATS_STREAM, subjectPrefix: js.NATS_SUBJECT_PREFIX });
  const seen: BusMessage[] = [];
  const subscription = await observer.consume("outbox-nats-down-observer", ["deposit.v1.>"], async (m) => void seen.push(m));
  try {
    await eventuallyValue(
      () => seen.filter((m) => m.topic === "deposit.v1.deposit_cancelled").length,
      (n) => n >= depositIds.length,
      "the deposit_cancelled events on JetStream",
      30_000,
      100,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cancelled = seen.filter((m) => m.topic === "deposit.v1.deposit_cancelled");
    t.deepEqual(cancelled.map((m) => fromBinary(DepositStatusChangedSchema, m.data).deposit?.id).sort(), [...depositIds].sort(), "one event per cancelled deposit");
    t.deepEqual(cancelled.map((m) => m.msgId).sort(), pending.map((p) => p.event_id).sort(), "each under its outbox event id, once");
  } finally {
    await subscription.stop();
    await observer.close();
  }
});
