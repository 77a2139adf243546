import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import type { Client } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import { API_KEY_SCOPES, type ApiKeyScope } from "@payments/access";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { DepositService } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import type { RunningServices } from "@payments/kit";
import { createServiceClient, eventually, manualClock, rejectionOf, testCustomer, testMerchantVoice, testPayee, TEST_OPERATOR_ENV } from "@payments/testing";
import { startInProcess } from "@payments/testing/services";
import { OPERATIONS } from "../src/openapi/index.js";
import { startGateway, type RunningGateway } from "../src/server.js";
import { checkReply, signedCall, type Credentials, type Reply } from "./http-client.js";

/*
 * API keys that carry only what their holder may do (issue 32), through the gateway, against the
 * real merchant, bank-catalog, deposit, payout and callback-sender services (SQLite in a temp
 * dir, in-process bus): each key's scopes, from the merchant service, decide which routes it
 * may call; a refusal is 403 INSUFFICIENT_SCOPE before any service call and changes nothing;
 * and what the gateway admits, the services' own tables admit too.
 */

const clock = manualClock();
const LOCAL_IPS = ["127.0.0.1", "::1"];
let dir = "";
let services: RunningServices | undefined;
let gateway: RunningGateway | undefined;

const url = () => services!.server.url;
const merchants = (): Client<typeof MerchantService> => createServiceClient(MerchantService, url(), { clock });
const payouts = (): Client<typeof PayoutService> => createServiceClient(PayoutService, url(), { clock });

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-key-scopes-"));
  services = await startInProcess(["merchant", "bank-catalog", "deposit", "payout", "callback-sender"], {
    env: { DATA_DIR: dir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn", PAYOUT_WORKER: "0" },
    clock,
  });
  await createServiceClient(BankCatalogService, url(), { clock }).seedSandboxAccounts({});
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    bus: services.bus,
    clock,
    merchantUrl: url(),
    bankCatalogUrl: url(),
    depositUrl: url(),
    payoutUrl: url(),
    callbackUrl: url(),
  });
});

test.after.always(async () => {
  await gateway?.stop();
  await services?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Shop {
  id: string;
  /** The primary key: every scope. */
  primary: Credentials;
  key(scopes: ApiKeyScope[]): Promise<Credentials>;
}

/** A sandbox merchant on the local IPs, funded with `funds` kuruş, whose extra keys are made by its admin. */
async function newShop(funds = 0): Promise<Shop> {
  const res = await merchants().createMerchant({ name: `Scoped Shop ${randomBytes(3).toString("hex")}`, allowedIps: LOCAL_IPS, sandbox: true });
  const id = res.merchant!.id;
  if (funds > 0) await payouts().adjustBalance({ merchantId: id, amount: BigInt(funds), reason: "test funding" });
  return {
    id,
    primary: { apiKey: res.merchant!.apiKey, apiSecret: res.apiSecret },
    key: async (scopes) => {
      const made = await merchants().createApiKey({ merchantId: id, label: scopes.join("+"), scopes });
      return { apiKey: made.key!.id, apiSecret: made.apiSecret };
    },
  };
}

async function send(t: ExecutionContext, key: Credentials, method: "GET" | "POST", path: string, body?: unknown): Promise<Reply> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const reply = await signedCall(gateway!.url, key, clock, { method, path, ...(text !== undefined ? { body: text, headers: { "Content-Type": "application/json" } } : {}) });
  return checkReply(t, reply);
}

function refusedForScope(t: ExecutionContext, reply: Reply, scope: string): void {
  t.is(reply.status, 403, reply.text);
  t.is(reply.json.error?.code, "INSUFFICIENT_SCOPE");
  t.regex(reply.json.error?.message ?? "", new RegExp(`\\b${scope}\\b`), "the message names the scope needed");
}

const depositBody = (processId: string) => ({ processId, amount: 15_000, customer: testCustomer });
const withdrawalBody = (processId: string) => ({ processId, amount: 50_000, ...testPayee });

test("a read-only key's POST /v1/deposit and /v1/withdraw are 403 INSUFFICIENT_SCOPE and change nothing; it reads", async (t) => {
  const shop = await newShop(100_000);
  const reader = await shop.key(["read"]);
  refusedForScope(t, await send(t, reader, "POST", "/v1/deposit", depositBody("ro-1")), "deposits");
  refusedForScope(t, await send(t, reader, "POST", "/v1/withdraw", withdrawalBody("ro-2")), "withdrawals");

  t.is((await send(t, shop.primary, "GET", "/v1/deposit?processId=ro-1")).status, 404, "no deposit was made");
  t.is((await send(t, shop.primary, "GET", "/v1/withdraw?processId=ro-2")).status, 404, "no withdrawal was made");
  const balance = await send(t, reader, "GET", "/v1/balance");
  t.is(balance.status, 200, "a read key reads the balance");
  t.deepEqual((balance.json.data as { balances: unknown[] }).balances, [{ currency: "TRY", available: 100_000, held: 0 }], "nothing was held");
  t.is((await send(t, reader, "GET", "/v1/available-banks")).status, 200);
  t.is((await send(t, reader, "GET", "/v1/transactions")).status, 200);
});

test("a deposits key takes deposits but cannot withdraw, nor read withdrawals; a withdrawals key pays out but takes no deposit", async (t) => {
  const shop = await newShop(100_000);
  const checkout = await shop.key(["deposits"]);
  const made = await send(t, checkout, "POST", "/v1/deposit", depositBody("dep-1"));
  t.is(made.status, 201, made.text);
  t.is((await send(t, checkout, "GET", `/v1/deposit/${(made.json.data as { transactionId: string }).transactionId}`)).status, 200);
  refusedForScope(t, await send(t, checkout, "POST", "/v1/withdraw", withdrawalBody("dep-2")), "withdrawals");
  refusedForScope(t, await send(t, checkout, "GET", "/v1/balance"), "withdrawals");
  t.is((await send(t, shop.primary, "GET", "/v1/withdraw?processId=dep-2")).status, 404, "no withdrawal was made");

  const payoutsKey = await shop.key(["withdrawals"]);
  const paid = await send(t, payoutsKey, "POST", "/v1/withdraw", withdrawalBody("wd-1"));
  t.is(paid.status, 201, paid.text);
  const id = (paid.json.data as { transactionId: string }).transactionId;
  t.is((await send(t, payoutsKey, "GET", `/v1/withdraw/${id}`)).status, 200);
  t.deepEqual(((await send(t, payoutsKey, "GET", "/v1/balance")).json.data as { balances: unknown[] }).balances, [{ currency: "TRY", available: 50_000, held: 50_000 }]);
  refusedForScope(t, await send(t, payoutsKey, "POST", "/v1/deposit", depositBody("wd-2")), "deposits");
  refusedForScope(t, await send(t, payoutsKey, "GET", "/v1/transactions"), "read");
  t.is((await send(t, shop.primary, "GET", "/v1/deposit?processId=wd-2")).status, 404);
});

test("every documented operation × a key of each single scope, on the real services: 403 INSUFFICIENT_SCOPE exactly where the document says, and what the gateway admits no service refuses", async (t) => {
  const shop = await newShop();
  const keys = new Map<ApiKeyScope, Credentials>();
  for (const scope of API_KEY_SCOPES) keys.set(scope, await shop.key([scope]));
  let admitted = 0;
  for (const op of OPERATIONS) {
    const path = op.path.replace(/\{[^}]+\}/g, "x_unknown");
    for (const scope of API_KEY_SCOPES) {
      const reply = await send(t, keys.get(scope)!, op.method === "get" ? "GET" : "POST", path, op.method === "post" ? {} : undefined);
      const what = `${op.method.toUpperCase()} ${op.path} with a ${scope} key`;
      if (op.scopes.includes(scope)) {
        admitted += 1;
        t.not(reply.json.error?.code, "INSUFFICIENT_SCOPE", what);
        // A service refusing the gateway's voice (PERMISSION_DENIED) would be a 500 here.
        t.true(reply.status < 500, `${what}: ${reply.status} ${reply.text}`);
      } else {
        t.is(reply.status, 403, `${what}: ${reply.text}`);
        t.is(reply.json.error?.code, "INSUFFICIENT_SCOPE", what);
      }
    }
  }
  t.true(admitted >= OPERATIONS.length, "every operation is open to some single-scope key");
});

test("a revoked key is refused at once (401 INVALID_API_KEY); a new key works at once", async (t) => {
  const shop = await newShop();
  const key = await shop.key(["read"]);
  t.is((await send(t, key, "GET", "/v1/balance")).status, 200, "cached now");
  await merchants().revokeApiKey({ merchantId: shop.id, apiKey: key.apiKey });
  await eventually(async () => (await send(t, key, "GET", "/v1/balance")).json.error?.code === "INVALID_API_KEY", "the revoked key is refused");
  const fresh = await shop.key(["read"]);
  t.is((await send(t, fresh, "GET", "/v1/balance")).status, 200);
  t.is((await send(t, shop.primary, "GET", "/v1/balance")).status, 200, "the merchant's other keys are unaffected");
});

test("the services refuse a voice without the scope again, whoever calls them as the gateway: nothing is created or held", async (t) => {
  const shop = await newShop(100_000);
  const voice = (scopes: ApiKeyScope[]) => ({ operator: null, clock, merchant: testMerchantVoice(shop.id, { scopes }) }) as const;
  const asReader = createServiceClient(PayoutService, url(), voice(["read"]));
  const withdrawal = { merchantId: shop.id, processId: "svc-1", amount: 10_000n, iban: testPayee.iban, accountName: testPayee.accountName, userId: "u1", userName: "u", name: "U" };
  t.like(await rejectionOf(asReader.createWithdrawal(withdrawal)), { code: Code.PermissionDenied });
  t.like(await rejectionOf(createServiceClient(PayoutService, url(), voice(["deposits"])).createWithdrawal(withdrawal)), { code: Code.PermissionDenied });
  t.like(await rejectionOf(createServiceClient(DepositService, url(), voice(["read", "withdrawals"])).createDeposit({ merchantId: shop.id, processId: "svc-2", amount: 10_000n, customer: testCustomer })), {
    code: Code.PermissionDenied,
  });
  const { balances } = await payouts().getBalances({ merchantId: shop.id });
  t.like(balances.find((b) => b.currency === "TRY"), { available: 100_000n, held: 0n });
  t.is((await send(t, shop.primary, "GET", "/v1/deposit?processId=svc-2")).status, 404);
});
