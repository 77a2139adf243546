import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Webhook } from "standardwebhooks";
import { Code } from "@connectrpc/connect";
import { CallbackService } from "@payments/contracts/callback";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { startServices } from "@payments/access";
import { verifyCallback } from "@payments/signing";
import { CallbackReceivers, createServiceClient, rejectionOf, TEST_OPERATOR_ENV, testMerchantUser } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { createCallbackModule } from "../src/index.js";
import { TEST_RESPONSE_LIMIT } from "../src/routes/send-test-event.js";

// SendTestEvent: a signed test event POSTed now to a real receiver on 127.0.0.1, answered with
// what the receiver said; a receiver's failure (a 500, no answer in time, an address the policy
// refuses) is an answer, not an error. All-in-one on SQLite, with a short CALLBACK_TIMEOUT.

// Long enough that a loaded CI machine still gets its answers in time; the hanging receiver waits it out once.
const TIMEOUT_MS = 2_000;
const dirs = [mkdtempSync(join(tmpdir(), "callbacks-test-event-")), mkdtempSync(join(tmpdir(), "callbacks-test-event-strict-"))];
const receivers = new CallbackReceivers();
let running: RunningServices | undefined;
/** A callback-sender of its own with the production address policy: loopback is refused. */
let strict: RunningServices | undefined;

test.before(async () => {
  running = await startInProcess(["merchant", "callback-sender"], {
    env: {
      DATA_DIR: dirs[0]!,
      MASTER_KEY: "d".repeat(64),
      LOG_LEVEL: "fatal",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_TIMEOUT: `${TIMEOUT_MS}ms`,
      CALLBACK_CLAIM_TIMEOUT: "3s",
    },
  });
  strict = await startServices([createCallbackModule()], {
    mode: "split",
    env: { DATA_DIR: dirs[1]!, GRPC_PORT: "0", LOG_LEVEL: "fatal", MERCHANT_SERVICE_URL: running.server.url, CALLBACK_ALLOW_PRIVATE: "0", ...TEST_OPERATOR_ENV },
  });
});

test.after.always(async () => {
  await strict?.stop();
  await running?.stop();
  await receivers.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const merchants = () => createServiceClient(MerchantService, running!.server.url);
const callbacks = (services = running!) => createServiceClient(CallbackService, services.server.url);

async function merchant(callbackUrl: string) {
  const created = await merchants().createMerchant({ name: "Test Event Shop", allowedIps: [], callbackUrl, sandbox: true });
  return { merchantId: created.merchant!.id, apiSecret: created.apiSecret, webhookSecret: created.webhookSecret };
}

test("a test event arrives signed as real callbacks are, verifies with the SDK's verifier, and the receiver's answer comes back", async (t) => {
  const receiver = await receivers.start(() => ({ status: 200, body: "got it, thanks" }));
  const m = await merchant(receiver.url("/hooks/payments?shop=7"));

  const answer = await callbacks().sendTestEvent({ merchantId: m.merchantId });
  t.like(answer, { url: receiver.url("/hooks/payments?shop=7"), delivered: true, statusCode: 200, responseBody: "got it, thanks", error: "" });
  t.regex(answer.eventId, /^evt_test_/);
  t.true(answer.durationMs >= 0n && answer.durationMs < BigInt(TIMEOUT_MS));

  t.is(receiver.received.length, 1);
  const [arrived] = receiver.received;
  t.is(arrived!.path, "/hooks/payments?shop=7");
  t.like(arrived!.headers, { "content-type": "application/json", "x-event-id": answer.eventId, "x-event-type": "test", "webhook-id": answer.eventId });
  const verdict = verifyCallback({ secrets: m.apiSecret, headers: arrived!.headers, body: arrived!.body, path: arrived!.path });
  t.true(verdict.ok, verdict.ok ? "" : verdict.message);
  if (verdict.ok) t.like(verdict.event, { id: answer.eventId, type: "test", data: { test: true, merchantId: m.merchantId, status: "test", sequence: 0 } });
  const standard = arrived!.headers as Record<string, string>;
  t.notThrows(() => new Webhook(m.webhookSecret).verify(arrived!.text, standard), "the Standard Webhooks signature verifies too");

  t.deepEqual((await callbacks().listEvents({ merchantId: m.merchantId })).events, [], "nothing is stored");
});

test("a receiver answering 500 is an answer: delivered false, its status and the first 2 KiB of its body; no retry", async (t) => {
  const big = `${"ü".repeat(10)}${"x".repeat(5000)}`;
  const receiver = await receivers.start(() => ({ status: 500, body: big }));
  const m = await merchant(receiver.url());

  const answer = await callbacks().sendTestEvent({ merchantId: m.merchantId });
  t.like(answer, { delivered: false, statusCode: 500 });
  t.is(Buffer.byteLength(answer.responseBody), TEST_RESPONSE_LIMIT);
  t.true(answer.responseBody.startsWith("ü".repeat(10)));
  t.regex(answer.error, /^HTTP 500: ü/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(receiver.received.length, 1, "not retried");
});

test("a receiver that does not answer within CALLBACK_TIMEOUT is an answer saying so", async (t) => {
  const receiver = await receivers.start(() => "hang");
  const m = await merchant(receiver.url());

  const answer = await callbacks().sendTestEvent({ merchantId: m.merchantId });
  receiver.release();
  t.like(answer, { delivered: false, statusCode: 0, responseBody: "", error: `no answer within ${TIMEOUT_MS} ms` });
  t.true(answer.durationMs >= BigInt(TIMEOUT_MS - 50) && answer.durationMs < 5_000n, String(answer.durationMs));
});

test("an address the policy refuses is an answer, and nothing is sent", async (t) => {
  const receiver = await receivers.start();
  const m = await merchant(receiver.url());

  const answer = await callbacks(strict).sendTestEvent({ merchantId: m.merchantId });
  t.like(answer, { delivered: false, statusCode: 0, url: receiver.url() });
  t.regex(answer.error, /127\.0\.0\.1/);
  t.is(receiver.received.length, 0);
});

test("a URL set a moment ago is the one used", async (t) => {
  const first = await receivers.start();
  const second = await receivers.start();
  const m = await merchant(first.url());
  t.true((await callbacks().sendTestEvent({ merchantId: m.merchantId })).delivered);
  await merchants().setCallbackUrl({ merchantId: m.merchantId, callbackUrl: second.url() });
  t.is((await callbacks().sendTestEvent({ merchantId: m.merchantId })).url, second.url());
  t.is(second.received.length, 1);
});

test("no callback URL is FAILED_PRECONDITION NO_CALLBACK_URL; an unknown merchant NOT_FOUND; no merchant id VALIDATION_ERROR", async (t) => {
  const m = await merchant("");
  t.like(await rejectionOf(callbacks().sendTestEvent({ merchantId: m.merchantId })), { code: Code.FailedPrecondition, reason: "NO_CALLBACK_URL" });
  t.like(await rejectionOf(callbacks().sendTestEvent({ merchantId: "mer_nope" })), { code: Code.NotFound, reason: "MERCHANT_NOT_FOUND" });
  t.like(await rejectionOf(callbacks().sendTestEvent({ merchantId: "" })), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "merchant_id" });
});

test("the merchant's owner and developers send their own test events; finance and viewers may not; another merchant's is NOT_FOUND", async (t) => {
  const receiver = await receivers.start();
  const mine = await merchant(receiver.url("/mine"));
  const other = await merchant(receiver.url("/other"));
  const as = (role: Parameters<typeof testMerchantUser>[1]) => createServiceClient(CallbackService, running!.server.url, { operator: testMerchantUser(mine.merchantId, role), approver: null });
  for (const role of ["finance", "viewer"] as const) {
    t.like(await rejectionOf(as(role).sendTestEvent({ merchantId: mine.merchantId })), { code: Code.PermissionDenied }, role);
  }
  t.like(await rejectionOf(as("owner").sendTestEvent({ merchantId: other.merchantId })), { code: Code.NotFound });
  t.is(receiver.to(receiver.url("/other")).length, 0, "nothing went to the other merchant");
  for (const role of ["owner", "developer"] as const) t.true((await as(role).sendTestEvent({ merchantId: mine.merchantId })).delivered, role);
  t.is(receiver.to(receiver.url("/mine")).length, 2);
});
