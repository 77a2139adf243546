import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { allModules } from "@payments/all-in-one";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { createLogger, type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, CallbackReceiver, createServiceClient, credentialsOf, eventually, startInMemoryTracing, TEST_OPERATOR_ENV } from "@payments/testing";
import { signedFetch, type Credentials } from "./helpers.js";

// Issue 12, tracing: every module and the gateway in one process (SQLite, in-process bus),
// the SDK's in-memory exporter installed through startTracing. POST /v1/deposit → the bank
// integration reports the transfer (continuing the deposit's trace with the traceparent and
// X-Request-Id the gateway answered with) → deposit completed → balance credited → callback
// delivered: one trace, and the callback side's logs carry the deposit request's id.
const tracing = await startInMemoryTracing("tracing-test");
const dataDir = mkdtempSync(join(tmpdir(), "tracing-"));
const lines: Array<Record<string, unknown>> = [];
const logger = createLogger({ service: "all-in-one", level: "debug", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
let services: RunningServices | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
let receiver: CallbackReceiver | undefined;

test.before(async () => {
  const env = {
    ...TEST_OPERATOR_ENV,
    GRPC_PORT: "0",
    DATA_DIR: dataDir,
    MASTER_KEY: "e".repeat(64),
    CALLBACK_ALLOW_PRIVATE: "1",
    CALLBACK_POLL_INTERVAL: "50ms",
    PAYOUT_WORKER_INTERVAL: "100ms",
  };
  services = await startServices([...allModules], { mode: "all-in-one", env, logger });
  const local = services.localTransport;
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV, ...env, PORT: "0", HOST: "127.0.0.1", PUBLIC_BASE_URL: "https://pay.example.test" },
    bus: services.bus,
    logger,
    metrics: services.metrics,
    transports: { merchant: local, bankCatalog: local, deposit: local, payout: local, callback: local },
  });
  receiver = await new CallbackReceiver().start();
});

test.after.always(async () => {
  await gateway?.stop();
  await services?.stop();
  await receiver?.stop();
  await tracing.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("POST /v1/deposit → transfer report → completed → credited → callback delivered is one trace; the callback's logs carry the request id", async (t) => {
  const merchants = createServiceClient(MerchantService, services!.server.url);
  const created = await merchants.createMerchant({ name: "Traced Shop" });
  const merchantId = created.merchant!.id;
  await merchants.setCallbackUrl({ merchantId, callbackUrl: receiver!.url() });
  const creds: Credentials = credentialsOf(created);
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, services!.server.url));
  tracing.reset();

  const requestId = "req-trace-test-1";
  const res = await fetchDeposit(creds, requestId);
  t.is(res.status, 201, JSON.stringify(res.json));
  const traceparent = res.headers.get("traceparent");
  t.regex(traceparent ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, "the gateway answers with its span's traceparent");
  t.is(res.headers.get("x-request-id"), requestId);
  const traceId = traceparent!.split("-")[1]!;
  const deposit = res.json.data as { transactionId: string; reference: string; amount: number; assignedAccount: { iban: string } };

  // A bank integration reporting the transfer continues the deposit's trace (over HTTP/2).
  await createServiceClient(DepositService, services!.server.url).reportTransfer(
    { iban: deposit.assignedAccount.iban, amount: BigInt(deposit.amount), senderName: "AYSE YILMAZ", reference: deposit.reference, bankTransactionId: "trace-btx-1" },
    { headers: { traceparent: traceparent!, "x-request-id": requestId } },
  );
  await eventually(() => receiver!.received.some((r) => r.body.toString().includes(deposit.transactionId) && r.body.toString().includes("completed")), "the completed callback delivered");
  await eventually(() => tracing.spans().some((s) => s.name === "callback POST" && s.spanContext().traceId === traceId && s.attributes["http.response.status_code"] === 200), "the callback POST span");

  const spans = tracing.spans().filter((s) => s.spanContext().traceId === traceId);
  const names = spans.map((s) => s.name);
  const has = (what: string, match: (name: string, attrs: Record<string, unknown>) => boolean) =>
    t.true(
      spans.some((s) => match(s.name, s.attributes)),
      `${what} in the trace; it has: ${[...new Set(names)].join(", ")}`,
    );
  has("the gateway's HTTP span", (n) => n === "POST /v1/deposit");
  has("an RPC client span", (n, a) => n === "payments.deposit.v1.DepositService/CreateDeposit" && a["rpc.system"] !== undefined);
  has("the CreateDeposit server span", (n) => n === "payments.deposit.v1.DepositService/CreateDeposit");
  has("the ReportTransfer server span", (n) => n === "payments.deposit.v1.DepositService/ReportTransfer");
  has("a database transaction", (n) => n === "db.transaction");
  has("an outbox publish", (n) => n.startsWith("publish deposit.v1."));
  has("the payout service crediting the deposit", (n, a) => n.startsWith("process deposit.v1.") && String(a["messaging.consumer.group.name"]).includes("payout"));
  has("the callback sender taking the event in", (n, a) => n.startsWith("process ") && String(a["messaging.consumer.group.name"]).includes("callback"));
  has("the callback delivery", (n) => n === "callback.deliver");
  has("the callback POST", (n) => n === "callback POST");
  // RPC spans exist on both sides: the client span and the server span of one call.
  const createSpans = spans.filter((s) => s.name === "payments.deposit.v1.DepositService/CreateDeposit");
  t.true(createSpans.length >= 2, "client and server span of CreateDeposit");

  // The callback side's log lines carry the request that caused the callback.
  const taken = lines.find((l) => l.msg === "event taken in" && typeof l.eventId === "string" && l.eventId.length > 0 && l.requestId === requestId);
  t.truthy(taken, "the callback sender's ingest logged under the deposit request's id");
  await eventually(() => lines.some((l) => l.msg === "callback delivered" && l.requestId === requestId), "the delivery logged under the request id");
});

async function fetchDeposit(creds: Credentials, requestId: string) {
  // signedFetch with an X-Request-Id of the merchant's own, and the response headers kept.
  const headers: Record<string, string> = { "X-Request-Id": requestId };
  const res = await signedFetch(gateway!.url, creds, "POST", "/v1/deposit", { processId: "trace-1", amount: 50_000, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } }, headers);
  return res;
}
