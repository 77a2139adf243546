import { type AnswerPolicy, CallbackReceiver, CallbackReceivers, createServiceClient, eventuallyValue } from "@payments/testing";
// The CLI has no runtime dependency on the services; the tests start the real ones, which @payments/testing gives them.
import { startInProcess } from "@payments/testing/services";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { CallbackService, DeliveryStatus, type CallbackEvent } from "@payments/contracts/callback";
import { DepositService, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { resolveEndpoints } from "../src/clients.js";
import { cli, closedPort, singleJson } from "./capture.js";

// The events commands in-process against the real merchant, bank-catalog, deposit, payout and
// callback-sender services, all-in-one on SQLite in a temporary directory, with a short retry
// schedule (100ms, 200ms: three attempts, then failed). Each test's merchant has its own
// callback receiver on 127.0.0.1 that answers 500 or 200 as the test says. Deposits are
// created, confirmed and rejected with the DepositService client; each status change becomes
// a callback event. Each test uses its own merchant, so the tests can run concurrently.

interface AttemptJson {
  number: number;
  attemptedAt: string;
  url: string;
  statusCode: number;
  latencyMs: number;
  error: string;
  outcome: string;
}

interface EventJson {
  id: string;
  merchantId: string;
  type: string;
  transactionType: string;
  transactionId: string;
  sequence: number;
  deliveryStatus: string;
  createdAt: string;
  nextAttemptAt?: string;
  deliveredAt?: string;
  bodyJson: string;
  attempts: AttemptJson[];
}

/** How a merchant's callback endpoint answers every callback until told otherwise: 200 "ok" or 500 "receiver down". */
function answering(status: 200 | 500): AnswerPolicy {
  return () => ({ status, headers: { "content-type": "text/plain" }, body: status === 200 ? "ok" : "receiver down" });
}

let running: RunningServices | undefined;
let dataDir: string;
let url: string;
let merchants: ReturnType<typeof createServiceClient<typeof MerchantService>>;
let deposits: ReturnType<typeof createServiceClient<typeof DepositService>>;
let callbacks: ReturnType<typeof createServiceClient<typeof CallbackService>>;
const receivers = new CallbackReceivers();
let counter = 0;

test.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "cli-events-test-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: {
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString("hex"),
      // Every event these tests fail on purpose would log a warning.
      LOG_LEVEL: "error",
      SHUTDOWN_GRACE: "1s",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
      CALLBACK_POLL_INTERVAL: "50ms",
    },
    receivingAccounts: true,
  });
  url = running.server.url;
  merchants = createServiceClient(MerchantService, url);
  deposits = createServiceClient(DepositService, url);
  callbacks = createServiceClient(CallbackService, url);
});

test.after.always(async () => {
  await running?.stop();
  await receivers.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A merchant whose callbacks go to a receiver of its own, answering 500 at first. */
async function newMerchant(name: string): Promise<{ merchantId: string; receiver: CallbackReceiver }> {
  const receiver = await receivers.start(answering(500));
  const created = await merchants.createMerchant({ name, sandbox: true, callbackUrl: receiver.url() });
  return { merchantId: created.merchant!.id, receiver };
}

async function pendingDeposit(merchantId: string): Promise<Deposit> {
  const n = ++counter;
  const res = await deposits.createDeposit({
    merchantId,
    processId: `order-${n}`,
    amount: 15050n,
    customer: { id: `cust-${n}`, name: "Ayşe Yılmaz", username: `ayse${n}` },
  });
  return res.deposit!;
}

/** A deposit confirmed by an operator: one deposit.completed event. */
async function completedDeposit(merchantId: string): Promise<Deposit> {
  const created = await pendingDeposit(merchantId);
  return (await deposits.confirmDeposit({ depositId: created.id, transferId: "" })).deposit!;
}

/** A deposit rejected by an operator: one deposit.failed event. */
async function failedDeposit(merchantId: string): Promise<Deposit> {
  const created = await pendingDeposit(merchantId);
  return (await deposits.rejectDeposit({ depositId: created.id, reason: "sender is not the customer" })).deposit!;
}

/** Waits until the transaction's event exists and has reached `status` (the sender works on its own schedule). */
async function eventOf(merchantId: string, transactionId: string, status: DeliveryStatus): Promise<CallbackEvent> {
  const event = await eventuallyValue(
    async () => (await callbacks.listEvents({ merchantId, transactionId })).events[0],
    (found) => found?.deliveryStatus === status,
    (found) => `the event of ${transactionId} to be ${DeliveryStatus[status]} (it is ${found ? DeliveryStatus[found.deliveryStatus] : "missing"})`,
    15_000,
  );
  return event!;
}

/** Waits until the event satisfies `done` (the sender works on its own schedule). */
async function waitForEvent(eventId: string, done: (event: CallbackEvent) => boolean, what: string): Promise<CallbackEvent> {
  return eventuallyValue(
    async () => (await callbacks.getEvent({ allMerchants: true, eventId })).event!,
    done,
    (event) => `event ${eventId} to be ${what} (it is ${DeliveryStatus[event.deliveryStatus]} after ${event.attempts.length} attempts)`,
    15_000,
  );
}

async function waitForStatus(eventId: string, status: DeliveryStatus): Promise<CallbackEvent> {
  return waitForEvent(eventId, (e) => e.deliveryStatus === status, DeliveryStatus[status]);
}

async function eventsCli(args: readonly string[]) {
  return cli([...args, "--grpc-url", url]);
}

async function listJson(merchantId: string, ...args: string[]): Promise<{ events: EventJson[]; nextCursor: string }> {
  const r = await eventsCli(["events", "list", "--merchant", merchantId, ...args, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return singleJson(r.stdout) as { events: EventJson[]; nextCursor: string };
}

async function showJson(eventId: string): Promise<EventJson> {
  const r = await eventsCli(["events", "show", eventId, "--json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (singleJson(r.stdout) as { event: EventJson }).event;
}

test("resolveEndpoints: --grpc-url > CALLBACK_SENDER_SERVICE_URL > GRPC_URL > the default for the callback-sender", (t) => {
  t.is(resolveEndpoints({}, {}).callbackSender, "http://127.0.0.1:9090");
  t.is(resolveEndpoints({}, { GRPC_URL: "http://shared:9090" }).callbackSender, "http://shared:9090");
  const split = resolveEndpoints({}, { GRPC_URL: "http://shared:9090", CALLBACK_SENDER_SERVICE_URL: "http://callback-sender:9095/" });
  t.is(split.callbackSender, "http://callback-sender:9095");
  t.is(split.deposit, "http://shared:9090", "the other services keep GRPC_URL");
  t.is(resolveEndpoints({}, { GRPC_URL: "http://shared:9090", CALLBACK_SENDER_SERVICE_URL: "  " }).callbackSender, "http://shared:9090", "empty counts as unset");
  t.is(resolveEndpoints({ grpcUrl: "http://flag:1" }, { CALLBACK_SENDER_SERVICE_URL: "http://callback-sender:9095" }).callbackSender, "http://flag:1");
  t.throws(() => resolveEndpoints({}, { CALLBACK_SENDER_SERVICE_URL: "callback-sender:9095" }), { message: /CALLBACK_SENDER_SERVICE_URL must be an http/ });
});

test("the events commands call the service at CALLBACK_SENDER_SERVICE_URL", async (t) => {
  const { merchantId } = await newMerchant("Split Shop");
  const env = { GRPC_URL: `http://127.0.0.1:${await closedPort()}`, CALLBACK_SENDER_SERVICE_URL: url };
  const listed = await cli(["events", "list", "--merchant", merchantId, "--json"], env);
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(singleJson(listed.stdout), { events: [], nextCursor: "" });

  const nowhere = await cli(["events", "list", "--merchant", merchantId], { GRPC_URL: url, CALLBACK_SENDER_SERVICE_URL: env.GRPC_URL });
  t.is(nowhere.code, 1);
  t.regex(nowhere.stderr, new RegExp(`^error: cannot reach ${env.GRPC_URL.replace(/\./g, "\\.")}`));
});

test("events list shows the merchant's events newest first, filters by delivery status and transaction, and pages with --cursor", async (t) => {
  const { merchantId, receiver } = await newMerchant("List Shop");
  const other = await newMerchant("Other List Shop");
  receiver.policy = answering(200);
  other.receiver.policy = answering(200);
  const paid = await completedDeposit(merchantId);
  const delivered = await eventOf(merchantId, paid.id, DeliveryStatus.DELIVERED);
  await eventOf(other.merchantId, (await completedDeposit(other.merchantId)).id, DeliveryStatus.DELIVERED);
  receiver.policy = answering(500);
  const rejected = await failedDeposit(merchantId);
  const failed = await eventOf(merchantId, rejected.id, DeliveryStatus.FAILED);

  const all = await listJson(merchantId);
  t.is(all.nextCursor, "");
  t.deepEqual(
    all.events.map((e) => [e.id, e.type, e.transactionId, e.deliveryStatus, e.attempts.length]),
    [
      [failed.id, "deposit.failed", rejected.id, "DELIVERY_STATUS_FAILED", 3],
      [delivered.id, "deposit.completed", paid.id, "DELIVERY_STATUS_DELIVERED", 1],
    ],
    "only this merchant's events, newest first",
  );
  t.true(all.events.every((e) => e.merchantId === merchantId && e.transactionType === "TRANSACTION_TYPE_DEPOSIT"));

  t.deepEqual((await listJson(merchantId, "--status", "failed")).events.map((e) => e.id), [failed.id]);
  t.deepEqual((await listJson(merchantId, "--status", "DELIVERED")).events.map((e) => e.id), [delivered.id]);
  t.deepEqual((await listJson(merchantId, "--status", "pending")).events, []);
  t.deepEqual((await listJson(merchantId, "--transaction", paid.id)).events.map((e) => e.id), [delivered.id]);

  const page1 = await listJson(merchantId, "--limit", "1");
  t.deepEqual(page1.events.map((e) => e.id), [failed.id]);
  t.not(page1.nextCursor, "");
  const page2 = await listJson(merchantId, "--limit", "1", "--cursor", page1.nextCursor);
  t.deepEqual(page2.events.map((e) => e.id), [delivered.id]);

  const human = await eventsCli(["events", "list", "--merchant", merchantId, "--limit", "1"]);
  t.is(human.code, 0, human.stderr);
  t.is(human.stderr, "");
  t.regex(human.stdout, /^ID\s+CREATED\s+TYPE\s+TRANSACTION\s+DELIVERY\s+ATTEMPTS\s+LAST ATTEMPT\s+NEXT ATTEMPT\n/);
  t.regex(human.stdout, new RegExp(`${failed.id}\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+deposit\\.failed\\s+${rejected.id}\\s+failed\\s+3\\s+failed \\(HTTP 500\\): receiver down\\s+—`));
  t.regex(human.stdout, /\nMore events: add --cursor \S+\n$/);

  const deliveredRow = await eventsCli(["events", "list", "--merchant", merchantId, "--status", "delivered"]);
  t.regex(deliveredRow.stdout, new RegExp(`${delivered.id}\\s+\\S+\\s+deposit\\.completed\\s+${paid.id}\\s+delivered\\s+1\\s+delivered \\(HTTP 200\\)\\s+—`));
  t.notRegex(deliveredRow.stdout, /More events/);

  const none = await eventsCli(["events", "list", "--merchant", merchantId, "--status", "pending"]);
  t.is(none.code, 0);
  t.is(none.stdout, "No events.\n");
});

test("events show prints every attempt of an event: time, URL, status code, latency, error and outcome", async (t) => {
  const { merchantId, receiver } = await newMerchant("Show Shop");
  const rejected = await failedDeposit(merchantId);
  const failed = await eventOf(merchantId, rejected.id, DeliveryStatus.FAILED);

  const json = await showJson(failed.id);
  t.like(json, { id: failed.id, merchantId, type: "deposit.failed", transactionId: rejected.id, deliveryStatus: "DELIVERY_STATUS_FAILED" });
  t.is(json.nextAttemptAt, undefined);
  t.is(json.deliveredAt, undefined);
  t.deepEqual(
    json.attempts.map((a) => [a.number, a.url, a.statusCode, a.error, a.outcome]),
    [
      [1, receiver.url(), 500, "HTTP 500: receiver down", "retry"],
      [2, receiver.url(), 500, "HTTP 500: receiver down", "retry"],
      [3, receiver.url(), 500, "HTTP 500: receiver down", "failed"],
    ],
  );
  t.true(json.attempts.every((a) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(a.attemptedAt) && Number.isInteger(a.latencyMs) && a.latencyMs >= 0));
  t.is((JSON.parse(json.bodyJson) as { id: string; data: { transactionId: string } }).data.transactionId, rejected.id);

  const human = await eventsCli(["events", "show", failed.id]);
  t.is(human.code, 0, human.stderr);
  t.is(human.stderr, "");
  t.regex(human.stdout, new RegExp(`id\\s+${failed.id}`));
  t.regex(human.stdout, new RegExp(`merchant\\s+${merchantId}`));
  t.regex(human.stdout, /type\s+deposit\.failed/);
  t.regex(human.stdout, new RegExp(`transaction\\s+${rejected.id} \\(deposit, sequence \\d+\\)`));
  t.regex(human.stdout, /delivery status\s+failed/);
  t.regex(human.stdout, /attempts\s+3/);
  t.regex(human.stdout, /\nAttempts:\n#\s+TIME\s+URL\s+STATUS\s+LATENCY\s+OUTCOME\s+ERROR\n/);
  const url = receiver.url().replace(/\./g, "\\.");
  for (const [n, outcome] of [["1", "retry"], ["2", "retry"], ["3", "failed"]]) {
    t.regex(human.stdout, new RegExp(`\\n${n}\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z\\s+${url}\\s+HTTP 500\\s+\\d+ ms\\s+${outcome}\\s+HTTP 500: receiver down\\n`));
  }
  t.notRegex(human.stdout, /next attempt/);

  receiver.policy = answering(200);
  const paid = await completedDeposit(merchantId);
  const delivered = await eventOf(merchantId, paid.id, DeliveryStatus.DELIVERED);
  const shown = await eventsCli(["events", "show", delivered.id]);
  t.regex(shown.stdout, /delivery status\s+delivered/);
  t.regex(shown.stdout, /delivered\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
  t.regex(shown.stdout, new RegExp(`\\n1\\s+\\S+\\s+${url}\\s+HTTP 200\\s+\\d+ ms\\s+delivered\\s+—\\n`));
});

test("events redeliver sends a failed event again: it becomes pending and ends delivered once the receiver answers 200", async (t) => {
  const { merchantId, receiver } = await newMerchant("Redeliver Shop");
  const rejected = await failedDeposit(merchantId);
  const failed = await eventOf(merchantId, rejected.id, DeliveryStatus.FAILED);
  t.deepEqual(receiver.of(failed.id).map((c) => c.status), [500, 500, 500], "the schedule was used up");

  receiver.policy = answering(200);
  const r = await eventsCli(["events", "redeliver", failed.id]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  // The sender may already be answered by the time the response is built.
  t.regex(r.stdout, new RegExp(`^Redelivery of event ${failed.id} requested: (pending, (next attempt \\S+Z|being sent now)|delivered)\\.\\n`));
  t.regex(r.stdout, new RegExp(`id\\s+${failed.id}`));

  const delivered = await waitForStatus(failed.id, DeliveryStatus.DELIVERED);
  t.deepEqual(
    delivered.attempts.map((a) => [a.number, a.statusCode, a.outcome]),
    [
      [1, 500, "retry"],
      [2, 500, "retry"],
      [3, 500, "failed"],
      [4, 200, "delivered"],
    ],
  );
  t.deepEqual(receiver.of(failed.id).map((c) => c.status), [500, 500, 500, 200]);
  const shown = await eventsCli(["events", "show", failed.id]);
  t.regex(shown.stdout, /delivery status\s+delivered/);
  t.regex(shown.stdout, /\n4\s+\S+\s+\S+\s+HTTP 200\s+\d+ ms\s+delivered\s+—\n/);

  // A delivered event can be sent again too; --json prints the event as the service returned it.
  const again = await eventsCli(["events", "redeliver", failed.id, "--json"]);
  t.is(again.code, 0, again.stderr);
  const { event } = singleJson(again.stdout) as { event: EventJson };
  t.like(event, { id: failed.id, merchantId, transactionId: rejected.id });
  t.true(["DELIVERY_STATUS_PENDING", "DELIVERY_STATUS_DELIVERED"].includes(event.deliveryStatus), event.deliveryStatus);
  const redelivered = await waitForEvent(failed.id, (e) => e.deliveryStatus === DeliveryStatus.DELIVERED && e.attempts.length === 5, "delivered a second time");
  t.like(redelivered.attempts.at(-1), { number: 5, statusCode: 200, outcome: "delivered" });
  t.deepEqual(receiver.of(failed.id).map((c) => c.status), [500, 500, 500, 200, 200]);
});

test("events redeliver-failed --merchant --since redelivers only the merchant's failed events at or after the time, and they end delivered", async (t) => {
  const { merchantId, receiver } = await newMerchant("Bulk Shop");
  const other = await newMerchant("Bulk Other Shop");
  const early = await eventOf(merchantId, (await failedDeposit(merchantId)).id, DeliveryStatus.FAILED);
  const late = await eventOf(merchantId, (await failedDeposit(merchantId)).id, DeliveryStatus.FAILED);
  const otherFailed = await eventOf(other.merchantId, (await failedDeposit(other.merchantId)).id, DeliveryStatus.FAILED);
  receiver.policy = answering(200);
  const delivered = await eventOf(merchantId, (await completedDeposit(merchantId)).id, DeliveryStatus.DELIVERED);

  const lateAt = (await showJson(late.id)).createdAt;
  t.true(Date.parse((await showJson(early.id)).createdAt) < Date.parse(lateAt));

  // Just after the late event's status change: nothing to redeliver.
  const after = new Date(Date.parse(lateAt) + 1).toISOString();
  const none = await eventsCli(["events", "redeliver-failed", "--merchant", merchantId, "--since", after]);
  t.is(none.code, 0, none.stderr);
  t.is(none.stdout, `No failed events of merchant ${merchantId} since ${after}: nothing to redeliver.\n`);
  t.is((await showJson(late.id)).deliveryStatus, "DELIVERY_STATUS_FAILED");

  // Exactly at it (written with an offset): the late event only.
  const atWithOffset = new Date(Date.parse(lateAt) + 3 * 3600_000).toISOString().replace("Z", "+03:00");
  const r = await eventsCli(["events", "redeliver-failed", "--merchant", merchantId, "--since", atWithOffset, "--json"]);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(singleJson(r.stdout), { count: 1, eventIds: [late.id] });

  const lateDelivered = await waitForStatus(late.id, DeliveryStatus.DELIVERED);
  t.deepEqual(lateDelivered.attempts.map((a) => a.outcome), ["retry", "retry", "failed", "delivered"]);
  t.is((await showJson(early.id)).deliveryStatus, "DELIVERY_STATUS_FAILED", "before --since: left alone");
  t.is((await showJson(otherFailed.id)).deliveryStatus, "DELIVERY_STATUS_FAILED", "another merchant's: left alone");
  t.is((await showJson(delivered.id)).attempts.length, 1, "a delivered event is not sent again");

  // A date alone is midnight UTC: the early event is the only failed one left.
  const human = await eventsCli(["events", "redeliver-failed", "--merchant", merchantId, "--since", "2000-01-01"]);
  t.is(human.code, 0, human.stderr);
  t.is(human.stdout, `Redelivering 1 failed event of merchant ${merchantId} since 2000-01-01T00:00:00.000Z:\n  ${early.id}\n`);
  t.is((await waitForStatus(early.id, DeliveryStatus.DELIVERED)).attempts.at(-1)?.outcome, "delivered");
  t.is((await showJson(otherFailed.id)).deliveryStatus, "DELIVERY_STATUS_FAILED");
  t.deepEqual(other.receiver.of(otherFailed.id).map((c) => c.status), [500, 500, 500]);
});

test("an unknown event id exits 1 with EVENT_NOT_FOUND; an id the service refuses with VALIDATION_ERROR names the field", async (t) => {
  for (const verb of ["show", "redeliver"]) {
    const r = await eventsCli(["events", verb, "evt_doesnotexist"]);
    t.is(r.code, 1, verb);
    t.is(r.stdout, "");
    t.regex(r.stderr, /^error: EVENT_NOT_FOUND: /);
    t.is(r.stderr.split("\n").length, 2, "one line on stderr, no stack");
  }
  const tooLong = await eventsCli(["events", "show", "e".repeat(41)]);
  t.is(tooLong.code, 1);
  t.regex(tooLong.stderr, /^error: VALIDATION_ERROR: .*\(field: event_id\)\n$/);
  const longMerchant = await eventsCli(["events", "redeliver-failed", "--merchant", "m".repeat(101), "--since", "2026-01-01T00:00:00Z"]);
  t.is(longMerchant.code, 1);
  t.regex(longMerchant.stderr, /^error: VALIDATION_ERROR: .*\(field: merchant_id\)\n$/);
});

test("events commands refuse a missing --merchant or --since, a bad --status, --limit or --since, and a missing event id, with exit 2 before any call", async (t) => {
  const nowhere = `http://127.0.0.1:${await closedPort()}`;
  const bad: Array<[string[], RegExp]> = [
    [["events", "list"], /--merchant/],
    [["events", "list", "--merchant", " "], /--merchant.*must not be empty/],
    [["events", "list", "--merchant", "m_x", "--status", "sent"], /--status.*pending, delivered, failed/],
    [["events", "list", "--merchant", "m_x", "--limit", "0"], /--limit/],
    [["events", "list", "--merchant", "m_x", "--limit", "101"], /--limit/],
    [["events", "list", "--merchant", "m_x", "--limit", "abc"], /--limit/],
    [["events", "show"], /event-id/],
    [["events", "redeliver"], /event-id/],
    [["events", "redeliver-failed", "--since", "2026-01-01T00:00:00Z"], /--merchant/],
    [["events", "redeliver-failed", "--merchant", "m_x"], /--since/],
    [["events", "redeliver-failed", "--merchant", "", "--since", "2026-01-01T00:00:00Z"], /--merchant.*must not be empty/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", "yesterday"], /--since.*ISO 8601/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", "1763805600"], /--since.*ISO 8601/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", "2026-11-22T10:00:00"], /--since.*zone/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", "22.11.2026 10:00"], /--since.*ISO 8601/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", "2026-02-30T00:00:00Z"], /--since.*not a real date/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", "2026-11-22T25:00:00Z"], /--since.*not a real date/],
    [["events", "redeliver-failed", "--merchant", "m_x", "--since", ""], /--since/],
    [["events", "resend", "evt_x"], /unknown command/],
  ];
  for (const [args, message] of bad) {
    const r = await cli([...args, "--grpc-url", nowhere]);
    t.is(r.code, 2, args.join(" "));
    t.is(r.stdout, "");
    t.regex(r.stderr, message, args.join(" "));
    t.notRegex(r.stderr, /cannot reach/);
  }
});

test("the help lists the events commands and CALLBACK_SENDER_SERVICE_URL", async (t) => {
  const top = await cli(["--help"]);
  t.is(top.code, 0);
  t.regex(top.stdout, /\n\s+events\s+merchants' callback events/);
  t.regex(top.stdout, /CALLBACK_SENDER_SERVICE_URL/);
  const group = await cli(["events", "--help"]);
  t.is(group.code, 0);
  for (const command of ["list", "show", "redeliver", "redeliver-failed"]) t.regex(group.stdout, new RegExp(`\\n\\s+${command}\\b`), command);
  const bulk = await cli(["events", "redeliver-failed", "--help"]);
  t.regex(bulk.stdout, /--since <time>/);
  t.regex(bulk.stdout, /--merchant <id>/);
});
