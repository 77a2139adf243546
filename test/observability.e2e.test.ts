import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { allModules } from "@payments/all-in-one";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { MerchantService } from "@payments/contracts/merchant";
import { startGateway } from "@payments/gateway";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { addTestReceivingAccounts, CallbackReceiver, createServiceClient, credentialsOf, eventuallyValue, freePort, jetStreamTestEnv, type OwnNatsServer, startNatsServer, TEST_OPERATOR_ENV } from "@payments/testing";
import { signedFetch, type Credentials } from "./helpers.js";
import { serviceUrlsAt } from "@payments/testing/services";

// Issue 12: GET /metrics on every process (the gateway's main port included, no settings),
// OpenTelemetry names and labels, the domain gauges; JSON on every log line, one `msg`.
// Every service in one process on SQLite with a NATS of this suite's own (so it can be
// stopped), and a gateway calling them over the network.
const root = new URL("..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "observability-"));
let nats: OwnNatsServer;
let services: RunningServices | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
let receiver: CallbackReceiver | undefined;

test.before(async () => {
  nats = await startNatsServer();
  const js = { ...jetStreamTestEnv(), NATS_URL: nats.url };
  services = await startServices([...allModules], {
    mode: "all-in-one",
    env: {
      ...TEST_OPERATOR_ENV,
      ...js,
      GRPC_PORT: "0",
      DATA_DIR: dataDir,
      MASTER_KEY: "e".repeat(64),
      LOG_LEVEL: "fatal",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_POLL_INTERVAL: "50ms",
      PAYOUT_WORKER_INTERVAL: "100ms",
    },
  });
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      ...js,
      PORT: "0",
      HOST: "127.0.0.1",
      ...serviceUrlsAt(services.server.url),
      PUBLIC_BASE_URL: "https://pay.example.test",
      LOG_LEVEL: "fatal",
    },
  });
  receiver = await new CallbackReceiver().start();
});

test.after.always(async () => {
  await gateway?.stop();
  await services?.stop();
  await receiver?.stop();
  // Unset if the before hook failed before starting it: its declared type says otherwise.
  await (nats as typeof nats | undefined)?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/metrics`, { headers });
  return { status: res.status, text: await res.text() };
}

/** The samples of one metric series name, with their labels parsed. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ labels, value: Number(match[4]) });
  }
  return out;
}

function has(text: string, name: string, labels: Record<string, string>): boolean {
  return samples(text, name).some((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

test.serial("the gateway's main port and the services' port serve the named metrics after some traffic; the outbox backlog rises while NATS is down", async (t) => {
  const merchants = createServiceClient(MerchantService, services!.server.url);
  const created = await merchants.createMerchant({ name: "Metrics Shop" });
  const merchantId = created.merchant!.id;
  await merchants.setCallbackUrl({ merchantId, callbackUrl: receiver!.url() });
  const creds: Credentials = credentialsOf(created);
  await addTestReceivingAccounts(createServiceClient(BankCatalogService, services!.server.url));

  t.is((await signedFetch(gateway!.url, creds, "GET", "/v1/available-banks")).status, 200);
  const deposit = await signedFetch(gateway!.url, creds, "POST", "/v1/deposit", { processId: "m-1", amount: 50_000, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  t.is(deposit.status, 201, JSON.stringify(deposit.json));
  const depositId = (deposit.json.data as { transactionId: string }).transactionId;
  t.is((await signedFetch(gateway!.url, creds, "GET", `/v1/deposit/${depositId}`)).status, 200);
  t.is((await signedFetch(gateway!.url, creds, "POST", `/v1/deposit/${depositId}/cancel`)).status, 200);
  t.is((await fetch(`${gateway!.url}/no/such/path`)).status, 404);
  // The cancel's callback reaches the merchant.
  await eventuallyValue(async () => receiver!.received.length, (n) => n >= 1, "a callback delivered", 20_000, 200);

  // The gateway, on PORT, no METRICS_PORT: a loopback caller may read it.
  t.is(gateway!.metricsPort, undefined);
  const gw = await eventuallyValue(
    () => scrape(gateway!.url),
    (r) => has(r.text, "http_server_request_duration_seconds_bucket", { http_route: "/v1/deposit/:transactionId/cancel" }),
    "the gateway's request histogram",
    20_000,
    200,
  );
  t.is(gw.status, 200);
  t.true(has(gw.text, "http_server_request_duration_seconds_bucket", { http_request_method: "GET", http_route: "/v1/available-banks", http_response_status_code: "200", le: "+Inf" }), gw.text);
  t.true(has(gw.text, "http_server_request_duration_seconds_bucket", { http_request_method: "GET", http_route: "/v1/deposit/:transactionId", http_response_status_code: "200", le: "0.1" }));
  t.true(has(gw.text, "http_server_request_duration_seconds_bucket", { http_request_method: "POST", http_route: "/v1/deposit", http_response_status_code: "201" }));
  t.true(has(gw.text, "http_server_request_duration_seconds_count", { http_request_method: "GET", http_route: "", http_response_status_code: "404" }), "an unmatched path has no route, never the raw path");
  t.false(gw.text.includes("/no/such/path"), "raw paths never become labels");
  t.true(has(gw.text, "rpc_client_duration_seconds_bucket", { rpc_system: "grpc", rpc_service: "payments.deposit.v1.DepositService", rpc_method: "CreateDeposit", rpc_grpc_status_code: "0" }), gw.text);
  t.true(has(gw.text, "rpc_client_duration_seconds_bucket", { rpc_system: "grpc", rpc_service: "payments.merchant.v1.MerchantService", rpc_grpc_status_code: "0" }));

  // The services' port.
  const svc = await eventuallyValue(
    () => scrape(services!.server.url),
    (r) => has(r.text, "payments_callback_delivery_duration_seconds_count", {}) && samples(r.text, "payments_callback_delivery_duration_seconds_count")[0]!.value >= 1,
    "the callback delivery histogram",
    20_000,
    200,
  );
  t.true(has(svc.text, "rpc_server_duration_seconds_bucket", { rpc_system: "grpc", rpc_service: "payments.deposit.v1.DepositService", rpc_method: "CancelDeposit", rpc_grpc_status_code: "0", le: "+Inf" }), svc.text);
  t.true(has(svc.text, "rpc_client_duration_seconds_bucket", { rpc_service: "payments.merchant.v1.MerchantService", rpc_method: "GetCallbackTarget" }), "the services' own client calls");
  t.true(has(svc.text, "payments_callback_delivery_duration_seconds_bucket", { le: "+Inf" }));
  t.true(has(svc.text, "payments_callback_attempts_total", { outcome: "delivered" }));
  for (const service of ["merchant", "bank-catalog", "deposit", "payout", "callback-sender"]) {
    t.true(has(svc.text, "payments_outbox_backlog", { service }), `outbox backlog of ${service}`);
  }
  t.true(has(svc.text, "payments_consumer_pending_messages", { consumer: "payout-deposit-credits" }), svc.text);
  t.true(samples(svc.text, "payments_consumer_pending_messages").length >= 2, "the callback-sender's consumers too");
  t.is(samples(svc.text, "payments_payout_worker_backlog").length, 1);
  for (const job of ["outbox-relay", "payout-worker", "callback-sender"]) {
    t.true(has(svc.text, "payments_job_runs_total", { job, result: "ok" }), `runs of ${job}`);
    t.true(has(svc.text, "payments_job_duration_seconds_bucket", { job, le: "+Inf" }), `durations of ${job}`);
  }

  // NATS stops: the deposit's next event waits in the outbox, and the backlog shows it.
  const second = await signedFetch(gateway!.url, creds, "POST", "/v1/deposit", { processId: "m-2", amount: 50_000, customer: { id: "c", name: "Ayşe Yılmaz", username: "ayse" } });
  t.is(second.status, 201, JSON.stringify(second.json));
  const secondId = (second.json.data as { transactionId: string }).transactionId;
  const backlog = (text: string) => samples(text, "payments_outbox_backlog").find((s) => s.labels.service === "deposit")?.value ?? 0;
  await nats.stop();
  try {
    t.is((await signedFetch(gateway!.url, creds, "POST", `/v1/deposit/${secondId}/cancel`)).status, 200);
    const during = await eventuallyValue(() => scrape(services!.server.url), (r) => backlog(r.text) >= 1, "the deposit outbox backlog to rise", 30_000, 200);
    t.true(backlog(during.text) >= 1);
  } finally {
    await nats.start();
  }
  await eventuallyValue(() => scrape(services!.server.url), (r) => backlog(r.text) === 0, "the backlog to drain once NATS is back", 30_000, 200);
});

test.serial("GET /metrics on the gateway's port: not through a proxy it does not trust; with METRICS_TOKEN only with the token", async (t) => {
  t.is((await scrape(gateway!.url, { "x-forwarded-for": "203.0.113.9" })).status, 404, "a forwarded request from an untrusted peer");
  t.is((await fetch(`${gateway!.url}/metrics`, { method: "POST" })).status, 404, "only GET and HEAD, and nothing says the path exists");

  const token = "metrics-token-0123456789";
  const guarded = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_TOKEN: token,
      ...serviceUrlsAt(services!.server.url),
      LOG_LEVEL: "fatal",
    },
  });
  t.teardown(() => guarded.stop());
  t.is((await scrape(guarded.url)).status, 404, "loopback without the token");
  t.is((await scrape(guarded.url, { authorization: "Bearer wrong-token-0123456789" })).status, 404);
  const ok = await scrape(guarded.url, { authorization: `Bearer ${token}` });
  t.is(ok.status, 200);
  t.regex(ok.text, /^# TYPE http_server_request_duration_seconds histogram$/m);

  const none = await startGateway({
    env: { ...TEST_OPERATOR_ENV,
      PORT: "0",
      HOST: "127.0.0.1",
      METRICS_ALLOW: "none",
      METRICS_PORT: "0",
      METRICS_HOST: "127.0.0.1",
      ...serviceUrlsAt(services!.server.url),
      LOG_LEVEL: "fatal",
    },
  });
  t.teardown(() => none.stop());
  t.is((await scrape(none.url)).status, 404, "METRICS_ALLOW=none: not on PORT");
  t.is((await scrape(`http://127.0.0.1:${none.metricsPort}`)).status, 200, "METRICS_PORT still serves it");
});

/** Raw stdout+stderr lines of a process, checked: every line one JSON object with exactly one `msg`. */
function checkLines(t: import("ava").ExecutionContext, output: string): Array<Record<string, unknown>> {
  const lines = output.split("\n").filter((l) => l.length > 0);
  t.true(lines.length > 0);
  return lines.map((line) => {
    // JSON.parse keeps the last of duplicate keys silently: count them in the raw text.
    t.is(line.match(/"msg":/g)?.length ?? 0, 1, `one msg key: ${line}`);
    let parsed: Record<string, unknown> = {};
    t.notThrows(() => (parsed = JSON.parse(line) as Record<string, unknown>), line);
    return parsed;
  });
}

function spawnMain(file: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", file], { cwd: root, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, exited, output: () => output };
}

test("start failures of the gateway, a service and the all-in-one are one JSON line each: level fatal, msg, err, service", async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), "observability-start-"));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const runs: Array<{ file: string; service: string; env: Record<string, string>; reason: RegExp }> = [
    { file: "gateway/src/main.ts", service: "gateway", env: { PORT: "not-a-port" }, reason: /PORT/ },
    { file: "services/merchant/src/main.ts", service: "merchant", env: { ...TEST_OPERATOR_ENV, GRPC_PORT: "0", DATA_DIR: scratch }, reason: /MASTER_KEY/ },
    { file: "packages/all-in-one/src/main.ts", service: "all-in-one", env: { PORT: "0", GRPC_PORT: "-1", DATA_DIR: scratch }, reason: /GRPC_PORT/ },
  ];
  await Promise.all(
    runs.map(async (run) => {
      const proc = spawnMain(run.file, run.env);
      t.is(await proc.exited, 1, proc.output());
      const lines = checkLines(t, proc.output());
      const fatal = lines.filter((l) => l.level === "fatal");
      t.is(fatal.length, 1, proc.output());
      t.is(fatal[0]!.service, run.service);
      t.regex(String(fatal[0]!.msg), /^failed to start: /);
      t.regex(String(fatal[0]!.msg), run.reason);
      t.truthy(fatal[0]!.err);
    }),
  );
});

test("the gateway calling a stopped service logs 'service call failed' as one JSON line with one msg, naming the service", async (t) => {
  const port = await freePort();
  const stopped = `http://127.0.0.1:${await freePort()}`; // nothing listens there
  const proc = spawnMain("gateway/src/main.ts", {
    ...TEST_OPERATOR_ENV,
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    MERCHANT_SERVICE_URL: stopped,
    BANK_CATALOG_SERVICE_URL: stopped,
    DEPOSIT_SERVICE_URL: stopped,
    PAYOUT_SERVICE_URL: stopped,
    CALLBACK_SENDER_SERVICE_URL: stopped,
  });
  t.teardown(() => void proc.child.kill("SIGKILL"));
  await eventuallyValue(async () => proc.output(), (o) => o.includes("gateway ready"), "the gateway to start", 20_000, 200);
  // The merchant's key is looked up first: the merchant service is down.
  const res = await signedFetch(`http://127.0.0.1:${port}`, { apiKey: "pk_missing", apiSecret: "sk_missing" }, "GET", "/v1/available-banks");
  t.is(res.status, 503, JSON.stringify(res.json));
  await eventuallyValue(async () => proc.output(), (o) => o.includes("service call failed"), "the failure logged", 20_000, 200);
  proc.child.kill("SIGTERM");
  await proc.exited;
  const lines = checkLines(t, proc.output());
  const failed = lines.filter((l) => l.msg === "service call failed");
  t.is(failed.length, 1, proc.output());
  t.is(failed[0]!.calledService, "merchant");
  t.is(failed[0]!.rpc, "payments.merchant.v1.MerchantService/GetCredentials");
  t.is(failed[0]!.code, "Unavailable");
  t.is(typeof failed[0]!.error, "string", "the cause is kept, under its own key");
  t.is(failed[0]!.service, "gateway");
});
