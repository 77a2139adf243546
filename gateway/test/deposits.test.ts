import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { Client } from "@connectrpc/connect";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { type RunningServices } from "@payments/kit";
import { createServiceClient, credentialsOf, DEPOSIT_RECORD_KEYS, manualClock, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { startGateway, type RunningGateway } from "../src/server.js";
import { checkReply, signedCall, type Credentials, type Reply } from "./http-client.js";

/*
 * Deposits and the transaction listing through the gateway, against the real merchant,
 * bank-catalog and deposit services (SQLite in a temp dir, in-process bus), sharing one
 * manual clock. Every reply is checked for the envelope and for leaks (stack, SQL).
 */

const clock = manualClock();
const PUBLIC_BASE_URL = "https://pay.example.test";
const THIRTY_MINUTES = 30 * 60_000;

let dataDir: string | undefined;
let running: RunningServices | undefined;
let gateway: RunningGateway | undefined;
let merchants: Client<typeof MerchantService>;
let bankCatalog: Client<typeof BankCatalogService>;
let depositService: Client<typeof DepositService>;

type Merchant = Credentials & { id: string };

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-deposits-"));
  running = await startInProcess(["merchant", "bank-catalog", "deposit", "payout"], {
    env: { DATA_DIR: dataDir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn" },
    clock,
    receivingAccounts: true,
  });
  merchants = createServiceClient(MerchantService, running.server.url);
  bankCatalog = createServiceClient(BankCatalogService, running.server.url);
  depositService = createServiceClient(DepositService, running.server.url);
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", PUBLIC_BASE_URL },
    bus: running.bus,
    clock,
    merchantUrl: running.server.url,
    bankCatalogUrl: running.server.url,
    depositUrl: running.server.url,
    payoutUrl: running.server.url,
    callbackUrl: running.server.url,
  });
});

test.after.always(async () => {
  await gateway?.stop();
  await running?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function gw(): string {
  if (!gateway) throw new Error("the gateway did not start");
  return gateway.url;
}

async function newMerchant(): Promise<Merchant> {
  const res = await merchants.createMerchant({ name: `Shop ${randomBytes(3).toString("hex")}`, allowedIps: [] });
  return credentialsOf(res);
}

type T = ExecutionContext;

async function post(t: T, merchant: Credentials, path: string, body: unknown, headers: Record<string, string> = { "Content-Type": "application/json" }): Promise<Reply> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return checkReply(t, await signedCall(gw(), merchant, clock, { method: "POST", path, body: text, headers }));
}

async function get(t: T, merchant: Credentials, path: string): Promise<Reply> {
  return checkReply(t, await signedCall(gw(), merchant, clock, { path }));
}

function failed(t: T, reply: Reply, status: number, code: string): string {
  t.is(reply.status, status, reply.text);
  t.is(reply.json.success, false);
  t.is(reply.json.error?.code, code, reply.text);
  return reply.json.error?.message ?? "";
}

let counter = 0;
function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    processId: `order-${counter}-${randomBytes(3).toString("hex")}`,
    amount: 15050,
    customer: { id: "c-1", name: "Ayşe Yılmaz", username: "ayse" },
    ...overrides,
  };
}

async function createDeposit(t: T, merchant: Credentials, overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const reply = await post(t, merchant, "/v1/deposit", body(overrides));
  t.is(reply.status, 201, reply.text);
  return reply.json.data!;
}

async function bankId(code: string): Promise<string> {
  const res = await bankCatalog.listBanks({});
  const bank = res.banks.find((b) => b.code === code);
  if (!bank) throw new Error(`no seeded bank ${code}`);
  return bank.id;
}

// ---------------------------------------------------------------- create

test("POST /v1/deposit answers 201 with the api.md deposit fields plus the record fields", async (t) => {
  const merchant = await newMerchant();
  const akbank = await bankId("0046");
  const sent = body({ bankCode: akbank, metadata: { cart: "42", items: [1, 2] } });
  const reply = await post(t, merchant, "/v1/deposit", sent);
  t.is(reply.status, 201, reply.text);
  t.is(reply.json.success, true);
  t.is(reply.json.timestamp, Math.floor(clock.now().getTime() / 1000));
  const data = reply.json.data!;
  t.deepEqual(Object.keys(data), DEPOSIT_RECORD_KEYS);

  t.regex(data.transactionId as string, /^[A-Za-z0-9_-]+$/);
  t.is(data.type, "deposit");
  t.is(data.processId, sent.processId);
  t.is(data.amount, 15050);
  t.is(data.requestedAmount, 15050);
  t.is(data.currency, "TRY");
  t.is(data.status, "pending");
  const account = data.assignedAccount as Record<string, unknown>;
  t.deepEqual(Object.keys(account).sort(), ["accountName", "bankName", "iban"]);
  t.is(account.bankName, "Akbank");
  t.regex(account.iban as string, /^TR\d{24}$/);
  t.true(typeof account.accountName === "string" && (account.accountName).length > 0);
  t.true(typeof data.reference === "string" && (data.reference).length > 0);
  t.true((data.checkoutUrl as string).startsWith(`${PUBLIC_BASE_URL}/checkout?token=`));
  t.true((new URL(data.checkoutUrl as string).searchParams.get("token") ?? "").length >= 22);
  t.is(data.bankCode, akbank);
  t.deepEqual(data.customer, { id: "c-1", name: "Ayşe Yılmaz", username: "ayse" });
  t.deepEqual(data.metadata, { cart: "42", items: [1, 2] });
  t.is(data.failureReason, null);
  t.is(data.sequence, 1);
  t.is(data.completedAt, null);

  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
  for (const key of ["expiresAt", "createdAt", "updatedAt"]) t.regex(data[key] as string, iso);
  t.is(Date.parse(data.expiresAt as string) - Date.parse(data.createdAt as string), THIRTY_MINUTES);
  t.is(data.createdAt, clock.now().toISOString());
  t.is(data.updatedAt, data.createdAt);
});

test("without bankCode the deposit has bankCode null, currency TRY by default, and metadata null", async (t) => {
  const merchant = await newMerchant();
  const data = await createDeposit(t, merchant, { currency: null, bankCode: null, metadata: null });
  t.is(data.bankCode, null);
  t.is(data.currency, "TRY");
  t.is(data.metadata, null);
  t.is(data.status, "pending");
});

test("currency is accepted in any case and answered as its code", async (t) => {
  const merchant = await newMerchant();
  t.is((await createDeposit(t, merchant, { currency: "try" })).currency, "TRY");
});

test("an amount that is not a positive safe integer JSON number is a VALIDATION_ERROR naming amount", async (t) => {
  const merchant = await newMerchant();
  const amounts = ["150.5", '"150"', "0", "-1", "-15050", "1e300", "9007199254740992", "90071992547409910", '"NaN"', "true", "{}", "[150]"];
  for (const amount of amounts) {
    const json = JSON.stringify(body()).replace('"amount":15050', `"amount":${amount}`);
    t.true(json.includes(`"amount":${amount}`));
    const message = failed(t, await post(t, merchant, "/v1/deposit", json), 400, "VALIDATION_ERROR");
    t.regex(message, /^amount: must be a positive integer/, `amount ${amount}`);
  }
});

test("the largest safe integer is an amount; the bank limits then decide (AMOUNT_OUT_OF_RANGE, not a validation error)", async (t) => {
  const merchant = await newMerchant();
  const message = failed(t, await post(t, merchant, "/v1/deposit", body({ amount: Number.MAX_SAFE_INTEGER })), 400, "AMOUNT_OUT_OF_RANGE");
  t.regex(message, /TRY/);
});

test("missing processId and amount are both named in one VALIDATION_ERROR", async (t) => {
  const merchant = await newMerchant();
  const rest = body();
  delete rest.processId;
  delete rest.amount;
  const message = failed(t, await post(t, merchant, "/v1/deposit", rest), 400, "VALIDATION_ERROR");
  t.is(message, "processId: is required; amount: is required");
});

test("every problem of a body is listed, each as field: problem, joined by '; '", async (t) => {
  const merchant = await newMerchant();
  const message = failed(
    t,
    await post(t, merchant, "/v1/deposit", { processId: 12, amount: null, currency: 3, customer: { id: "c", username: null }, metadata: [] }),
    400,
    "VALIDATION_ERROR",
  );
  t.is(
    message,
    "processId: must be a string; amount: is required; currency: must be a string; customer.name: is required; customer.username: is required; metadata: must be a JSON object",
  );
});

test("an empty body object names every required field", async (t) => {
  const merchant = await newMerchant();
  t.is(failed(t, await post(t, merchant, "/v1/deposit", {}), 400, "VALIDATION_ERROR"), "processId: is required; amount: is required; customer: is required");
});

test("a processId of 51 characters is a VALIDATION_ERROR naming processId; 50 is fine", async (t) => {
  const merchant = await newMerchant();
  const message = failed(t, await post(t, merchant, "/v1/deposit", body({ processId: "p".repeat(51) })), 400, "VALIDATION_ERROR");
  t.regex(message, /^processId: /);
  t.regex(message, /50/);
  t.false(message.includes("process_id"));
  t.is((await createDeposit(t, merchant, { processId: "p".repeat(50) })).processId, "p".repeat(50));
});

test("an empty processId is a VALIDATION_ERROR naming processId", async (t) => {
  const merchant = await newMerchant();
  t.regex(failed(t, await post(t, merchant, "/v1/deposit", body({ processId: "" })), 400, "VALIDATION_ERROR"), /^processId: is required/);
});

test("an unsupported currency is a VALIDATION_ERROR naming currency", async (t) => {
  const merchant = await newMerchant();
  const message = failed(t, await post(t, merchant, "/v1/deposit", body({ currency: "USD" })), 400, "VALIDATION_ERROR");
  t.regex(message, /^currency: /);
  t.regex(message, /TRY/);
});

test("an unknown bankCode is a VALIDATION_ERROR naming bankCode, never bank_id", async (t) => {
  const merchant = await newMerchant();
  const message = failed(t, await post(t, merchant, "/v1/deposit", body({ bankCode: "bnk_doesnotexist" })), 400, "VALIDATION_ERROR");
  t.regex(message, /^bankCode: /);
  t.false(message.includes("bank_id"));
});

test("a missing or blank customer.name is a VALIDATION_ERROR naming customer.name", async (t) => {
  const merchant = await newMerchant();
  const missing = failed(t, await post(t, merchant, "/v1/deposit", body({ customer: { id: "c", username: "u" } })), 400, "VALIDATION_ERROR");
  t.is(missing, "customer.name: is required");
  // Blank is the service's rule (trimming); its proto path comes back as the same JSON path.
  const blank = failed(t, await post(t, merchant, "/v1/deposit", body({ customer: { id: "c", name: "   ", username: "u" } })), 400, "VALIDATION_ERROR");
  t.regex(blank, /^customer\.name: /);
});

test("a customer that is not an object is a VALIDATION_ERROR naming customer", async (t) => {
  const merchant = await newMerchant();
  t.is(failed(t, await post(t, merchant, "/v1/deposit", body({ customer: "ayse" })), 400, "VALIDATION_ERROR"), "customer: must be an object");
});

test("metadata that is an array (or a string) is a VALIDATION_ERROR naming metadata", async (t) => {
  const merchant = await newMerchant();
  t.is(failed(t, await post(t, merchant, "/v1/deposit", body({ metadata: [1, 2] })), 400, "VALIDATION_ERROR"), "metadata: must be a JSON object");
  t.is(failed(t, await post(t, merchant, "/v1/deposit", body({ metadata: "x" })), 400, "VALIDATION_ERROR"), "metadata: must be a JSON object");
});

test("metadata over the service's size limit is a VALIDATION_ERROR naming metadata, never metadata_json", async (t) => {
  const merchant = await newMerchant();
  const message = failed(t, await post(t, merchant, "/v1/deposit", body({ metadata: { blob: "x".repeat(9000) } })), 400, "VALIDATION_ERROR");
  t.regex(message, /^metadata: /);
  t.false(message.includes("metadata_json"));
});

test("metadata nested thousands of levels deep is a VALIDATION_ERROR naming metadata, never a 500", async (t) => {
  const merchant = await newMerchant();
  for (const levels of [2_000, 5_000, 10_000]) {
    const deep = `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
    const text = JSON.stringify(body({ metadata: "DEEP" })).replace('"DEEP"', deep);
    const message = failed(t, await post(t, merchant, "/v1/deposit", text), 400, "VALIDATION_ERROR");
    t.regex(message, /^metadata: is nested too deeply/);
  }
});

test("a body that is not a JSON object is a VALIDATION_ERROR about the body", async (t) => {
  const merchant = await newMerchant();
  t.regex(failed(t, await post(t, merchant, "/v1/deposit", "[1]"), 400, "VALIDATION_ERROR"), /^body: /);
  t.regex(failed(t, await post(t, merchant, "/v1/deposit", "{not json"), 400, "VALIDATION_ERROR"), /^body: /);
});

test("a repeated processId is 400 DUPLICATE_TRANSACTION with details.transactionId of the existing deposit", async (t) => {
  const merchant = await newMerchant();
  const sent = body();
  const first = await post(t, merchant, "/v1/deposit", sent);
  t.is(first.status, 201);
  const again = await post(t, merchant, "/v1/deposit", { ...sent, amount: 20000 });
  failed(t, again, 400, "DUPLICATE_TRANSACTION");
  t.is(again.json.error?.details?.transactionId, first.json.data?.transactionId as string);

  // Another merchant may use the same processId.
  const other = await newMerchant();
  t.is((await post(t, other, "/v1/deposit", sent)).status, 201);
});

test("10 identical POSTs at once give exactly one 201 and nine DUPLICATE_TRANSACTION, never a 500", async (t) => {
  const merchant = await newMerchant();
  const sent = JSON.stringify(body());
  const replies = await Promise.all(Array.from({ length: 10 }, () => post(t, merchant, "/v1/deposit", sent)));
  const created = replies.filter((r) => r.status === 201);
  t.is(created.length, 1, replies.map((r) => r.text).join("\n"));
  const duplicates = replies.filter((r) => r.status === 400 && r.json.error?.code === "DUPLICATE_TRANSACTION");
  t.is(duplicates.length, 9, replies.map((r) => r.text).join("\n"));
  for (const duplicate of duplicates) t.is(duplicate.json.error?.details?.transactionId, created[0]!.json.data?.transactionId as string);
});

test("an amount outside the chosen bank's limits is 400 AMOUNT_OUT_OF_RANGE stating the range and TRY", async (t) => {
  const merchant = await newMerchant();
  const garanti = await bankId("0062");
  await bankCatalog.setMerchantLimit({ limit: { merchantId: merchant.id, bankId: garanti, minAmount: 5_000n, maxAmount: 20_000n } });

  const below = await post(t, merchant, "/v1/deposit", body({ bankCode: garanti, amount: 4_999 }));
  const message = failed(t, below, 400, "AMOUNT_OUT_OF_RANGE");
  t.regex(message, /5000/);
  t.regex(message, /20000/);
  t.regex(message, /TRY/);
  t.like(below.json.error?.details, { minAmount: "5000", maxAmount: "20000", currency: "TRY" });
  failed(t, await post(t, merchant, "/v1/deposit", body({ bankCode: garanti, amount: 20_001 })), 400, "AMOUNT_OUT_OF_RANGE");
  t.is((await post(t, merchant, "/v1/deposit", body({ bankCode: garanti, amount: 20_000 }))).status, 201);

  // The seeded defaults: banks 1000..5000000, FAST 100..10000000.
  const seeded = failed(t, await post(t, merchant, "/v1/deposit", body({ bankCode: await bankId("0046"), amount: 999 })), 400, "AMOUNT_OUT_OF_RANGE");
  t.regex(seeded, /1000 to 5000000 \(10\.00 to 50000\.00 TRY\)/);
  const fast = failed(t, await post(t, merchant, "/v1/deposit", body({ bankCode: "FAST", amount: 99 })), 400, "AMOUNT_OUT_OF_RANGE");
  t.regex(fast, /100 to 10000000 \(1\.00 to 100000\.00 TRY\)/);
});

// ---------------------------------------------------------------- read

test("GET /v1/deposit/{transactionId} and GET /v1/deposit?processId= answer the same record", async (t) => {
  const merchant = await newMerchant();
  const created = await createDeposit(t, merchant, { processId: "order with spaces & symbols/1" });

  const byId = await get(t, merchant, `/v1/deposit/${encodeURIComponent(created.transactionId as string)}`);
  t.is(byId.status, 200, byId.text);
  t.deepEqual(byId.json.data, created);

  const byProcessId = await get(t, merchant, `/v1/deposit?processId=${encodeURIComponent(created.processId as string)}`);
  t.is(byProcessId.status, 200, byProcessId.text);
  t.deepEqual(byProcessId.json.data, created);
});

test("an unknown transactionId or processId is 404 TRANSACTION_NOT_FOUND", async (t) => {
  const merchant = await newMerchant();
  failed(t, await get(t, merchant, "/v1/deposit/dep_doesnotexist"), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await get(t, merchant, `/v1/deposit/${"x".repeat(80)}`), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await get(t, merchant, "/v1/deposit?processId=nope"), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await post(t, merchant, "/v1/deposit/dep_doesnotexist/cancel", ""), 404, "TRANSACTION_NOT_FOUND");
});

test("GET /v1/deposit without processId (or with it twice) is a VALIDATION_ERROR naming processId", async (t) => {
  const merchant = await newMerchant();
  t.regex(failed(t, await get(t, merchant, "/v1/deposit"), 400, "VALIDATION_ERROR"), /^processId: is required/);
  t.regex(failed(t, await get(t, merchant, "/v1/deposit?processid=x"), 400, "VALIDATION_ERROR"), /^processId: is required/);
  t.regex(failed(t, await get(t, merchant, "/v1/deposit?processId=a&processId=b"), 400, "VALIDATION_ERROR"), /^processId: must be given only once/);
  t.regex(failed(t, await get(t, merchant, "/v1/deposit?processId="), 400, "VALIDATION_ERROR"), /^processId: is required/);
});

test("a merchant can neither read nor cancel another merchant's deposit (404), nor see it listed", async (t) => {
  const owner = await newMerchant();
  const stranger = await newMerchant();
  const created = await createDeposit(t, owner);
  failed(t, await get(t, stranger, `/v1/deposit/${created.transactionId as string}`), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await get(t, stranger, `/v1/deposit?processId=${encodeURIComponent(created.processId as string)}`), 404, "TRANSACTION_NOT_FOUND");
  failed(t, await post(t, stranger, `/v1/deposit/${created.transactionId as string}/cancel`, ""), 404, "TRANSACTION_NOT_FOUND");
  const listed = await get(t, stranger, "/v1/transactions");
  t.deepEqual(listed.json.data, { items: [], nextCursor: null });

  // Untouched for its owner.
  t.is((await get(t, owner, `/v1/deposit/${created.transactionId as string}`)).json.data?.status, "pending");
});

// ---------------------------------------------------------------- cancel

test("cancel moves a pending deposit to cancelled; cancelling again answers 200 with it unchanged", async (t) => {
  const merchant = await newMerchant();
  const created = await createDeposit(t, merchant);
  const path = `/v1/deposit/${created.transactionId as string}/cancel`;

  const cancelled = await post(t, merchant, path, "", {});
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.json.data, { transactionId: created.transactionId, status: "cancelled", sequence: 2, completedAt: clock.now().toISOString() });

  const again = await post(t, merchant, path, {});
  t.is(again.status, 200, again.text);
  t.deepEqual(again.json.data, cancelled.json.data);

  t.is((await get(t, merchant, `/v1/deposit/${created.transactionId as string}`)).json.data?.status, "cancelled");
});

test("cancel takes an empty body with or without a JSON Content-Type, or {}, but not a non-JSON body", async (t) => {
  const merchant = await newMerchant();
  const cancel = async (text: string, headers: Record<string, string>) => {
    const created = await createDeposit(t, merchant);
    return post(t, merchant, `/v1/deposit/${created.transactionId as string}/cancel`, text, headers);
  };
  t.is((await cancel("", {})).status, 200);
  t.is((await cancel("", { "Content-Type": "application/json" })).status, 200);
  t.is((await cancel("{}", { "Content-Type": "application/json" })).status, 200);
  failed(t, await cancel("reason=none", { "Content-Type": "application/x-www-form-urlencoded" }), 415, "UNSUPPORTED_MEDIA_TYPE");
  t.regex(failed(t, await cancel("not json", { "Content-Type": "application/json" }), 400, "VALIDATION_ERROR"), /^body: /);
  t.regex(failed(t, await cancel("[]", { "Content-Type": "application/json" }), 400, "VALIDATION_ERROR"), /^body: /);
});

test("POST /v1/deposit still requires a JSON body: empty is a VALIDATION_ERROR, no Content-Type is 415", async (t) => {
  const merchant = await newMerchant();
  t.regex(failed(t, await post(t, merchant, "/v1/deposit", ""), 400, "VALIDATION_ERROR"), /^body: /);
  failed(t, await post(t, merchant, "/v1/deposit", "", {}), 415, "UNSUPPORTED_MEDIA_TYPE");
});

test("cancelling a completed deposit is 409 INVALID_TRANSACTION_STATE with its status in details", async (t) => {
  const merchant = await newMerchant();
  const created = await createDeposit(t, merchant);
  await depositService.confirmDeposit({ depositId: created.transactionId as string });
  const completed = await get(t, merchant, `/v1/deposit/${created.transactionId as string}`);
  t.like(completed.json.data, { status: "completed", amount: 15050, requestedAmount: 15050, sequence: 2 });
  t.is(typeof completed.json.data?.completedAt, "string");

  const reply = await post(t, merchant, `/v1/deposit/${created.transactionId as string}/cancel`, "");
  const message = failed(t, reply, 409, "INVALID_TRANSACTION_STATE");
  t.regex(message, /completed/);
  t.deepEqual(reply.json.error?.details, { status: "completed" });
});

test("a deposit confirmed with a different amount shows the received amount and the requested one", async (t) => {
  const merchant = await newMerchant();
  const created = await createDeposit(t, merchant, { amount: 20_000 });
  await depositService.confirmDeposit({ depositId: created.transactionId as string, amount: 19_000n });
  t.like((await get(t, merchant, `/v1/deposit/${created.transactionId as string}`)).json.data, { status: "completed", amount: 19_000, requestedAmount: 20_000 });
});

// ---------------------------------------------------------------- list

test.serial("GET /v1/transactions pages newest first: 5 deposits with limit 2 come as 2, 2, 1 without repeats, then nextCursor null", async (t) => {
  const merchant = await newMerchant();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    clock.advance(1_000);
    ids.push((await createDeposit(t, merchant)).transactionId as string);
  }
  const newestFirst = [...ids].reverse();

  const seen: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `/v1/transactions?type=deposit&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const reply = await get(t, merchant, path);
    t.is(reply.status, 200, reply.text);
    const data = reply.json.data as { items: Array<Record<string, unknown>>; nextCursor: string | null };
    t.deepEqual(Object.keys(data), ["items", "nextCursor"]);
    for (const item of data.items) t.deepEqual(Object.keys(item), DEPOSIT_RECORD_KEYS);
    sizes.push(data.items.length);
    seen.push(...data.items.map((item) => item.transactionId as string));
    cursor = data.nextCursor;
    if (cursor !== null) t.is(typeof cursor, "string");
  } while (cursor !== null && sizes.length < 10);

  t.deepEqual(sizes, [2, 2, 1]);
  t.deepEqual(seen, newestFirst);
  t.is(new Set(seen).size, 5);

  // Without type: every kind (here only deposits), 20 at most by default.
  const all = await get(t, merchant, "/v1/transactions");
  t.deepEqual(
    (all.json.data?.items as Array<Record<string, unknown>>).map((i) => i.transactionId),
    newestFirst,
  );
  t.is(all.json.data?.nextCursor, null);
});

test.serial("GET /v1/transactions filters by status and by creation time (from inclusive, to exclusive)", async (t) => {
  const merchant = await newMerchant();
  clock.advance(1_000);
  const first = await createDeposit(t, merchant);
  clock.advance(1_000);
  const second = await createDeposit(t, merchant);
  clock.advance(1_000);
  const third = await createDeposit(t, merchant);
  await post(t, merchant, `/v1/deposit/${second.transactionId as string}/cancel`, "");

  const items = async (query: string) => {
    const reply = await get(t, merchant, `/v1/transactions?${query}`);
    t.is(reply.status, 200, reply.text);
    return (reply.json.data?.items as Array<Record<string, unknown>>).map((i) => i.transactionId);
  };
  t.deepEqual(await items("status=cancelled"), [second.transactionId]);
  t.deepEqual(await items("status=pending"), [third.transactionId, first.transactionId]);
  t.deepEqual(await items("status=completed"), []);
  t.deepEqual(await items(`from=${encodeURIComponent(second.createdAt as string)}`), [third.transactionId, second.transactionId]);
  t.deepEqual(await items(`to=${encodeURIComponent(second.createdAt as string)}`), [first.transactionId]);
  t.deepEqual(
    await items(`from=${encodeURIComponent(first.createdAt as string)}&to=${encodeURIComponent(third.createdAt as string)}&status=pending`),
    [first.transactionId],
  );
  // An offset is honoured: 10:00:02.000+03:00 is 07:00:02.000Z.
  const created = new Date(second.createdAt as string);
  const local = new Date(created.getTime() + 3 * 3_600_000).toISOString().replace("Z", "+03:00");
  t.deepEqual(await items(`from=${encodeURIComponent(local)}&status=cancelled`), [second.transactionId]);
  // Unknown parameters are ignored.
  t.deepEqual(await items("status=cancelled&sort=asc&foo=bar"), [second.transactionId]);
});

test("a limit that is not an integer from 1 to 100 is a VALIDATION_ERROR naming limit", async (t) => {
  const merchant = await newMerchant();
  for (const limit of ["0", "101", "abc", "1.5", "-1", "1e1", "99999999"]) {
    t.regex(failed(t, await get(t, merchant, `/v1/transactions?limit=${limit}`), 400, "VALIDATION_ERROR"), /^limit: must be an integer from 1 to 100$/, limit);
  }
  t.is((await get(t, merchant, "/v1/transactions?limit=1")).status, 200);
  t.is((await get(t, merchant, "/v1/transactions?limit=100")).status, 200);
});

test("a cursor that did not come from a previous response is a VALIDATION_ERROR naming cursor", async (t) => {
  const merchant = await newMerchant();
  t.regex(failed(t, await get(t, merchant, "/v1/transactions?cursor=not-a-cursor"), 400, "VALIDATION_ERROR"), /^cursor: /);
});

test("an unknown type is a VALIDATION_ERROR naming the choices; type=withdrawal lists (no) withdrawals", async (t) => {
  const merchant = await newMerchant();
  await createDeposit(t, merchant);
  t.is(failed(t, await get(t, merchant, "/v1/transactions?type=refund"), 400, "VALIDATION_ERROR"), "type: must be one of deposit, withdrawal");
  t.deepEqual((await get(t, merchant, "/v1/transactions?type=withdrawal")).json.data, { items: [], nextCursor: null });
});

test("bad status, times and repeated parameters are all named in one VALIDATION_ERROR", async (t) => {
  const merchant = await newMerchant();
  const message = failed(t, await get(t, merchant, "/v1/transactions?status=paid&from=yesterday&to=2026-13-01&limit=0&limit=1"), 400, "VALIDATION_ERROR");
  const lines = message.split("; ");
  t.is(lines.length, 4, message);
  t.regex(lines[0]!, /^status: must be one of pending, completed, failed, expired, cancelled, processing$/);
  t.regex(lines[1]!, /^from: must be an ISO 8601 time/);
  t.regex(lines[2]!, /^to: must be an ISO 8601 time/);
  t.is(lines[3], "limit: must be given only once");
});

test("from later than to is a VALIDATION_ERROR naming to", async (t) => {
  const merchant = await newMerchant();
  t.is(failed(t, await get(t, merchant, "/v1/transactions?from=2026-11-22T10:00:00Z&to=2026-11-22T09:00:00Z"), 400, "VALIDATION_ERROR"), "to: must be later than from");
});

test("the new endpoints are signed like every other: an unsigned request is 401", async (t) => {
  for (const path of ["/v1/deposit/dep_x", "/v1/deposit?processId=x", "/v1/transactions"]) {
    const reply = checkReply(t, await signedCall(gw(), { apiKey: "pk_nobody", apiSecret: "sk_nobody" }, clock, { path }));
    failed(t, reply, 401, "INVALID_API_KEY");
  }
});

test("returnUrl: an https URL is kept (normalised) and read back; none given, the record has no returnUrl", async (t) => {
  const merchant = await newMerchant();
  const made = await createDeposit(t, merchant, { returnUrl: "HTTPS://Shop.Example.com/orders/1?x=1" });
  t.is(made.returnUrl, "https://shop.example.com/orders/1?x=1");
  const read = await get(t, merchant, `/v1/deposit/${made.transactionId as string}`);
  t.is(read.json.data?.returnUrl, "https://shop.example.com/orders/1?x=1");
  for (const none of [undefined, null, ""]) {
    const plain = await createDeposit(t, merchant, none === undefined ? {} : { returnUrl: none });
    t.false("returnUrl" in plain, `returnUrl ${JSON.stringify(none)}: the record is what it was before the field existed`);
  }
});

test("returnUrl: javascript:, data:, relative, credentials, too long, not a string, and http for a live merchant are VALIDATION_ERROR naming returnUrl; nothing is stored", async (t) => {
  const merchant = await newMerchant();
  const refused: unknown[] = [
    "javascript:alert(1)",
    "JavaScript://%0aalert(1)",
    "data:text/html,<script>alert(1)</script>",
    "ftp://shop.example.com/",
    "/orders/1",
    "//shop.example.com/orders/1",
    "https://user:pass@shop.example.com/",
    `https://shop.example.com/${"a".repeat(2000)}`,
    42,
    "http://shop.example.com/orders/1",
  ];
  for (const returnUrl of refused) {
    const request = body({ returnUrl });
    const message = failed(t, await post(t, merchant, "/v1/deposit", request), 400, "VALIDATION_ERROR");
    t.regex(message, /^returnUrl: /, JSON.stringify(returnUrl).slice(0, 60));
    t.false(message.includes("return_url"));
    t.is((await get(t, merchant, `/v1/deposit?processId=${request.processId as string}`)).status, 404, "nothing was stored");
  }
});
