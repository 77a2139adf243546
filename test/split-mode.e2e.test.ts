import { PayoutService, WithdrawalStatus } from "@payments/contracts/payout";
import test from "ava";
import { fromBinary } from "@bufbuild/protobuf";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService, DepositStatusChangedSchema } from "@payments/contracts/deposit";
import { MerchantService, MerchantStatus, UnderpaymentRule } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { JetStreamBus, type Subscription } from "@payments/kit";
import { CallbackReceiver, createServiceClient, credentialsOf, eventuallyValue, TEST_OPERATOR_ENV } from "@payments/testing";
import { startSplitDeployment, type SplitDeployment } from "@payments/testing/services";
import { verifyCallback } from "@payments/signing";
import { bankListProblems, signedFetch, type BankEntry } from "./helpers.js";

// Each service alone, as `docker compose` runs them: own process settings, own MySQL
// database, events over JetStream only. The gateway hears MerchantChanged over NATS.
const token = "split-mode-internal-token";
let split: SplitDeployment;
let gateway: Awaited<ReturnType<typeof startGateway>>;
// Another JetStream client, standing in for the consumers of deposit events (callbacks, balances).
let observer: JetStreamBus;
let observation: Subscription;
const depositEvents: Array<{ msgId: string; topic: string; depositId: string; status: number; sequence: bigint }> = [];

test.before(async () => {
  split = await startSplitDeployment({
    services: ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"],
    token,
    // A split install starts with no receiving account; the test's operator adds both kinds.
    receivingAccounts: true,
    env: {
      merchant: { MASTER_KEY: "a".repeat(64), CALLBACK_ALLOW_PRIVATE: "1" },
      deposit: { DEPOSIT_TTL: "3s", DEPOSIT_EXPIRY_INTERVAL: "200ms" },
      payout: { SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms" },
      "callback-sender": {
        PUBLIC_BASE_URL: "https://pay.example.test",
        CALLBACK_ALLOW_PRIVATE: "1",
        CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
        CALLBACK_POLL_INTERVAL: "50ms",
        // Merchants without a callback URL fail their attempts with a warning each.
        LOG_LEVEL: "error",
      },
    },
  });
  const js = split.js;
  observer = await JetStreamBus.connect({ url: js.NATS_URL, stream: js.NATS_STREAM, subjectPrefix: js.NATS_SUBJECT_PREFIX });
  observation = await observer.consume("e2e-observer", ["deposit.v1.>"], async (message) => {
    const event = fromBinary(DepositStatusChangedSchema, message.data);
    depositEvents.push({ msgId: message.msgId, topic: message.topic, depositId: event.deposit!.id, status: event.deposit!.status, sequence: event.deposit!.sequence });
  });
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      ...js,
      PORT: "0",
      HOST: "127.0.0.1",
      INTERNAL_API_TOKEN: token,
      ...split.serviceUrls(""),
      PUBLIC_BASE_URL: "https://pay.example.test",
      // Long enough that only the JetStream event can explain a prompt refusal.
      CREDENTIAL_CACHE_TTL: "10m",
      LOG_LEVEL: "warn",
    },
  });
});

test.after.always(async () => {
  // Unset if the before hook failed before starting them: their declared types say otherwise.
  await (gateway as typeof gateway | undefined)?.stop();
  await (observation as typeof observation | undefined)?.stop();
  await (observer as typeof observer | undefined)?.close();
  await (split as typeof split | undefined)?.stop();
});

const merchants = () => createServiceClient(MerchantService, split.url("merchant"), { token });

test("a merchant created over RPC gets the signed bank list through the gateway (MySQL + JetStream)", async (t) => {
  const created = await merchants().createMerchant({ name: "Split Shop" });
  const res = await signedFetch(gateway.url, credentialsOf(created), "GET", "/v1/available-banks");
  t.is(res.status, 200);
  t.is(res.json.success, true);
  t.true(Number.isInteger(res.json.timestamp));
  t.deepEqual(bankListProblems(res.json.data), []);
  const banks = (res.json.data as { banks: BankEntry[] }).banks;
  t.true(banks.some((b) => b.code === "0064"), "seeded Türkiye İş Bankası is listed");
  t.is(banks.at(-1)?._id, "FAST");
  t.truthy(res.headers.get("x-request-id"));
});

test("a merchant override in the catalog changes that merchant's limits only", async (t) => {
  const [a, b] = await Promise.all([merchants().createMerchant({ name: "A" }), merchants().createMerchant({ name: "B" })]);
  const catalog = createServiceClient(BankCatalogService, split.url("bank-catalog"), { token });
  const bank = (await catalog.listBanks({})).banks.find((x) => x.code === "0062")!;
  await catalog.setMerchantLimit({ limit: { merchantId: a.merchant!.id, bankId: bank.id, minAmount: 5000n, maxAmount: 7000n } });
  const list = async (m: typeof a) =>
    ((await signedFetch(gateway.url, credentialsOf(m), "GET", "/v1/available-banks")).json.data as { banks: BankEntry[] }).banks.find(
      (x) => x._id === bank.id,
    );
  t.like(await list(a), { minAmount: 5000, maxAmount: 7000 });
  t.like(await list(b), { minAmount: Number(bank.minAmount), maxAmount: Number(bank.maxAmount) });
});

test("disabling a merchant refuses its key at once: the gateway drops its cache on the JetStream event", async (t) => {
  const created = await merchants().createMerchant({ name: "Soon disabled" });
  const creds = credentialsOf(created);
  t.is((await signedFetch(gateway.url, creds, "GET", "/v1/available-banks")).status, 200);
  await merchants().setStatus({ merchantId: created.merchant!.id, status: MerchantStatus.DISABLED });
  let status = 0;
  for (let i = 0; i < 50 && status !== 401; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const res = await signedFetch(gateway.url, creds, "GET", "/v1/available-banks");
    status = res.status;
    if (status === 401) t.is((res.json.error as { code: string }).code, "INVALID_API_KEY");
  }
  t.is(status, 401, "refused within 5 s although the cache TTL is 10 minutes");
});

test("internal calls without the internal token are refused in split mode", async (t) => {
  const anonymous = createServiceClient(MerchantService, split.url("merchant"));
  const err = await t.throwsAsync(anonymous.listMerchants({}));
  t.regex(err.message, /internal API token/);
});

type Record = { transactionId: string; status: string; amount: number; requestedAmount: number; reference: string; checkoutUrl: string; assignedAccount?: { iban: string } };

test("a deposit created at the gateway, paid by a reported bank transfer, reads completed with the paid amount; its event is on JetStream once", async (t) => {
  const created = await merchants().createMerchant({ name: "Deposit Shop" });
  // This merchant completes short payments (the default holds them for an operator's review).
  await merchants().setPaymentRules({ merchantId: created.merchant!.id, underpayment: UnderpaymentRule.COMPLETE });
  const creds = credentialsOf(created);
  const res = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", {
    processId: "split-order-1",
    amount: 125_000,
    customer: { id: "cus_9", name: "Mehmet Demir", username: "mdemir" },
  });
  t.is(res.status, 201, JSON.stringify(res.json));
  const deposit = res.json.data as Record;
  t.like(deposit, { status: "pending", amount: 125_000 });
  t.true(deposit.checkoutUrl.startsWith("https://pay.example.test/checkout?token="));
  t.truthy(deposit.assignedAccount?.iban);

  // The bank integration reports the customer's transfer, by RPC, as a bank would.
  const deposits = createServiceClient(DepositService, split.url("deposit"), { token });
  await deposits.reportTransfer({
    iban: deposit.assignedAccount!.iban,
    amount: 124_000n,
    senderName: "MEHMET DEMIR",
    reference: `FAST ${deposit.reference}`,
    bankTransactionId: "split-btx-1",
  });
  const read = await signedFetch(gateway.url, creds, "GET", `/v1/deposit/${deposit.transactionId}`);
  t.is(read.status, 200);
  t.like(read.json.data, { status: "completed", amount: 124_000, requestedAmount: 125_000 });

  const events = await eventuallyValue(
    async () => depositEvents.filter((e) => e.depositId === deposit.transactionId),
    (list) => list.length > 0,
    "the deposit_completed event",
    10_000,
    100,
  );
  await new Promise((r) => setTimeout(r, 500));
  t.is(depositEvents.filter((e) => e.depositId === deposit.transactionId).length, 1);
  t.like(events[0], { topic: "deposit.v1.deposit_completed", sequence: 2n });
});

test("an unpaid deposit becomes expired after DEPOSIT_TTL, read through the gateway by processId", async (t) => {
  const created = await merchants().createMerchant({ name: "Expiry Shop" });
  const creds = credentialsOf(created);
  const res = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", {
    processId: "split-unpaid",
    amount: 20_000,
    customer: { id: "cus_2", name: "Zeynep Kaya", username: "zkaya" },
  });
  t.is(res.status, 201);
  const id = (res.json.data as Record).transactionId;
  const final = await eventuallyValue(
    async () => (await signedFetch(gateway.url, creds, "GET", "/v1/deposit?processId=split-unpaid")).json.data as Record,
    (d) => d.status !== "pending",
    "the expiry",
    10_000,
    100,
  );
  t.is(final.status, "expired");
  await eventuallyValue(async () => depositEvents.filter((e) => e.depositId === id), (l) => l.length > 0, "the deposit_expired event", 10_000, 100);
  t.is(depositEvents.filter((e) => e.depositId === id && e.topic === "deposit.v1.deposit_expired").length, 1);
});

test("the deposit error codes of api.md come back in the envelope in split mode", async (t) => {
  const created = await merchants().createMerchant({ name: "Errors Shop" });
  const creds = credentialsOf(created);
  const customer = { id: "c", name: "N", username: "u" };
  const missing = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", { customer });
  t.is(missing.status, 400);
  t.like(missing.json, { success: false, error: { code: "VALIDATION_ERROR" } });
  t.regex((missing.json.error as { message: string }).message, /processId.*amount|amount.*processId/);
  t.is((await signedFetch(gateway.url, creds, "POST", "/v1/deposit", { processId: "dup", amount: 10_000, customer })).status, 201);
  const duplicate = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", { processId: "dup", amount: 10_000, customer });
  t.like(duplicate, { status: 400, json: { error: { code: "DUPLICATE_TRANSACTION" } } });
  const range = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", { processId: "range", amount: 10, bankCode: "FAST", customer });
  t.like(range, { status: 400, json: { error: { code: "AMOUNT_OUT_OF_RANGE" } } });
  t.regex((range.json.error as { message: string }).message, /100 to 10000000 \(1\.00 to 100000\.00 TRY\)/);
  const unknown = await signedFetch(gateway.url, creds, "GET", "/v1/deposit/dep_unknown");
  t.like(unknown, { status: 404, json: { error: { code: "TRANSACTION_NOT_FOUND" } } });
});

test("deposit → confirm → balance → withdraw → completed, every service alone on MySQL with JetStream between them", async (t) => {
  const created = await merchants().createMerchant({ name: "Payout Shop", allowedIps: ["127.0.0.1", "::1"] });
  const creds = credentialsOf(created);
  const res = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", { processId: "split-pay-in", amount: 80_000, customer: { id: "c", name: "N", username: "u" } });
  t.is(res.status, 201, JSON.stringify(res.json));
  const deposits = createServiceClient(DepositService, split.url("deposit"), { token });
  await deposits.confirmDeposit({ depositId: (res.json.data as Record).transactionId });

  // The payout service hears deposit_completed on JetStream and credits the balance.
  const balance = await eventuallyValue(
    async () => (await signedFetch(gateway.url, creds, "GET", "/v1/balance")).json.data as { balances: Array<{ currency: string; available: number; held: number }> },
    (b) => b.balances.some((x) => x.currency === "TRY" && x.available === 80_000),
    "the deposit credit",
    10_000,
    100,
  );
  t.deepEqual(balance.balances, [{ currency: "TRY", available: 80_000, held: 0 }]);

  const withdraw = { processId: "split-pay-out", amount: 30_000, accountName: "Ali Veli", iban: "TR33 0006 1005 1978 6457 8413 26", userId: "u1", userName: "ali", name: "Ali Veli" };
  const created201 = await signedFetch(gateway.url, creds, "POST", "/v1/withdraw", withdraw);
  t.is(created201.status, 201, JSON.stringify(created201.json));
  const id = (created201.json.data as { transactionId: string }).transactionId;
  const short = await signedFetch(gateway.url, creds, "POST", "/v1/withdraw", { ...withdraw, processId: "split-too-much", amount: 60_000 });
  t.like(short, { status: 400, json: { error: { code: "INSUFFICIENT_BALANCE" } } });

  // A live merchant's payout waits, processing, for an operator to pay it in the bank's portal.
  const payouts = createServiceClient(PayoutService, split.url("payout"), { token });
  const waiting = await eventuallyValue(
    async () => (await payouts.listWithdrawals({ allMerchants: true, awaitingOperator: true, limit: 100 })).withdrawals.find((w) => w.id === id),
    (w) => w !== undefined,
    "the withdrawal awaiting an operator",
    10_000,
    100,
  );
  t.like(waiting, { status: WithdrawalStatus.PROCESSING, awaitingOperator: true, sandbox: false });
  await payouts.completeWithdrawal({ withdrawalId: id, bankReference: "SPLIT-REF-1" });
  const done = (await signedFetch(gateway.url, creds, "GET", `/v1/withdraw/${id}`)).json.data as { status: string };
  t.is(done.status, "completed");
  const after = (await signedFetch(gateway.url, creds, "GET", "/v1/balance")).json.data as { balances: unknown[] };
  t.deepEqual(after.balances, [{ currency: "TRY", available: 50_000, held: 0 }]);
});

test("every status change reaches the merchant's callback URL signed; the merchant sees the log at GET /v1/events and redelivers", async (t) => {
  let answer = 500;
  const receiver = await new CallbackReceiver(() => ({ status: answer })).start();
  try {
    // Sandbox: its withdrawal goes through the sandbox connector and completes by itself.
    const created = await merchants().createMerchant({ name: "Callback Shop", allowedIps: ["127.0.0.1", "::1"], callbackUrl: receiver.url("/cb?shop=1"), sandbox: true });
    const creds = credentialsOf(created);
    const res = await signedFetch(gateway.url, creds, "POST", "/v1/deposit", { processId: "split-cb-in", amount: 50_000, customer: { id: "c", name: "N", username: "u" } });
    const depositId = (res.json.data as Record).transactionId;
    await createServiceClient(DepositService, split.url("deposit"), { token }).confirmDeposit({ depositId });

    // The receiver answers 500 at first: three attempts on the 100ms, 200ms schedule, then failed.
    type Listed = { items: Array<{ id: string; type: string; deliveryStatus: string; attempts: Array<{ statusCode: number | null; outcome: string }> }>; nextCursor: string | null };
    const failed = await eventuallyValue(
      async () => (await signedFetch(gateway.url, creds, "GET", "/v1/events?deliveryStatus=failed")).json.data as Listed,
      (l) => l.items.length === 1,
      "the failed deposit.completed event",
      10_000,
      100,
    );
    const event = failed.items[0]!;
    t.is(event.type, "deposit.completed");
    t.deepEqual(
      event.attempts.map((a) => [a.statusCode, a.outcome]),
      [
        [500, "retry"],
        [500, "retry"],
        [500, "failed"],
      ],
    );

    answer = 200;
    const redelivered = await signedFetch(gateway.url, creds, "POST", `/v1/events/${event.id}/redeliver`);
    t.is(redelivered.status, 200, JSON.stringify(redelivered.json));
    await eventuallyValue(
      async () => ((await signedFetch(gateway.url, creds, "GET", `/v1/events/${event.id}`)).json.data as { deliveryStatus: string }).deliveryStatus,
      (status) => status === "delivered",
      "the redelivery",
      10_000,
      100,
    );

    // A withdrawal: processing, then completed, each its own callback.
    await eventuallyValue(
      async () => (await signedFetch(gateway.url, creds, "GET", "/v1/balance")).json.data as { balances: Array<{ available: number }> },
      (b) => b.balances[0]?.available === 50_000,
      "the deposit credit",
      10_000,
      100,
    );
    const withdrawal = await signedFetch(gateway.url, creds, "POST", "/v1/withdraw", {
      processId: "split-cb-out",
      amount: 20_000,
      accountName: "Ali Veli",
      iban: "TR330006100519786457841326",
      userId: "u1",
      userName: "ali",
      name: "Ali Veli",
    });
    t.is(withdrawal.status, 201);
    await eventuallyValue(
      async () => receiver.received.filter((c) => c.headers["x-event-type"] === "withdrawal.completed"),
      (l) => l.length === 1,
      "the withdrawal.completed callback",
      10_000,
      100,
    );
    for (const callback of receiver.received) {
      const verdict = verifyCallback({ secrets: created.apiSecret, headers: callback.headers, body: callback.body, path: callback.path });
      t.true(verdict.ok, JSON.stringify(verdict));
      t.is(callback.path, "/cb?shop=1");
    }
    const delivered = receiver.received.filter((c, i) => i === receiver.received.findIndex((d) => d.headers["x-event-id"] === c.headers["x-event-id"]));
    t.deepEqual(
      delivered.map((c) => c.headers["x-event-type"]),
      ["deposit.completed", "withdrawal.processing", "withdrawal.completed"],
    );
    const sequences = delivered.slice(1).map((c) => (JSON.parse(c.body.toString()) as { data: { sequence: number } }).data.sequence);
    t.deepEqual(sequences, [2, 3]);
  } finally {
    await receiver.stop();
  }
});

test("/healthz is 200 while every service answers", async (t) => {
  const res = await fetch(`${gateway.url}/healthz`);
  const body = (await res.json()) as { success: boolean };
  t.is(res.status, 200, JSON.stringify(body));
  t.is(body.success, true);
});
