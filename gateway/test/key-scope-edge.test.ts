import test from "ava";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { spokenMerchant, type MerchantVoice } from "@payments/access";
import { CallbackService } from "@payments/contracts/callback";
import { DepositService } from "@payments/contracts/deposit";
import { PayoutService } from "@payments/contracts/payout";
import { serviceError } from "@payments/kit";
import { OPERATIONS } from "../src/openapi/index.js";
import { startFakeApp, type FakeMerchant } from "./fake-app.js";
import { checkReply, signedCall } from "./http-client.js";

// The gateway's scope check over fakes of the services, which record every call: a refused
// request reaches no service; the IP rule answers first; the key's scopes and trusted mark are
// what the gateway says for the merchant on every call; and a key the merchant service gives
// no scopes (one older than scoped keys) is refused everything but the bank list.

/** Every RPC of a service, recording its name and answering UNAVAILABLE (a 503, never mistaken for a scope refusal). */
function recording<S extends typeof DepositService | typeof PayoutService | typeof CallbackService>(service: S, calls: string[], voices: MerchantVoice[]): Partial<ServiceImpl<S>> {
  return Object.fromEntries(
    service.methods.map((m) => [
      m.localName,
      () => {
        calls.push(m.name);
        const voice = spokenMerchant();
        if (voice) voices.push(voice);
        throw serviceError(Code.Unavailable, "UNAVAILABLE", "fake");
      },
    ]),
  ) as unknown as Partial<ServiceImpl<S>>;
}

async function app(merchants: FakeMerchant[]) {
  const calls: string[] = [];
  const voices: MerchantVoice[] = [];
  const running = await startFakeApp({
    merchants,
    deposits: recording(DepositService, calls, voices),
    payouts: recording(PayoutService, calls, voices),
    callbacks: recording(CallbackService, calls, voices),
  });
  return { ...running, calls, voices };
}

const key = (apiKey: string, scopes: readonly string[], extra: Partial<FakeMerchant> = {}): FakeMerchant => ({
  merchantId: "mer_scoped",
  apiKey,
  apiSecret: `sk_${apiKey}`,
  allowedIps: ["127.0.0.1"],
  scopes,
  ...extra,
});

test("a refused request calls no service, for every operation a key's scopes do not admit", async (t) => {
  const fake = await app([key("pk_read", ["read"]), key("pk_deposits", ["deposits"]), key("pk_withdrawals", ["withdrawals"])]);
  t.teardown(() => fake.close());
  let refused = 0;
  for (const op of OPERATIONS) {
    for (const scope of ["read", "deposits", "withdrawals"] as const) {
      if (op.scopes.includes(scope)) continue;
      const before = fake.calls.length;
      const path = op.path.replace(/\{[^}]+\}/g, "x");
      const method = op.method === "get" ? "GET" : "POST";
      const reply = checkReply(t, await signedCall(fake.url, key(`pk_${scope}`, [scope]), fake.clock, { method, path, ...(method === "POST" ? { body: "{}", headers: { "Content-Type": "application/json" } } : {}) }));
      t.is(reply.json.error?.code, "INSUFFICIENT_SCOPE", `${method} ${op.path} with ${scope}`);
      t.is(reply.json.error?.message, `This endpoint needs an API key with the ${op.scopes.length === 1 ? op.scopes[0] : op.scopes.join(" or ")} scope; this key has ${scope}`);
      t.is(fake.calls.length, before, `${method} ${op.path} with ${scope}: no service call`);
      refused += 1;
    }
  }
  t.true(refused >= 20, `${refused}`);
});

test("the IP rule answers before the scope: a caller off the allow-list learns nothing of the key's scopes", async (t) => {
  const fake = await app([key("pk_read", ["read"], { allowedIps: ["10.9.9.9"] })]);
  t.teardown(() => fake.close());
  const reply = checkReply(t, await signedCall(fake.url, key("pk_read", ["read"]), fake.clock, { method: "POST", path: "/v1/deposit", body: "{}", headers: { "Content-Type": "application/json" } }));
  t.is(reply.json.error?.code, "IP_NOT_WHITELISTED");
});

test("every service call of a request says for the merchant which key signed it, with the key's scopes and trusted mark", async (t) => {
  const fake = await app([key("pk_payouts", ["read", "withdrawals"], { trusted: true }), key("pk_checkout", ["deposits"])]);
  t.teardown(() => fake.close());
  const body = JSON.stringify({ processId: "p-1", amount: 100, accountName: "A B", iban: "TR330006100519786457841326", userId: "u", userName: "u", name: "A B" });
  await signedCall(fake.url, key("pk_payouts", []), fake.clock, { method: "POST", path: "/v1/withdraw", body, headers: { "Content-Type": "application/json" } });
  await signedCall(fake.url, key("pk_checkout", []), fake.clock, { method: "POST", path: "/v1/deposit", body: JSON.stringify({ processId: "d-1", amount: 100, customer: { id: "c", name: "C D", username: "c" } }), headers: { "Content-Type": "application/json" } });
  t.deepEqual(fake.calls, ["CreateWithdrawal", "CreateDeposit"]);
  t.deepEqual(fake.voices, [
    { merchantId: "mer_scoped", keyId: "pk_payouts", scopes: ["read", "withdrawals"], trusted: true },
    { merchantId: "mer_scoped", keyId: "pk_checkout", scopes: ["deposits"], trusted: false },
  ]);
});

test("a key the merchant service gives no scopes (or only names this gateway does not know) is refused everything but the bank list", async (t) => {
  const fake = await app([key("pk_old", []), key("pk_future", ["refunds"])]);
  t.teardown(() => fake.close());
  for (const apiKey of ["pk_old", "pk_future"]) {
    const credentials = key(apiKey, []);
    const deposit = checkReply(t, await signedCall(fake.url, credentials, fake.clock, { method: "POST", path: "/v1/deposit", body: "{}", headers: { "Content-Type": "application/json" } }));
    t.is(deposit.json.error?.code, "INSUFFICIENT_SCOPE");
    t.regex(deposit.json.error?.message ?? "", /this key has none$/);
    t.is((await signedCall(fake.url, credentials, fake.clock, { path: "/v1/available-banks" })).status, 200);
  }
  t.deepEqual(fake.calls, []);
});
