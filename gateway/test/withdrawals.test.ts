import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import test, { type ExecutionContext } from "ava";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, eventuallyValue, manualClock, turkishIban, WITHDRAWAL_RECORD_KEYS, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { startGateway, type RunningGateway } from "../src/server.js";
import { decodeMergedCursor, encodeMergedCursor } from "../src/routes/transactions.js";
import { checkReply, signedCall, type Credentials, type Reply } from "./http-client.js";

/*
 * Withdrawals, the balance and the merged transaction listing through the gateway, against
 * the real merchant, bank-catalog, deposit and payout services (SQLite in a temp dir,
 * in-process bus), sharing one manual clock.
 *
 * Two service sets: `live` runs the payout worker and the sandbox bank (20 ms), so
 * withdrawals move on by themselves; `idle` is an API-only replica (PAYOUT_WORKER=0), where
 * a withdrawal stays pending until cancelled, for the tests that need it to stay put
 * (cancel, listings filtered by status). Every reply is checked for the envelope and leaks.
 */

const clock = manualClock();
const PUBLIC_BASE_URL = "https://pay.example.test";
const LOCAL_IPS = ["127.0.0.1", "::1"];

interface Stack {
  dir: string;
  services: RunningServices;
  gateway: RunningGateway;
  merchants: Client<typeof MerchantService>;
  deposits: Client<typeof DepositService>;
  payouts: Client<typeof PayoutService>;
}

let live: Stack | undefined;
let idle: Stack | undefined;

async function startStack(extraEnv: Record<string, string>): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "gateway-withdrawals-"));
  const services = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: {
      DATA_DIR: dir,
      MASTER_KEY: randomBytes(32).toString("hex"),
      LOG_LEVEL: "warn",
      SANDBOX_PAYOUT_DELAY: "20ms",
      PAYOUT_WORKER_INTERVAL: "50ms",
      ...extraEnv,
    },
    clock,
  });
  const url = services.server.url;
  // The merchants here are sandbox merchants (their withdrawals meet the sandbox bank's
  // outcome table); their deposits need the sandbox receiving accounts `pnpm start` seeds.
  await createServiceClient(BankCatalogService, url).seedSandboxAccounts({});
  const gateway = await startGateway({
    // The tests play callers behind a trusted proxy (X-Forwarded-For) to be another IP.
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", PUBLIC_BASE_URL, TRUSTED_PROXIES: "127.0.0.1,::1" },
    bus: services.bus,
    clock,
    merchantUrl: url,
    bankCatalogUrl: url,
    depositUrl: url,
    payoutUrl: url,
    callbackUrl: url,
  });
  return {
    dir,
    services,
    gateway,
    merchants: createServiceClient(MerchantService, url),
    deposits: createServiceClient(DepositService, url),
    payouts: createServiceClient(PayoutService, url),
  };
}

test.before(async () => {
  live = await startStack({});
  idle = await startStack({ PAYOUT_WORKER: "0" });
});

test.after.always(async () => {
  for (const stack of [live, idle]) {
    if (!stack) continue;
    await stack.gateway.stop();
    await stack.services.stop();
    rmSync(stack.dir, { recursive: true, force: true });
  }
});

function must(stack: Stack | undefined): Stack {
  if (!stack) throw new Error("the services did not start");
  return stack;
}

type Merchant = Credentials & { id: string; stack: Stack };
type T = ExecutionContext;

async function newMerchant(options: { stack?: Stack; allowedIps?: string[]; funds?: number } = {}): Promise<Merchant> {
  const stack = options.stack ?? must(live);
  const res = await stack.merchants.createMerchant({ name: `Shop ${randomBytes(3).toString("hex")}`, allowedIps: options.allowedIps ?? LOCAL_IPS, sandbox: true });
  if (!res.merchant) throw new Error("no merchant");
  const merchant = { id: res.merchant.id, apiKey: res.merchant.apiKey, apiSecret: res.apiSecret, stack };
  if (options.funds) await stack.payouts.adjustBalance({ merchantId: merchant.id, amount: BigInt(options.funds), reason: "test funding" });
  return merchant;
}

async function post(t: T, merchant: Merchant, path: string, body: unknown, headers: Record<string, string> = { "Content-Type": "application/json" }): Promise<Reply> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return checkReply(t, await signedCall(merchant.stack.gateway.url, merchant, clock, { method: "POST", path, body: text, headers }));
}

async function get(t: T, merchant: Merchant, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return checkReply(t, await signedCall(merchant.stack.gateway.url, merchant, clock, { path, headers }));
}

function failed(t: T, reply: Reply, status: number, code: string): string {
  t.is(reply.status, status, reply.text);
  t.is(reply.json.success, false);
  t.is(reply.json.error?.code, code, reply.text);
  return reply.json.error?.message ?? "";
}

const GOOD_IBAN = "TR330006100519786457841326";
const ACCOUNT_CLOSED_IBAN = "TR560006200000000000000004";
const UNDECIDED_IBAN = "TR830006200000000000000003";

let counter = 0;
function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    processId: `payout-${counter}-${randomBytes(3).toString("hex")}`,
    amount: 25_000,
    accountName: "Ayşe Yılmaz",
    iban: GOOD_IBAN,
    userId: "u-1",
    userName: "ayse",
    name: "Ayşe Yılmaz",
    ...overrides,
  };
}

async function createWithdrawal(t: T, merchant: Merchant, overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const reply = await post(t, merchant, "/v1/withdraw", body(overrides));
  t.is(reply.status, 201, reply.text);
  return reply.json.data!;
}

async function balance(t: T, merchant: Merchant): Promise<Array<Record<string, unknown>>> {
  const reply = await get(t, merchant, "/v1/balance");
  t.is(reply.status, 200, reply.text);
  return reply.json.data?.balances as Array<Record<string, unknown>>;
}

/** Polls GET /v1/withdraw/{id} until the status is one of `statuses` (the worker runs on real time). */
async function waitForStatus(t: T, merchant: Merchant, id: string, statuses: string[], timeoutMs = 10_000): Promise<Record<string, unknown>> {
  return eventuallyValue(
    async () => {
      const reply = await get(t, merchant, `/v1/withdraw/${id}`);
      t.is(reply.status, 200, reply.text);
      return reply.json.data!;
    },
    (data) => statuses.includes(data.status as string),
    (data) => `withdrawal ${id} to be ${statuses.join(" or ")} (it is still ${String(data.status)})`,
    timeoutMs,
  );
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// ---------------------------------------------------------------- create

test("POST /v1/withdraw answers 201 with the api.md withdrawal fields plus the record fields, and holds the amount", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const sent = body({ iban: "tr33 0006 1005 1978 6457 8413 26", amount: 25_000 });
  const reply = await post(t, merchant, "/v1/withdraw", sent);
  t.is(reply.status, 201, reply.text);
  t.is(reply.json.success, true);
  t.is(reply.json.timestamp, Math.floor(clock.now().getTime() / 1000));
  const data = reply.json.data!;
  t.deepEqual(Object.keys(data), WITHDRAWAL_RECORD_KEYS);
  t.regex(data.transactionId as string, /^[A-Za-z0-9_-]+$/);
  t.deepEqual(
    { ...data, transactionId: "x" },
    {
      transactionId: "x",
      type: "withdrawal",
      processId: sent.processId,
      amount: 25_000,
      currency: "TRY",
      status: "pending",
      bankId: null,
      accountName: "Ayşe Yılmaz",
      // Electronic format: spaces removed, upper case.
      iban: GOOD_IBAN,
      userId: "u-1",
      userName: "ayse",
      name: "Ayşe Yılmaz",
      failureReason: null,
      sequence: 1,
      createdAt: clock.now().toISOString(),
      updatedAt: clock.now().toISOString(),
      completedAt: null,
    },
  );
  t.regex(data.createdAt as string, ISO);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 75_000, held: 25_000 }]);
});

test("bankId (a bank _id of the bank list, or FAST) and currency are kept; currency in any case", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const banks = await get(t, merchant, "/v1/available-banks");
  const akbank = (banks.json.data?.banks as Array<Record<string, unknown>>).find((b) => b.code === "0046")!._id as string;
  t.like(await createWithdrawal(t, merchant, { bankId: akbank, currency: "try" }), { bankId: akbank, currency: "TRY" });
  t.like(await createWithdrawal(t, merchant, { bankId: "FAST", currency: null }), { bankId: "FAST", currency: "TRY" });
  t.like(await createWithdrawal(t, merchant, { bankId: null }), { bankId: null });
});

test("missing required fields are each named in one VALIDATION_ERROR, in the order of the request", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  t.is(
    failed(t, await post(t, merchant, "/v1/withdraw", {}), 400, "VALIDATION_ERROR"),
    "processId: is required; amount: is required; accountName: is required; iban: is required; userId: is required; userName: is required; name: is required",
  );
  const rest = body();
  delete rest.processId;
  delete rest.amount;
  t.is(failed(t, await post(t, merchant, "/v1/withdraw", rest), 400, "VALIDATION_ERROR"), "processId: is required; amount: is required");
  const noIban = body();
  delete noIban.iban;
  delete noIban.userName;
  t.is(failed(t, await post(t, merchant, "/v1/withdraw", noIban), 400, "VALIDATION_ERROR"), "iban: is required; userName: is required");
  t.is(failed(t, await post(t, merchant, "/v1/withdraw", body({ name: null, accountName: null })), 400, "VALIDATION_ERROR"), "accountName: is required; name: is required");
  t.is(
    failed(t, await post(t, merchant, "/v1/withdraw", body({ processId: 7, bankId: 3, currency: [], userId: {} })), 400, "VALIDATION_ERROR"),
    "processId: must be a string; currency: must be a string; bankId: must be a string; userId: must be a string",
  );
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 100_000, held: 0 }]);
});

test("an amount that is not a positive safe integer JSON number is a VALIDATION_ERROR naming amount", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  for (const amount of ["150.5", '"150"', "0", "-1", "1e300", "9007199254740992", "true", "[150]"]) {
    const json = JSON.stringify(body()).replace('"amount":25000', `"amount":${amount}`);
    t.true(json.includes(`"amount":${amount}`));
    t.regex(failed(t, await post(t, merchant, "/v1/withdraw", json), 400, "VALIDATION_ERROR"), /^amount: must be a positive integer/, amount);
  }
});

test("the service's own rules come back under the merchant's JSON names, never the proto ones", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ processId: "p".repeat(51) }, /^processId: .*50/],
    [{ processId: "" }, /^processId: /],
    [{ accountName: "   " }, /^accountName: /],
    [{ userId: "" }, /^userId: /],
    [{ userName: "  " }, /^userName: /],
    [{ name: "x".repeat(201) }, /^name: /],
    [{ bankId: "bnk_doesnotexist" }, /^bankId: /],
    [{ currency: "USD" }, /^currency: .*TRY/],
  ];
  for (const [overrides, expected] of cases) {
    const message = failed(t, await post(t, merchant, "/v1/withdraw", body(overrides)), 400, "VALIDATION_ERROR");
    t.regex(message, expected, JSON.stringify(overrides));
    t.notRegex(message, /process_id|account_name|user_id|user_name|bank_id/, message);
  }
  t.is((await createWithdrawal(t, merchant, { processId: "p".repeat(50) })).processId, "p".repeat(50));
});

test("a body that is not a JSON object is a VALIDATION_ERROR about the body; no Content-Type is 415", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  t.regex(failed(t, await post(t, merchant, "/v1/withdraw", "[1]"), 400, "VALIDATION_ERROR"), /^body: /);
  t.regex(failed(t, await post(t, merchant, "/v1/withdraw", "{nope"), 400, "VALIDATION_ERROR"), /^body: /);
  failed(t, await post(t, merchant, "/v1/withdraw", JSON.stringify(body()), {}), 415, "UNSUPPORTED_MEDIA_TYPE");
});

test("an IBAN that is not a valid Turkish one is 400 INVALID_IBAN: bad checksum, 25 or 27 characters, another country, junk", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  const ibans = [
    "TR330006100519786457841327", // check digits do not match
    "TR33000610051978645784132", // 25 characters
    "TR3300061005197864578413260", // 27 characters
    "DE89370400440532013000", // a valid German IBAN
    "GB82WEST12345698765432", // a valid British IBAN
    "TR33-0006-1005-1978-6457-8413-26",
    "not an iban",
  ];
  for (const iban of ibans) {
    const message = failed(t, await post(t, merchant, "/v1/withdraw", body({ iban })), 400, "INVALID_IBAN");
    t.regex(message, /iban/i, iban);
  }
  // Spaces and lower case are the same IBAN.
  t.is((await createWithdrawal(t, merchant, { iban: " tr33 0006 1005 1978 6457 8413 26 " })).iban, GOOD_IBAN);
});

test("INVALID_IBAN is judged before the balance: a merchant without funds still hears about its IBAN", async (t) => {
  const merchant = await newMerchant();
  failed(t, await post(t, merchant, "/v1/withdraw", body({ iban: "TR330006100519786457841327" })), 400, "INVALID_IBAN");
  failed(t, await post(t, merchant, "/v1/withdraw", body()), 400, "INSUFFICIENT_BALANCE");
});

test("an amount above the available balance is 400 INSUFFICIENT_BALANCE and changes nothing; exactly the balance is fine", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 30_000 });
  const message = failed(t, await post(t, merchant, "/v1/withdraw", body({ amount: 30_001 })), 400, "INSUFFICIENT_BALANCE");
  t.regex(message, /balance/i);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 30_000, held: 0 }]);
  failed(t, await get(t, merchant, `/v1/withdraw?processId=nothing-was-created`), 404, "TRANSACTION_NOT_FOUND");

  await createWithdrawal(t, merchant, { amount: 20_000 });
  // Held money is not available: 10 000 left.
  failed(t, await post(t, merchant, "/v1/withdraw", body({ amount: 10_001 })), 400, "INSUFFICIENT_BALANCE");
  await createWithdrawal(t, merchant, { amount: 10_000 });
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 0, held: 30_000 }]);
  failed(t, await post(t, merchant, "/v1/withdraw", body({ amount: 1 })), 400, "INSUFFICIENT_BALANCE");
});

test("concurrent withdrawals never overdraw: 8 of 10 000 at once against 50 000 give five 201s", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 50_000 });
  const replies = await Promise.all(Array.from({ length: 8 }, () => post(t, merchant, "/v1/withdraw", body({ amount: 10_000 }))));
  t.is(replies.filter((r) => r.status === 201).length, 5, replies.map((r) => r.text).join("\n"));
  t.is(replies.filter((r) => r.status === 400 && r.json.error?.code === "INSUFFICIENT_BALANCE").length, 3);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 0, held: 50_000 }]);
});

// ---------------------------------------------------------------- IP allow-list

test("a merchant with an empty allow-list is refused every withdrawal (403 IP_NOT_WHITELISTED), but may read", async (t) => {
  const merchant = await newMerchant({ allowedIps: [], funds: 100_000 });
  const message = failed(t, await post(t, merchant, "/v1/withdraw", body()), 403, "IP_NOT_WHITELISTED");
  t.regex(message, /whitelisted/i);
  // The IP rule comes before the body: even an invalid one is 403.
  failed(t, await post(t, merchant, "/v1/withdraw", {}), 403, "IP_NOT_WHITELISTED");
  // Reads and deposits stay open to any IP with an empty list.
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 100_000, held: 0 }]);
  failed(t, await get(t, merchant, "/v1/withdraw?processId=x"), 404, "TRANSACTION_NOT_FOUND");
  t.is((await get(t, merchant, "/v1/transactions")).status, 200);
  t.is((await post(t, merchant, "/v1/deposit", { processId: "d-1", amount: 15_000, customer: { id: "c", name: "Ayşe", username: "ayse" } })).status, 201);
});

test("a caller not on the merchant's list is 403 IP_NOT_WHITELISTED, on withdrawals and on every other endpoint", async (t) => {
  const listed = "203.0.113.0/24";
  const merchant = await newMerchant({ stack: must(idle), allowedIps: [...LOCAL_IPS, listed], funds: 100_000 });
  const from = (ip: string) => ({ "Content-Type": "application/json", "X-Forwarded-For": ip });

  failed(t, await post(t, merchant, "/v1/withdraw", body(), from("198.51.100.7")), 403, "IP_NOT_WHITELISTED");
  failed(t, await get(t, merchant, "/v1/balance", { "X-Forwarded-For": "198.51.100.7" }), 403, "IP_NOT_WHITELISTED");
  t.is((await post(t, merchant, "/v1/withdraw", body(), from("203.0.113.9"))).status, 201);

  // A list that holds neither the caller nor the loopback: refused straight from the socket too.
  const elsewhere = await newMerchant({ stack: must(idle), allowedIps: ["192.0.2.10"], funds: 100_000 });
  failed(t, await post(t, elsewhere, "/v1/withdraw", body()), 403, "IP_NOT_WHITELISTED");
  t.is((await post(t, elsewhere, "/v1/withdraw", body(), from("192.0.2.10"))).status, 201);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 75_000, held: 25_000 }]);
});

test("a withdrawal is refused as soon as the merchant's list changes (the gateway's credentials cache is dropped)", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  t.is((await post(t, merchant, "/v1/withdraw", body())).status, 201);
  await merchant.stack.merchants.setAllowedIps({ merchantId: merchant.id, allowedIps: [] });
  // The MerchantChanged event travels over the in-process bus; give it a moment.
  let reply = await post(t, merchant, "/v1/withdraw", body());
  for (let i = 0; i < 40 && reply.status !== 403; i++) {
    await sleep(25);
    reply = await post(t, merchant, "/v1/withdraw", body());
  }
  failed(t, reply, 403, "IP_NOT_WHITELISTED");
});

// ---------------------------------------------------------------- duplicates

test("a repeated processId is 400 DUPLICATE_TRANSACTION with details.transactionId; the amount is held once", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const sent = body();
  const first = await post(t, merchant, "/v1/withdraw", sent);
  t.is(first.status, 201, first.text);
  const again = await post(t, merchant, "/v1/withdraw", { ...sent, amount: 1_000 });
  t.regex(failed(t, again, 400, "DUPLICATE_TRANSACTION"), /processId/);
  t.is(again.json.error?.details?.transactionId, first.json.data?.transactionId as string);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 75_000, held: 25_000 }]);

  // Another merchant may use the same processId, and so may a deposit (a namespace of its own).
  const other = await newMerchant({ stack: must(idle), funds: 100_000 });
  t.is((await post(t, other, "/v1/withdraw", sent)).status, 201);
  t.is((await post(t, merchant, "/v1/deposit", { processId: sent.processId, amount: 15_000, customer: { id: "c", name: "A", username: "a" } })).status, 201);
});

test("6 identical POSTs at once give exactly one 201 and five DUPLICATE_TRANSACTION, never a 500", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const sent = JSON.stringify(body());
  const replies = await Promise.all(Array.from({ length: 6 }, () => post(t, merchant, "/v1/withdraw", sent)));
  const created = replies.filter((r) => r.status === 201);
  t.is(created.length, 1, replies.map((r) => r.text).join("\n"));
  const duplicates = replies.filter((r) => r.status === 400 && r.json.error?.code === "DUPLICATE_TRANSACTION");
  t.is(duplicates.length, 5, replies.map((r) => r.text).join("\n"));
  for (const duplicate of duplicates) t.is(duplicate.json.error?.details?.transactionId, created[0]!.json.data?.transactionId as string);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 75_000, held: 25_000 }]);
});

// ---------------------------------------------------------------- sandbox outcomes and balance

test("a withdrawal to an ordinary IBAN is completed by the sandbox bank; the held amount is paid out", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 100_000, held: 0 }]);
  const created = await createWithdrawal(t, merchant, { amount: 40_000, iban: turkishIban("0001000000000000012345") });
  const done = await waitForStatus(t, merchant, created.transactionId as string, ["completed", "failed"]);
  t.deepEqual(Object.keys(done), WITHDRAWAL_RECORD_KEYS);
  t.like(done, { status: "completed", failureReason: null, amount: 40_000, transactionId: created.transactionId, processId: created.processId });
  t.regex(done.completedAt as string, ISO);
  t.true((done.sequence as number) >= 3, `sequence ${String(done.sequence)}: pending → processing → completed`);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 60_000, held: 0 }]);
});

test("a withdrawal to the sandbox's closed account fails with failureReason ACCOUNT_CLOSED; the amount returns", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  const created = await createWithdrawal(t, merchant, { amount: 40_000, iban: ACCOUNT_CLOSED_IBAN });
  const done = await waitForStatus(t, merchant, created.transactionId as string, ["completed", "failed"]);
  t.like(done, { status: "failed", failureReason: "ACCOUNT_CLOSED" });
  t.regex(done.completedAt as string, ISO);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 100_000, held: 0 }]);

  const byProcessId = await get(t, merchant, `/v1/withdraw?processId=${encodeURIComponent(created.processId as string)}`);
  t.deepEqual(byProcessId.json.data, done);
});

test("a completed deposit funds withdrawals: GET /v1/balance shows it, once", async (t) => {
  const merchant = await newMerchant();
  const deposit = await post(t, merchant, "/v1/deposit", { processId: `dep-${randomBytes(3).toString("hex")}`, amount: 50_000, customer: { id: "c", name: "Ayşe", username: "ayse" } });
  t.is(deposit.status, 201, deposit.text);
  failed(t, await post(t, merchant, "/v1/withdraw", body({ amount: 30_000 })), 400, "INSUFFICIENT_BALANCE");
  await merchant.stack.deposits.confirmDeposit({ depositId: deposit.json.data?.transactionId as string });

  let balances = await balance(t, merchant);
  for (let i = 0; i < 200 && balances[0]?.available !== 50_000; i++) {
    await sleep(25);
    balances = await balance(t, merchant);
  }
  t.deepEqual(balances, [{ currency: "TRY", available: 50_000, held: 0 }]);

  const created = await createWithdrawal(t, merchant, { amount: 30_000 });
  // Held until the sandbox bank answers (which may already have happened), then paid out.
  t.is((await balance(t, merchant))[0]?.available, 20_000);
  await waitForStatus(t, merchant, created.transactionId as string, ["completed"]);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 20_000, held: 0 }]);
});

test("a merchant that never had money sees TRY at zero", async (t) => {
  const merchant = await newMerchant();
  const reply = await get(t, merchant, "/v1/balance");
  t.deepEqual(reply.json.data, { balances: [{ currency: "TRY", available: 0, held: 0 }] });
});

// ---------------------------------------------------------------- read

test("GET /v1/withdraw/{transactionId} and GET /v1/withdraw?processId= answer the same record", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const created = await createWithdrawal(t, merchant, { processId: "payout with spaces & symbols/1" });
  const byId = await get(t, merchant, `/v1/withdraw/${encodeURIComponent(created.transactionId as string)}`);
  t.is(byId.status, 200, byId.text);
  t.deepEqual(byId.json.data, created);
  const byProcessId = await get(t, merchant, `/v1/withdraw?processId=${encodeURIComponent(created.processId as string)}`);
  t.is(byProcessId.status, 200, byProcessId.text);
  t.deepEqual(byProcessId.json.data, created);
});

test("an unknown or unparsable transactionId or processId is 404 TRANSACTION_NOT_FOUND; a missing processId is a VALIDATION_ERROR", async (t) => {
  const merchant = await newMerchant();
  failed(t, await get(t, merchant, "/v1/withdraw/wdr_doesnotexist"), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await get(t, merchant, `/v1/withdraw/${"x".repeat(80)}`), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await get(t, merchant, "/v1/withdraw?processId=nope"), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await post(t, merchant, "/v1/withdraw/wdr_doesnotexist/cancel", ""), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await post(t, merchant, `/v1/withdraw/${"x".repeat(80)}/cancel`, ""), 404, "TRANSACTION_NOT_FOUND");
  t.regex(failed(t, await get(t, merchant, "/v1/withdraw"), 400, "VALIDATION_ERROR"), /^processId: is required/);
  t.regex(failed(t, await get(t, merchant, "/v1/withdraw?processId="), 400, "VALIDATION_ERROR"), /^processId: is required/);
  t.regex(failed(t, await get(t, merchant, "/v1/withdraw?processId=a&processId=b"), 400, "VALIDATION_ERROR"), /^processId: must be given only once/);
});

test("a merchant can neither read nor cancel another merchant's withdrawal (404), nor see it listed or in its balance", async (t) => {
  const owner = await newMerchant({ stack: must(idle), funds: 100_000 });
  const stranger = await newMerchant({ stack: must(idle) });
  const created = await createWithdrawal(t, owner);
  failed(t, await get(t, stranger, `/v1/withdraw/${created.transactionId as string}`), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await get(t, stranger, `/v1/withdraw?processId=${encodeURIComponent(created.processId as string)}`), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await post(t, stranger, `/v1/withdraw/${created.transactionId as string}/cancel`, ""), 404, "TRANSACTION_NOT_FOUND");
  t.deepEqual((await get(t, stranger, "/v1/transactions")).json.data, { items: [], nextCursor: null });
  t.deepEqual((await get(t, stranger, "/v1/transactions?type=withdrawal")).json.data, { items: [], nextCursor: null });
  t.deepEqual(await balance(t, stranger), [{ currency: "TRY", available: 0, held: 0 }]);
  t.is((await get(t, owner, `/v1/withdraw/${created.transactionId as string}`)).json.data?.status, "pending");
});

// ---------------------------------------------------------------- cancel

test.serial("cancel moves a pending withdrawal to cancelled and returns the held amount; again answers 200 unchanged", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const created = await createWithdrawal(t, merchant, { amount: 40_000 });
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 60_000, held: 40_000 }]);
  const path = `/v1/withdraw/${created.transactionId as string}/cancel`;

  clock.advance(1_000);
  const cancelled = await post(t, merchant, path, "", {});
  t.is(cancelled.status, 200, cancelled.text);
  t.deepEqual(Object.keys(cancelled.json.data!), WITHDRAWAL_RECORD_KEYS);
  t.like(cancelled.json.data, { transactionId: created.transactionId, status: "cancelled", sequence: 2, failureReason: null, completedAt: clock.now().toISOString() });
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 100_000, held: 0 }]);

  const again = await post(t, merchant, path, "{}");
  t.is(again.status, 200, again.text);
  t.deepEqual(again.json.data, cancelled.json.data);
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 100_000, held: 0 }]);
  t.is((await get(t, merchant, `/v1/withdraw/${created.transactionId as string}`)).json.data?.status, "cancelled");
});

test("cancel takes an empty body or {}, but not a non-JSON one", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 100_000 });
  const cancel = async (text: string, headers: Record<string, string>) => {
    const created = await createWithdrawal(t, merchant, { amount: 1_000 });
    return post(t, merchant, `/v1/withdraw/${created.transactionId as string}/cancel`, text, headers);
  };
  t.is((await cancel("", {})).status, 200);
  t.is((await cancel("", { "Content-Type": "application/json" })).status, 200);
  t.is((await cancel("{}", { "Content-Type": "application/json" })).status, 200);
  failed(t, await cancel("why=none", { "Content-Type": "application/x-www-form-urlencoded" }), 415, "UNSUPPORTED_MEDIA_TYPE");
  t.regex(failed(t, await cancel("[]", { "Content-Type": "application/json" }), 400, "VALIDATION_ERROR"), /^body: /);
});

test("once processing (or final) a withdrawal cannot be cancelled: 409 INVALID_TRANSACTION_STATE with its status", async (t) => {
  const merchant = await newMerchant({ funds: 100_000 });
  // The sandbox leaves this IBAN's transfer undecided: it stays processing.
  const undecided = await createWithdrawal(t, merchant, { amount: 10_000, iban: UNDECIDED_IBAN });
  await waitForStatus(t, merchant, undecided.transactionId as string, ["processing"]);
  const reply = await post(t, merchant, `/v1/withdraw/${undecided.transactionId as string}/cancel`, "");
  t.regex(failed(t, reply, 409, "INVALID_TRANSACTION_STATE"), /processing/);
  t.deepEqual(reply.json.error?.details, { status: "processing" });
  t.is((await get(t, merchant, `/v1/withdraw/${undecided.transactionId as string}`)).json.data?.status, "processing");

  const completed = await createWithdrawal(t, merchant, { amount: 10_000 });
  await waitForStatus(t, merchant, completed.transactionId as string, ["completed"]);
  const late = await post(t, merchant, `/v1/withdraw/${completed.transactionId as string}/cancel`, "");
  failed(t, late, 409, "INVALID_TRANSACTION_STATE");
  t.deepEqual(late.json.error?.details, { status: "completed" });
  t.deepEqual(await balance(t, merchant), [{ currency: "TRY", available: 80_000, held: 10_000 }]);
});

// ---------------------------------------------------------------- the transaction listing

type Page = { items: Array<Record<string, unknown>>; nextCursor: string | null };

/** Every page of a listing, following nextCursor; the sizes of the pages and the ids in order. */
async function walk(t: T, merchant: Merchant, query: string): Promise<{ sizes: number[]; ids: unknown[]; items: Array<Record<string, unknown>> }> {
  const sizes: number[] = [];
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const path: string = `/v1/transactions?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const reply = await get(t, merchant, path);
    t.is(reply.status, 200, reply.text);
    const data = reply.json.data as Page;
    t.deepEqual(Object.keys(data), ["items", "nextCursor"]);
    sizes.push(data.items.length);
    items.push(...data.items);
    cursor = data.nextCursor;
  } while (cursor !== null && sizes.length < 50);
  return { sizes, ids: items.map((i) => i.transactionId), items };
}

/** Deposits (d) and withdrawals (w) in the given order, a second apart; ids newest first. */
async function history(t: T, merchant: Merchant, kinds: string, stepMs = 1_000): Promise<{ ids: string[]; deposits: string[]; withdrawals: string[] }> {
  const ids: string[] = [];
  const deposits: string[] = [];
  const withdrawals: string[] = [];
  for (const kind of kinds) {
    clock.advance(stepMs);
    if (kind === "d") {
      const reply = await post(t, merchant, "/v1/deposit", { processId: `dep-${randomBytes(4).toString("hex")}`, amount: 15_000, customer: { id: "c", name: "Ayşe", username: "ayse" } });
      t.is(reply.status, 201, reply.text);
      deposits.unshift(reply.json.data?.transactionId as string);
      ids.unshift(reply.json.data?.transactionId as string);
    } else {
      const id = (await createWithdrawal(t, merchant, { amount: 1_000 })).transactionId as string;
      withdrawals.unshift(id);
      ids.unshift(id);
    }
  }
  return { ids, deposits, withdrawals };
}

test.serial("without type, deposits and withdrawals come merged newest first; pages of 3 neither skip nor repeat", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 1_000_000 });
  const made = await history(t, merchant, "dwwdwddwwwd");

  const walked = await walk(t, merchant, "limit=3");
  t.deepEqual(walked.sizes, [3, 3, 3, 2]);
  t.deepEqual(walked.ids, made.ids);
  for (const item of walked.items) t.is(item.type, made.deposits.includes(item.transactionId as string) ? "deposit" : "withdrawal");
  const times = walked.items.map((i) => Date.parse(i.createdAt as string));
  t.deepEqual(times, [...times].sort((a, b) => b - a));

  // Every page size gives the same sequence.
  for (const limit of [1, 2, 4, 5, 11, 100]) t.deepEqual((await walk(t, merchant, `limit=${limit}`)).ids, made.ids, `limit ${limit}`);
  // Default: 20 at most, here all of them on one page.
  const all = await get(t, merchant, "/v1/transactions");
  t.deepEqual((all.json.data as Page).items.map((i) => i.transactionId), made.ids);
  t.is((all.json.data as Page).nextCursor, null);
  // Exactly limit items left: the last page says so with nextCursor null, no empty page after it.
  t.deepEqual((await walk(t, merchant, "limit=11")).sizes, [11]);
});

test.serial("items created in the same millisecond are merged by id and still neither skipped nor repeated", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 1_000_000 });
  const made = await history(t, merchant, "dwdwwddw", 0);
  const expected = [...made.ids].sort().reverse();
  for (const limit of [1, 2, 3, 8]) {
    const walked = await walk(t, merchant, `limit=${limit}`);
    t.deepEqual(walked.ids, expected, `limit ${limit}`);
  }
});

test.serial("type=deposit and type=withdrawal list one kind, each paging with its own cursor", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 1_000_000 });
  const made = await history(t, merchant, "wdwdww");
  const withdrawals = await walk(t, merchant, "type=withdrawal&limit=3");
  t.deepEqual(withdrawals.ids, made.withdrawals);
  t.deepEqual(withdrawals.sizes, [3, 1]);
  for (const item of withdrawals.items) t.deepEqual(Object.keys(item), WITHDRAWAL_RECORD_KEYS);
  const deposits = await walk(t, merchant, "type=deposit&limit=1");
  t.deepEqual(deposits.ids, made.deposits);
  for (const item of deposits.items) t.is(item.type, "deposit");
});

test.serial("status filters the kinds that have it: pending and cancelled both, processing only withdrawals, expired only deposits", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 1_000_000 });
  const made = await history(t, merchant, "dwdw");
  const [w2, w1] = made.withdrawals as [string, string];
  const [d2, d1] = made.deposits as [string, string];
  await post(t, merchant, `/v1/withdraw/${w1}/cancel`, "");
  await post(t, merchant, `/v1/deposit/${d2}/cancel`, "");

  const ids = async (query: string) => (await walk(t, merchant, query)).ids;
  t.deepEqual(await ids("status=cancelled"), [d2, w1]);
  t.deepEqual(await ids("status=cancelled&limit=1"), [d2, w1]);
  t.deepEqual(await ids("status=pending"), [w2, d1]);
  t.deepEqual(await ids("status=cancelled&type=withdrawal"), [w1]);
  t.deepEqual(await ids("status=cancelled&type=deposit"), [d2]);
  // Statuses of one kind only: the other kind is left out, not refused.
  t.deepEqual(await ids("status=processing"), []);
  t.deepEqual(await ids("status=expired"), []);
  // From and to bound both kinds.
  const created = async (id: string, kind: string) => (await get(t, merchant, `/v1/${kind}/${id}`)).json.data?.createdAt as string;
  const from = encodeURIComponent(await created(d2, "deposit"));
  t.deepEqual(await ids(`from=${from}`), [w2, d2]);
  t.deepEqual(await ids(`to=${from}`), [w1, d1]);
});

test("a status of the other kind with a type is a VALIDATION_ERROR naming the type's statuses", async (t) => {
  const merchant = await newMerchant();
  t.is(
    failed(t, await get(t, merchant, "/v1/transactions?type=withdrawal&status=expired"), 400, "VALIDATION_ERROR"),
    "status: must be one of pending, processing, completed, failed, cancelled for type withdrawal",
  );
  t.is(
    failed(t, await get(t, merchant, "/v1/transactions?type=deposit&status=processing"), 400, "VALIDATION_ERROR"),
    "status: must be one of pending, completed, failed, expired, cancelled for type deposit",
  );
  t.is(
    failed(t, await get(t, merchant, "/v1/transactions?status=paid"), 400, "VALIDATION_ERROR"),
    "status: must be one of pending, completed, failed, expired, cancelled, processing",
  );
  t.is(failed(t, await get(t, merchant, "/v1/transactions?type=refund"), 400, "VALIDATION_ERROR"), "type: must be one of deposit, withdrawal");
});

test("a cursor that did not come from the same kind of listing is a VALIDATION_ERROR naming cursor", async (t) => {
  const merchant = await newMerchant({ stack: must(idle), funds: 1_000_000 });
  await history(t, merchant, "dww");
  const merged = (await get(t, merchant, "/v1/transactions?limit=1")).json.data as Page;
  t.truthy(merged.nextCursor);
  const single = (await get(t, merchant, "/v1/transactions?type=withdrawal&limit=1")).json.data as Page;
  t.truthy(single.nextCursor);

  const bad = [
    "not-a-cursor",
    "%%%",
    encodeMergedCursor({}),
    Buffer.from(JSON.stringify({ refund: "" })).toString("base64url"),
    Buffer.from(JSON.stringify({ deposit: 5 })).toString("base64url"),
    Buffer.from("[1,2]").toString("base64url"),
    single.nextCursor!,
    // A merged cursor whose inner positions were not issued by the services.
    encodeMergedCursor({ deposit: "bogus", withdrawal: null }),
  ];
  for (const cursor of bad) {
    t.regex(failed(t, await get(t, merchant, `/v1/transactions?cursor=${encodeURIComponent(cursor)}`), 400, "VALIDATION_ERROR"), /^cursor: /, cursor);
  }
  // And the other way round: a merged cursor means nothing to one kind's listing.
  t.regex(failed(t, await get(t, merchant, `/v1/transactions?type=deposit&cursor=${encodeURIComponent(merged.nextCursor!)}`), 400, "VALIDATION_ERROR"), /^cursor: /);
  t.truthy(decodeMergedCursor(merged.nextCursor!));
});

// ---------------------------------------------------------------- auth

test("the withdrawal endpoints are signed like every other: an unknown key is 401", async (t) => {
  const stack = must(live);
  for (const [method, path] of [
    ["POST", "/v1/withdraw"],
    ["GET", "/v1/withdraw/wdr_x"],
    ["GET", "/v1/withdraw?processId=x"],
    ["POST", "/v1/withdraw/wdr_x/cancel"],
    ["GET", "/v1/balance"],
  ] as const) {
    const reply = checkReply(
      t,
      await signedCall(stack.gateway.url, { apiKey: "pk_nobody", apiSecret: "sk_nobody" }, clock, {
        method,
        path,
        ...(method === "POST" ? { body: "{}", headers: { "Content-Type": "application/json" } } : {}),
      }),
    );
    failed(t, reply, 401, "INVALID_API_KEY");
  }
});

test("a wrong method on the new paths is 405 with Allow", async (t) => {
  const merchant = await newMerchant();
  const reply = checkReply(t, await signedCall(merchant.stack.gateway.url, merchant, clock, { method: "POST", path: "/v1/balance", body: "{}", headers: { "Content-Type": "application/json" } }));
  failed(t, reply, 405, "METHOD_NOT_ALLOWED");
  t.regex(String(reply.headers.allow), /GET/);
});
