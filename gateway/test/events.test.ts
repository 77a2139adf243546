import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import test, { type ExecutionContext } from "ava";
import type { Client } from "@connectrpc/connect";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { CallbackReceiver, createServiceClient, eventuallyValue, manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { verify } from "@payments/signing";
import { encodeMergedCursor } from "../src/routes/transactions.js";
import { startGateway, type RunningGateway } from "../src/server.js";
import { call, signedCall, type Credentials, type Reply } from "./http-client.js";

/*
 * The callback event log through the gateway (GET /v1/events, GET /v1/events/{id},
 * POST /v1/events/{id}/redeliver), against the real merchant, bank-catalog, deposit, payout
 * and callback-sender services (SQLite in a temp dir, in-process bus) and a real HTTP
 * receiver on localhost standing in for the merchants' callback endpoints.
 *
 * Services and gateway share one manual clock: the sender's retries are due only when a
 * test moves it (schedule 100 ms, 200 ms), so an event that got a 500 stays pending until
 * then. Every test that moves the clock is serial, and so is every test here, since a
 * pending event would move on under another test's clock step.
 */

const clock = manualClock();
const PUBLIC_BASE_URL = "https://pay.example.test";
const LOCAL_IPS = ["127.0.0.1", "::1"];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EVENT_KEYS = ["id", "type", "createdAt", "data", "deliveryStatus", "nextAttemptAt", "deliveredAt", "attempts"];
const ATTEMPT_KEYS = ["number", "attemptedAt", "url", "statusCode", "latencyMs", "error", "outcome"];

/** The merchants' callback endpoint: 200, except 500 for the deposits whose processId is in `refusing`. */
const refusing = new Set<string>();
const receiver = new CallbackReceiver((callback) =>
  refusing.has((JSON.parse(callback.text) as { data: { processId: string } }).data.processId) ? { status: 500, headers: { "content-type": "text/plain" }, body: "nope" } : { status: 200 },
);
let dataDir: string | undefined;
let running: RunningServices | undefined;
let gateway: RunningGateway | undefined;
let merchants: Client<typeof MerchantService>;
let deposits: Client<typeof DepositService>;

test.before(async () => {
  await receiver.start();
  dataDir = mkdtempSync(join(tmpdir(), "gateway-events-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: {
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString("hex"),
      // Refused callbacks are logged as warnings; here they are the point.
      LOG_LEVEL: "error",
      PUBLIC_BASE_URL,
      // The clock moves by seconds here; no deposit may expire on its own in between.
      DEPOSIT_TTL: "24h",
      CALLBACK_ALLOW_PRIVATE: "1",
      CALLBACK_RETRY_SCHEDULE: "100ms,200ms",
      CALLBACK_POLL_INTERVAL: "50ms",
    },
    clock,
    receivingAccounts: true,
  });
  const url = running.server.url;
  merchants = createServiceClient(MerchantService, url);
  deposits = createServiceClient(DepositService, url);
  gateway = await startGateway({
    // Behind a trusted proxy (loopback), so a test can be another caller with X-Forwarded-For.
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", PUBLIC_BASE_URL, TRUSTED_PROXIES: "127.0.0.1,::1" },
    bus: running.bus,
    clock,
    merchantUrl: url,
    bankCatalogUrl: url,
    depositUrl: url,
    payoutUrl: url,
    callbackUrl: url,
  });
});

test.after.always(async () => {
  await gateway?.stop();
  await running?.stop();
  await receiver.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function gw(): string {
  if (!gateway) throw new Error("the gateway did not start");
  return gateway.url;
}

type T = ExecutionContext;
type Merchant = Credentials & { id: string; callbackUrl: string };
type EventJson = Record<string, unknown> & { id: string; type: string; deliveryStatus: string; attempts: Array<Record<string, unknown>>; data: Record<string, unknown> };
type Page = { items: EventJson[]; nextCursor: string | null };

async function newMerchant(options: { allowedIps?: string[] } = {}): Promise<Merchant> {
  const name = randomBytes(4).toString("hex");
  const callbackUrl = receiver.url(`/callbacks/${name}?shop=${name}`);
  const res = await merchants.createMerchant({ name: `Shop ${name}`, allowedIps: options.allowedIps ?? LOCAL_IPS, callbackUrl });
  if (!res.merchant) throw new Error("no merchant");
  return { id: res.merchant.id, apiKey: res.merchant.apiKey, apiSecret: res.apiSecret, callbackUrl };
}

/** Every reply: the envelope of api.md, a request id, and nothing from inside (stack, SQL, driver text). */
function checkReply(t: T, reply: Reply): Reply {
  t.regex(String(reply.headers["content-type"]), /^application\/json/, reply.text);
  t.truthy(reply.headers["x-request-id"]);
  t.is(typeof reply.json.success, "boolean");
  t.true(Number.isInteger(reply.json.timestamp));
  t.deepEqual(Object.keys(reply.json).sort(), reply.json.success ? ["data", "success", "timestamp"] : ["error", "success", "timestamp"]);
  t.notRegex(reply.text, /\bat .+:\d+:\d+|\.ts:\d+|node_modules|SELECT |INSERT |UPDATE .+ SET|(?<![\w-])(?:SQLITE|ER_[A-Z_]+|knex)|callback_events/i, reply.text);
  return reply;
}

async function get(t: T, merchant: Credentials, path: string, headers: Record<string, string> = {}, base = gw()): Promise<Reply> {
  return checkReply(t, await signedCall(base, merchant, clock, { path, headers }));
}

async function post(t: T, merchant: Credentials, path: string, body = "", headers: Record<string, string> = {}, base = gw()): Promise<Reply> {
  return checkReply(t, await signedCall(base, merchant, clock, { method: "POST", path, body, headers }));
}

function failed(t: T, reply: Reply, status: number, code: string): string {
  t.is(reply.status, status, reply.text);
  t.is(reply.json.success, false);
  t.is(reply.json.error?.code, code, reply.text);
  return reply.json.error?.message ?? "";
}

async function listEvents(t: T, merchant: Credentials, query = ""): Promise<Page> {
  const reply = await get(t, merchant, `/v1/events${query ? `?${query}` : ""}`);
  t.is(reply.status, 200, reply.text);
  t.deepEqual(Object.keys(reply.json.data!), ["items", "nextCursor"]);
  return reply.json.data as unknown as Page;
}

async function getEvent(t: T, merchant: Credentials, eventId: string): Promise<EventJson> {
  const reply = await get(t, merchant, `/v1/events/${encodeURIComponent(eventId)}`);
  t.is(reply.status, 200, reply.text);
  return reply.json.data as EventJson;
}

/** The event of one transaction, as GET /v1/events?transactionId= lists it, once `ready` holds. */
async function eventOf(t: T, merchant: Merchant, transactionId: string, ready: (e: EventJson) => boolean = (e) => e.deliveryStatus === "delivered"): Promise<EventJson> {
  return eventuallyValue(async () => {
    const page = await listEvents(t, merchant, `transactionId=${encodeURIComponent(transactionId)}`);
    const [event] = page.items;
    return event && ready(event) ? event : undefined;
  }, `the event of ${transactionId}`);
}

type Outcome = "completed" | "cancelled" | "failed";

/** A deposit created and moved to `outcome` at once, `stepMs` after the previous one: one status-change event. */
async function finalDeposit(merchant: Merchant, outcome: Outcome, options: { processId?: string; stepMs?: number } = {}): Promise<string> {
  clock.advance(options.stepMs ?? 1_000);
  const { deposit } = await deposits.createDeposit({
    merchantId: merchant.id,
    processId: options.processId ?? `dep-${randomBytes(4).toString("hex")}`,
    amount: 15_000n,
    customer: { id: "c-1", name: "Ayşe Yılmaz", username: "ayse" },
  });
  const depositId = deposit!.id;
  if (outcome === "completed") await deposits.confirmDeposit({ depositId });
  else if (outcome === "cancelled") await deposits.cancelDeposit({ merchantId: merchant.id, depositId });
  else await deposits.rejectDeposit({ depositId, reason: "NAME_MISMATCH" });
  return depositId;
}

/** Every page of a listing, following nextCursor: the page sizes and the ids in order. */
async function walk(t: T, merchant: Credentials, query: string): Promise<{ sizes: number[]; ids: string[] }> {
  const sizes: number[] = [];
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Page = await listEvents(t, merchant, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    sizes.push(page.items.length);
    ids.push(...page.items.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor !== null && sizes.length < 50);
  return { sizes, ids };
}

// ---------------------------------------------------------------- listing

test.serial("GET /v1/events lists the merchant's own events newest first: the callback body as sent plus its delivery", async (t) => {
  const merchant = await newMerchant();
  const other = await newMerchant();
  const completed = await finalDeposit(merchant, "completed");
  const foreign = await finalDeposit(other, "completed");
  const cancelled = await finalDeposit(merchant, "cancelled");
  const rejected = await finalDeposit(merchant, "failed");
  for (const id of [completed, cancelled, rejected]) await eventOf(t, merchant, id);
  const foreignEvent = await eventOf(t, other, foreign);

  const page = await listEvents(t, merchant);
  t.is(page.nextCursor, null);
  t.deepEqual(
    page.items.map((e) => [e.type, e.data.transactionId]),
    [
      ["deposit.failed", rejected],
      ["deposit.cancelled", cancelled],
      ["deposit.completed", completed],
    ],
  );
  t.false(page.items.some((e) => e.id === foreignEvent.id));

  for (const event of page.items) {
    t.deepEqual(Object.keys(event), EVENT_KEYS);
    t.regex(event.id, /^[A-Za-z0-9_-]+$/);
    // data is the transaction record, exactly as GET /v1/deposit/{id} answers it now (nothing changed since).
    const record = await get(t, merchant, `/v1/deposit/${event.data.transactionId as string}`);
    t.deepEqual(event.data, record.json.data);
    t.is(event.createdAt, event.data.completedAt);
    t.like(event, { deliveryStatus: "delivered", nextAttemptAt: null });
    t.regex(event.deliveredAt as string, ISO);
    t.is(event.attempts.length, 1);
    const [attempt] = event.attempts;
    t.deepEqual(Object.keys(attempt!), ATTEMPT_KEYS);
    t.like(attempt, { number: 1, url: merchant.callbackUrl, statusCode: 200, error: null, outcome: "delivered" });
    t.regex(attempt!.attemptedAt as string, ISO);
    t.true(Number.isInteger(attempt!.latencyMs) && (attempt!.latencyMs as number) >= 0);

    // What the merchant received is the listed body, byte for byte, signed with its secret.
    const [received] = receiver.of(event.id);
    t.deepEqual(JSON.parse(received!.text), { id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });
    t.is(received!.headers["x-event-type"], event.type);
    const parts = { timestamp: String(received!.headers["x-timestamp"]), method: "POST", path: received!.path, body: received!.text };
    t.true(verify([merchant.apiSecret], parts, String(received!.headers["x-signature"])));
  }

  // The other merchant sees only its own.
  t.deepEqual((await listEvents(t, other)).items.map((e) => e.id), [foreignEvent.id]);
});

test.serial("transactionId (an addition) lists the events of one of the merchant's transactions; another merchant's transaction lists nothing", async (t) => {
  const merchant = await newMerchant();
  const other = await newMerchant();
  const mine = await finalDeposit(merchant, "cancelled");
  await finalDeposit(merchant, "completed");
  const theirs = await finalDeposit(other, "cancelled");
  const event = await eventOf(t, merchant, mine);
  await eventOf(t, other, theirs);

  const page = await listEvents(t, merchant, `transactionId=${mine}`);
  t.deepEqual(page.items.map((e) => e.id), [event.id]);
  t.deepEqual(await listEvents(t, merchant, `transactionId=${theirs}`), { items: [], nextCursor: null });
  t.deepEqual(await listEvents(t, merchant, "transactionId=dep_nothing"), { items: [], nextCursor: null });
  // Combined with a delivery status.
  t.deepEqual((await listEvents(t, merchant, `transactionId=${mine}&deliveryStatus=delivered`)).items.map((e) => e.id), [event.id]);
  t.deepEqual((await listEvents(t, merchant, `transactionId=${mine}&deliveryStatus=failed`)).items, []);
});

test.serial("deliveryStatus lists pending, delivered or failed events only; a failed event shows every attempt", async (t) => {
  const merchant = await newMerchant();
  const failing = `refuse-${randomBytes(3).toString("hex")}`;
  const waiting = `refuse-${randomBytes(3).toString("hex")}`;
  refusing.add(failing);
  refusing.add(waiting);
  t.teardown(() => {
    refusing.delete(failing);
    refusing.delete(waiting);
  });

  const delivered = await finalDeposit(merchant, "completed");
  const deliveredEvent = await eventOf(t, merchant, delivered);

  // Refused on every attempt of the schedule (100 ms, then 200 ms, on the manual clock): failed.
  const failedDeposit = await finalDeposit(merchant, "cancelled", { processId: failing });
  await eventOf(t, merchant, failedDeposit, (e) => e.attempts.length === 1);
  clock.advance(100);
  await eventOf(t, merchant, failedDeposit, (e) => e.attempts.length === 2);
  clock.advance(200);
  const failedEvent = await eventOf(t, merchant, failedDeposit, (e) => e.deliveryStatus === "failed");
  t.like(failedEvent, { nextAttemptAt: null, deliveredAt: null });
  t.deepEqual(
    failedEvent.attempts.map((a) => [a.number, a.statusCode, a.outcome]),
    [
      [1, 500, "retry"],
      [2, 500, "retry"],
      [3, 500, "failed"],
    ],
  );
  for (const attempt of failedEvent.attempts) t.regex(attempt.error as string, /500.*nope/);

  // Refused once and waiting for its retry: pending, with the time of the next attempt.
  const pendingDeposit = await finalDeposit(merchant, "cancelled", { processId: waiting });
  const pendingEvent = await eventOf(t, merchant, pendingDeposit, (e) => e.attempts.length === 1 && e.nextAttemptAt !== null);
  t.like(pendingEvent, { deliveryStatus: "pending", deliveredAt: null, nextAttemptAt: new Date(clock.now().getTime() + 100).toISOString() });
  t.like(pendingEvent.attempts[0], { number: 1, statusCode: 500, outcome: "retry" });

  const ids = async (query: string) => (await listEvents(t, merchant, query)).items.map((e) => e.id);
  t.deepEqual(await ids("deliveryStatus=pending"), [pendingEvent.id]);
  t.deepEqual(await ids("deliveryStatus=delivered"), [deliveredEvent.id]);
  t.deepEqual(await ids("deliveryStatus=failed"), [failedEvent.id]);
  t.deepEqual(await ids(""), [pendingEvent.id, failedEvent.id, deliveredEvent.id]);
  // Empty is the same as absent.
  t.deepEqual(await ids("deliveryStatus="), [pendingEvent.id, failedEvent.id, deliveredEvent.id]);
});

test.serial("pages follow nextCursor newest first, neither skipping nor repeating, also across events of the same millisecond", async (t) => {
  const merchant = await newMerchant();
  const made: string[] = [];
  for (const [outcome, stepMs] of [
    ["completed", 1_000],
    ["cancelled", 0],
    ["failed", 0],
    ["cancelled", 1_000],
    ["completed", 1_000],
    ["cancelled", 0],
    ["failed", 1_000],
  ] as Array<[Outcome, number]>) {
    made.push(await finalDeposit(merchant, outcome, { stepMs }));
  }
  const events = [];
  for (const id of made) events.push(await eventOf(t, merchant, id));

  // Newest first: by the time of the status change, then by id (descending) within one millisecond.
  const expected = [...events]
    .sort((a, b) => Date.parse(b.createdAt as string) - Date.parse(a.createdAt as string) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((e) => e.id);
  t.deepEqual((await listEvents(t, merchant)).items.map((e) => e.id), expected);

  const byThree = await walk(t, merchant, "limit=3");
  t.deepEqual(byThree.sizes, [3, 3, 1]);
  t.deepEqual(byThree.ids, expected);
  for (const limit of [1, 2, 4, 6, 100]) t.deepEqual((await walk(t, merchant, `limit=${limit}`)).ids, expected, `limit ${limit}`);
  // Exactly limit items: one page whose nextCursor is null, no empty page after it.
  t.deepEqual((await walk(t, merchant, "limit=7")).sizes, [7]);
  // A cursor keeps the filter it is used with.
  t.deepEqual((await walk(t, merchant, "limit=2&deliveryStatus=delivered")).ids, expected);
  t.deepEqual((await walk(t, merchant, "limit=2&deliveryStatus=failed")).ids, []);
});

test.serial("a bad deliveryStatus, limit, cursor or transactionId is 400 VALIDATION_ERROR naming the parameter, and changes nothing", async (t) => {
  const merchant = await newMerchant();
  const id = await finalDeposit(merchant, "completed");
  await finalDeposit(merchant, "cancelled");
  await eventOf(t, merchant, id);
  const before = await listEvents(t, merchant);
  const sentBefore = receiver.to(merchant.callbackUrl).length;

  const bad = async (query: string) => failed(t, await get(t, merchant, `/v1/events?${query}`), 400, "VALIDATION_ERROR");
  for (const status of ["sent", "PENDING", "expired", "0", "2"]) {
    t.is(await bad(`deliveryStatus=${status}`), "deliveryStatus: must be one of pending, delivered, failed", status);
  }
  t.is(await bad("deliveryStatus=pending&deliveryStatus=failed"), "deliveryStatus: must be given only once");
  for (const limit of ["0", "101", "-1", "1.5", "abc", "1e2", "99999"]) t.is(await bad(`limit=${limit}`), "limit: must be an integer from 1 to 100", limit);
  t.is(await bad("limit=1&limit=2"), "limit: must be given only once");
  const first = await listEvents(t, merchant, "limit=1");
  t.truthy(first.nextCursor);
  const cursors = [
    "not-a-cursor",
    "%25%25%25",
    encodeURIComponent(Buffer.from("[1,2]").toString("base64url")),
    encodeURIComponent(Buffer.from(JSON.stringify([1.5, "x"])).toString("base64url")),
    // A cursor of the merged transaction listing is no event cursor.
    encodeURIComponent(encodeMergedCursor({ deposit: "", withdrawal: null })),
    `${encodeURIComponent(first.nextCursor!)}x`,
  ];
  for (const cursor of cursors) t.regex(await bad(`cursor=${cursor}`), /^cursor: /, cursor);
  t.regex(await bad(`transactionId=${"x".repeat(41)}`), /^transactionId: /);
  // Every problem of the gateway's own checks in one message.
  t.is(await bad("deliveryStatus=sent&limit=0"), "deliveryStatus: must be one of pending, delivered, failed; limit: must be an integer from 1 to 100");

  // Nothing was sent or changed.
  t.deepEqual(await listEvents(t, merchant), before);
  t.is(receiver.to(merchant.callbackUrl).length, sentBefore);
  // Unknown parameters are ignored.
  t.deepEqual(await listEvents(t, merchant, "status=whatever&type=x"), before);
});

// ---------------------------------------------------------------- one event

test.serial("GET /v1/events/{eventId} answers the event as listed; unknown, unparsable or another merchant's is 404 EVENT_NOT_FOUND", async (t) => {
  const merchant = await newMerchant();
  const other = await newMerchant();
  const event = await eventOf(t, merchant, await finalDeposit(merchant, "completed"));
  t.deepEqual(await getEvent(t, merchant, event.id), event);

  for (const path of [`/v1/events/evt_doesnotexist`, `/v1/events/${"x".repeat(80)}`, `/v1/events/${encodeURIComponent("a b/c")}`]) {
    failed(t, await get(t, merchant, path), 404, "EVENT_NOT_FOUND");
  }
  const message = failed(t, await get(t, other, `/v1/events/${event.id}`), 404, "EVENT_NOT_FOUND");
  t.regex(message, /event/i);
  t.false(message.includes(merchant.id));
});

// ---------------------------------------------------------------- redeliver

test.serial("redeliver: a delivered event comes back pending and is delivered again, same X-Event-Id and body, a second attempt logged", async (t) => {
  const merchant = await newMerchant();
  const event = await eventOf(t, merchant, await finalDeposit(merchant, "completed"));
  t.is(receiver.of(event.id).length, 1);

  clock.advance(1_000);
  // No body and no Content-Type, as for a cancel.
  const reply = await post(t, merchant, `/v1/events/${event.id}/redeliver`);
  t.is(reply.status, 200, reply.text);
  const redelivered = reply.json.data as EventJson;
  t.deepEqual(Object.keys(redelivered), EVENT_KEYS);
  t.like(redelivered, { id: event.id, type: event.type, createdAt: event.createdAt, data: event.data, deliveryStatus: "pending" });
  // Due now, or already being sent (then no next attempt is planned).
  t.true(redelivered.nextAttemptAt === null || redelivered.nextAttemptAt === clock.now().toISOString(), String(redelivered.nextAttemptAt));

  const again = await eventOf(t, merchant, event.data.transactionId as string, (e) => e.deliveryStatus === "delivered" && e.attempts.length === 2);
  t.like(again.attempts[1], { number: 2, statusCode: 200, outcome: "delivered", error: null, attemptedAt: clock.now().toISOString() });
  t.is(again.deliveredAt, clock.now().toISOString());
  const both = receiver.of(event.id);
  t.is(both.length, 2);
  t.is(both[1]!.text, both[0]!.text);
  t.is(both[1]!.path, both[0]!.path);
});

test.serial("redeliver: a failed event is sent again once the merchant's endpoint answers, attempts numbered on", async (t) => {
  const merchant = await newMerchant();
  const processId = `refuse-${randomBytes(3).toString("hex")}`;
  refusing.add(processId);
  t.teardown(() => refusing.delete(processId));
  const depositId = await finalDeposit(merchant, "failed", { processId });
  await eventOf(t, merchant, depositId, (e) => e.attempts.length === 1);
  clock.advance(100);
  await eventOf(t, merchant, depositId, (e) => e.attempts.length === 2);
  clock.advance(200);
  const failedEvent = await eventOf(t, merchant, depositId, (e) => e.deliveryStatus === "failed");

  refusing.delete(processId);
  const reply = await post(t, merchant, `/v1/events/${failedEvent.id}/redeliver`, "{}", { "Content-Type": "application/json" });
  t.is(reply.status, 200, reply.text);
  t.is((reply.json.data as EventJson).deliveryStatus, "pending");
  const delivered = await eventOf(t, merchant, depositId, (e) => e.deliveryStatus === "delivered");
  t.deepEqual(
    delivered.attempts.map((a) => [a.number, a.outcome]),
    [
      [1, "retry"],
      [2, "retry"],
      [3, "failed"],
      [4, "delivered"],
    ],
  );
  t.deepEqual((await listEvents(t, merchant, "deliveryStatus=failed")).items, []);
});

test.serial("redeliver of an unknown, unparsable or another merchant's event is 404 EVENT_NOT_FOUND and sends nothing", async (t) => {
  const owner = await newMerchant();
  const stranger = await newMerchant();
  const event = await eventOf(t, owner, await finalDeposit(owner, "cancelled"));

  failed(t, await post(t, stranger, `/v1/events/${event.id}/redeliver`), 404, "EVENT_NOT_FOUND");
  failed(t, await post(t, owner, "/v1/events/evt_doesnotexist/redeliver"), 404, "EVENT_NOT_FOUND");
  failed(t, await post(t, owner, `/v1/events/${"x".repeat(80)}/redeliver`), 404, "EVENT_NOT_FOUND");
  await sleep(200);
  t.is(receiver.to(owner.callbackUrl).length, 1);
  t.deepEqual(await getEvent(t, owner, event.id), event);
});

test.serial("redeliver takes an empty body or a JSON object, nothing else", async (t) => {
  const merchant = await newMerchant();
  const event = await eventOf(t, merchant, await finalDeposit(merchant, "completed"));
  const path = `/v1/events/${event.id}/redeliver`;
  failed(t, await post(t, merchant, path, "again=1", { "Content-Type": "application/x-www-form-urlencoded" }), 415, "UNSUPPORTED_MEDIA_TYPE");
  t.regex(failed(t, await post(t, merchant, path, "[]", { "Content-Type": "application/json" }), 400, "VALIDATION_ERROR"), /^body: /);
  t.is((await getEvent(t, merchant, event.id)).deliveryStatus, "delivered");
  t.is((await post(t, merchant, path, "", { "Content-Type": "application/json" })).status, 200);
});

// ---------------------------------------------------------------- edge rules

test.serial("the IP allow-list applies: a caller not on a non-empty list is 403 on every event endpoint; an empty list lets reads and redelivery through", async (t) => {
  const listed = await newMerchant({ allowedIps: ["192.0.2.10"] });
  await finalDeposit(listed, "completed");
  // The loopback is not on its list: the event is found as the listed caller, behind the trusted proxy.
  const from = (ip: string) => ({ "X-Forwarded-For": ip });
  failed(t, await get(t, listed, "/v1/events"), 403, "IP_NOT_WHITELISTED");
  const page = await eventuallyValue(async () => {
    const reply = await get(t, listed, "/v1/events", from("192.0.2.10"));
    t.is(reply.status, 200, reply.text);
    const data = reply.json.data as unknown as Page;
    return data.items.length > 0 ? data : undefined;
  }, "the listed merchant's event");
  const eventId = page.items[0]!.id;

  for (const [method, path] of [
    ["GET", "/v1/events"],
    ["GET", `/v1/events/${eventId}`],
    ["POST", `/v1/events/${eventId}/redeliver`],
  ] as const) {
    const reply = method === "GET" ? await get(t, listed, path, from("198.51.100.7")) : await post(t, listed, path, "", from("198.51.100.7"));
    failed(t, reply, 403, "IP_NOT_WHITELISTED");
    const ok = method === "GET" ? await get(t, listed, path, from("192.0.2.10")) : await post(t, listed, path, "", from("192.0.2.10"));
    t.is(ok.status, 200, ok.text);
  }

  const open = await newMerchant({ allowedIps: [] });
  const openEvent = await eventOf(t, open, await finalDeposit(open, "cancelled"));
  t.is((await get(t, open, `/v1/events/${openEvent.id}`, from("198.51.100.7"))).status, 200);
  t.is((await post(t, open, `/v1/events/${openEvent.id}/redeliver`, "", from("198.51.100.7"))).status, 200);
});

test.serial("the event endpoints are signed like every other (401), and a wrong method is 405 with Allow", async (t) => {
  const nobody = { apiKey: "pk_nobody", apiSecret: "sk_nobody" };
  failed(t, await get(t, nobody, "/v1/events"), 401, "INVALID_API_KEY");
  failed(t, await get(t, nobody, "/v1/events/evt_x"), 401, "INVALID_API_KEY");
  failed(t, await post(t, nobody, "/v1/events/evt_x/redeliver"), 401, "INVALID_API_KEY");
  const unsigned = checkReply(t, await call(gw(), { path: "/v1/events" }));
  failed(t, unsigned, 401, "MISSING_API_KEY");

  const merchant = await newMerchant();
  const wrong = await post(t, merchant, "/v1/events", "{}", { "Content-Type": "application/json" });
  failed(t, wrong, 405, "METHOD_NOT_ALLOWED");
  t.regex(String(wrong.headers.allow), /GET/);
  const getRedeliver = await get(t, merchant, "/v1/events/evt_x/redeliver");
  failed(t, getRedeliver, 405, "METHOD_NOT_ALLOWED");
  t.regex(String(getRedeliver.headers.allow), /POST/);
});

test.serial("an unreachable callback-sender is 503 SERVICE_UNAVAILABLE on every event endpoint and in /healthz, leaking nothing", async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const deadPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const url = running!.server.url;
  const lonely = await startGateway({
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", HEALTH_TIMEOUT: "500ms", RPC_TIMEOUT: "1s" },
    bus: running!.bus,
    clock,
    merchantUrl: url,
    bankCatalogUrl: url,
    depositUrl: url,
    payoutUrl: url,
    callbackUrl: `http://127.0.0.1:${deadPort}`,
  });
  t.teardown(() => lonely.stop());
  const merchant = await newMerchant();
  for (const reply of [
    await get(t, merchant, "/v1/events", {}, lonely.url),
    await get(t, merchant, "/v1/events/evt_x", {}, lonely.url),
    await post(t, merchant, "/v1/events/evt_x/redeliver", "", {}, lonely.url),
  ]) {
    failed(t, reply, 503, "SERVICE_UNAVAILABLE");
    t.false(reply.text.includes(String(deadPort)));
    t.false(reply.text.includes("ECONNREFUSED"));
  }
  // The other endpoints do not need it.
  t.is((await get(t, merchant, "/v1/balance", {}, lonely.url)).status, 200);

  const health = checkReply(t, await call(lonely.url, { path: "/healthz" }));
  failed(t, health, 503, "SERVICE_UNAVAILABLE");
  t.like(health.json.error?.details, { merchant: "SERVING", payout: "SERVING", "callback-sender": "UNREACHABLE" });
});
