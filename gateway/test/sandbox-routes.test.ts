import test from "ava";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { DepositSchema, DepositStatus, type Deposit, type SandboxExpireDepositRequest, type SandboxPayDepositRequest } from "@payments/contracts/deposit";
import { serviceError, validationError } from "@payments/kit";
import { sandboxPayBody } from "../src/routes/sandbox.js";
import { startFakeApp, type FakeApp } from "./fake-app.js";
import { call, signedCall, type Credentials } from "./http-client.js";

/*
 * POST /v1/sandbox/deposit/{transactionId}/pay and …/expire over a fake deposit service
 * holding one merchant's deposits in memory: what the gateway validates, what it asks the
 * service, how the service's refusals reach the merchant, and that a live merchant's call
 * never reaches the service at all.
 */

const SANDBOX = { merchantId: "mer_sandbox", apiKey: "key_sandbox", apiSecret: "secret-sandbox-0123456789", sandbox: true };
const LIVE = { merchantId: "mer_live", apiKey: "key_live", apiSecret: "secret-live-0123456789", sandbox: false };

const payCalls: SandboxPayDepositRequest[] = [];
const expireCalls: SandboxExpireDepositRequest[] = [];
const store = new Map<string, Deposit>();
let app: FakeApp;

function newDeposit(id: string, merchantId: string, sandbox: boolean): Deposit {
  const now = timestampFromMs(Date.parse("2026-11-22T10:00:00.000Z"));
  return create(DepositSchema, {
    id,
    merchantId,
    processId: `p-${id}`,
    amount: 25_000n,
    requestedAmount: 25_000n,
    currency: "TRY",
    status: DepositStatus.PENDING,
    reference: "ABC123",
    checkoutToken: "t".repeat(32),
    customer: { id: "c", name: "Ayşe", username: "ayse" },
    sequence: 1n,
    sandbox,
    expiresAt: now,
    createdAt: now,
    updatedAt: now,
  });
}

/** The fake's version of the service's order: not found, SANDBOX_ONLY, state. */
function find(merchantId: string, depositId: string): Deposit {
  if (depositId.length > 40) throw validationError("deposit_id", "deposit_id: must be at most 40 characters");
  const deposit = store.get(depositId);
  if (!deposit || deposit.merchantId !== merchantId) throw serviceError(Code.NotFound, "TRANSACTION_NOT_FOUND", `no deposit ${depositId}`);
  if (!deposit.sandbox) throw serviceError(Code.PermissionDenied, "SANDBOX_ONLY", "payments can be simulated only for deposits of active sandbox merchants");
  if (deposit.status !== DepositStatus.PENDING) {
    throw serviceError(Code.FailedPrecondition, "INVALID_TRANSACTION_STATE", "the deposit is completed; only a pending deposit can be paid", { details: { status: "completed" } });
  }
  return deposit;
}

test.before(async () => {
  app = await startFakeApp({
    merchants: [SANDBOX, LIVE],
    deposits: {
      sandboxPayDeposit(req) {
        payCalls.push(req);
        if (req.senderName.length > 200) throw validationError("sender_name", "sender_name: must be at most 200 characters");
        const deposit = find(req.merchantId, req.depositId);
        const paid = create(DepositSchema, { ...deposit, status: DepositStatus.COMPLETED, amount: req.amount ?? deposit.requestedAmount, sequence: 2n, completedAt: deposit.createdAt });
        store.set(paid.id, paid);
        return { deposit: paid };
      },
      sandboxExpireDeposit(req) {
        expireCalls.push(req);
        const deposit = find(req.merchantId, req.depositId);
        const expired = create(DepositSchema, { ...deposit, status: DepositStatus.EXPIRED, sequence: 2n, completedAt: deposit.createdAt });
        store.set(expired.id, expired);
        return { deposit: expired };
      },
    },
  });
});

// Unset when the before hook failed.
test.after.always(() => (app as FakeApp | undefined)?.close());

function post(credentials: Credentials, path: string, body?: unknown) {
  const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  return signedCall(app.url, credentials, app.clock, { method: "POST", path, body: text, headers: text === undefined ? {} : { "Content-Type": "application/json" } });
}

test.serial("pay with an empty body asks for the deposit's own amount and answers 200 with the deposit record", async (t) => {
  store.set("dep_pay1", newDeposit("dep_pay1", SANDBOX.merchantId, true));
  const reply = await post(SANDBOX, "/v1/sandbox/deposit/dep_pay1/pay");
  t.is(reply.status, 200, reply.text);
  t.like(reply.json.data, { transactionId: "dep_pay1", processId: "p-dep_pay1", status: "completed", amount: 25_000, requestedAmount: 25_000 });
  t.like(payCalls.at(-1), { merchantId: SANDBOX.merchantId, depositId: "dep_pay1", amount: undefined, senderName: "" });

  // Paying it again: the service's refusal, as the cancel route answers it.
  const again = await post(SANDBOX, "/v1/sandbox/deposit/dep_pay1/pay", {});
  t.is(again.status, 409);
  t.like(again.json.error, { code: "INVALID_TRANSACTION_STATE", details: { status: "completed" } });
});

test.serial("pay passes amount and senderName on; expire answers with the expired deposit", async (t) => {
  store.set("dep_pay2", newDeposit("dep_pay2", SANDBOX.merchantId, true));
  const reply = await post(SANDBOX, "/v1/sandbox/deposit/dep_pay2/pay", { amount: 12_000, senderName: "Mehmet Kaya", extra: true });
  t.is(reply.status, 200, reply.text);
  t.like(reply.json.data, { status: "completed", amount: 12_000, requestedAmount: 25_000 });
  t.like(payCalls.at(-1), { amount: 12_000n, senderName: "Mehmet Kaya" });

  store.set("dep_exp1", newDeposit("dep_exp1", SANDBOX.merchantId, true));
  const expired = await post(SANDBOX, "/v1/sandbox/deposit/dep_exp1/expire");
  t.is(expired.status, 200, expired.text);
  t.like(expired.json.data, { transactionId: "dep_exp1", status: "expired" });
  t.like(expireCalls.at(-1), { merchantId: SANDBOX.merchantId, depositId: "dep_exp1" });
});

test.serial("bad body fields are a VALIDATION_ERROR naming the field, and the service is not asked", async (t) => {
  store.set("dep_val", newDeposit("dep_val", SANDBOX.merchantId, true));
  const calls = payCalls.length;
  const cases: Array<[unknown, string]> = [
    [{ amount: 0 }, "amount"],
    [{ amount: -100 }, "amount"],
    [{ amount: 150.5 }, "amount"],
    [{ amount: "150" }, "amount"],
    [{ amount: 2 ** 60 }, "amount"],
    [{ senderName: 5 }, "senderName"],
    ["[1,2]", "body"],
    ["{not json", "body"],
  ];
  for (const [body, field] of cases) {
    const reply = await post(SANDBOX, "/v1/sandbox/deposit/dep_val/pay", body);
    t.is(reply.status, 400, JSON.stringify(body));
    t.is(reply.json.error?.code, "VALIDATION_ERROR");
    t.true(reply.json.error?.message.startsWith(`${field}: `) === true, reply.json.error?.message);
  }
  t.is(payCalls.length, calls);
  // The service's rules on senderName come back under the merchant's name of the field.
  const long = await post(SANDBOX, "/v1/sandbox/deposit/dep_val/pay", { senderName: "x".repeat(201) });
  t.is(long.status, 400);
  t.is(long.json.error?.message, "senderName: must be at most 200 characters");
  t.is(store.get("dep_val")?.status, DepositStatus.PENDING);
});

test.serial("a live merchant gets 403 SANDBOX_ONLY on both helpers, for any id, and nothing reaches the service", async (t) => {
  store.set("dep_live", newDeposit("dep_live", LIVE.merchantId, false));
  const calls = payCalls.length + expireCalls.length;
  for (const path of ["/v1/sandbox/deposit/dep_live/pay", "/v1/sandbox/deposit/dep_live/expire", "/v1/sandbox/deposit/dep_unknown/pay"]) {
    const reply = await post(LIVE, path);
    t.is(reply.status, 403, path);
    t.is(reply.json.error?.code, "SANDBOX_ONLY");
  }
  t.is(payCalls.length + expireCalls.length, calls);
  t.is(store.get("dep_live")?.status, DepositStatus.PENDING);
});

test.serial("the service's SANDBOX_ONLY (a live deposit) is 403 too, and nothing changes", async (t) => {
  // A live deposit of a merchant the gateway sees as sandbox: only a kind switch racing a creation makes one.
  store.set("dep_old", newDeposit("dep_old", SANDBOX.merchantId, false));
  for (const action of ["pay", "expire"]) {
    const reply = await post(SANDBOX, `/v1/sandbox/deposit/dep_old/${action}`);
    t.is(reply.status, 403);
    t.is(reply.json.error?.code, "SANDBOX_ONLY");
  }
  t.is(store.get("dep_old")?.status, DepositStatus.PENDING);
});

test.serial("another merchant's deposit, an unknown id and an id too long to be one are 404 TRANSACTION_NOT_FOUND", async (t) => {
  store.set("dep_other", newDeposit("dep_other", "mer_someone_else", true));
  for (const id of ["dep_other", "dep_nope", "d".repeat(60)]) {
    for (const action of ["pay", "expire"]) {
      const reply = await post(SANDBOX, `/v1/sandbox/deposit/${id}/${action}`);
      t.is(reply.status, 404, `${action} ${id}`);
      t.is(reply.json.error?.code, "TRANSACTION_NOT_FOUND");
    }
  }
  t.is(store.get("dep_other")?.status, DepositStatus.PENDING);
});

test("unsigned calls are refused before anything else", async (t) => {
  const reply = await call(app.url, { method: "POST", path: "/v1/sandbox/deposit/dep_pay1/pay" });
  t.is(reply.status, 401);
});

test("sandboxPayBody accepts an empty object and null fields", (t) => {
  t.deepEqual(sandboxPayBody.parse({}), {});
  t.like(sandboxPayBody.parse({ amount: null, senderName: null }), { amount: null, senderName: null });
  t.false(sandboxPayBody.safeParse({ amount: 1.5 }).success);
});
