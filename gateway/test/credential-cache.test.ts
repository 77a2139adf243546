import test from "ava";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  GetCredentialsResponseSchema,
  MerchantChangedSchema,
  MerchantStatus,
} from "@payments/contracts/merchant";
import { InProcessBus, serviceError } from "@payments/kit";
import { manualClock } from "@payments/testing";
import { CredentialCache, MERCHANT_CHANGED_TOPIC, secretsValidAt, type CredentialLookup } from "../src/credential-cache.js";

type Known = MessageInitShape<typeof GetCredentialsResponseSchema>;

function fakeMerchants(known: Record<string, Known>) {
  const calls: string[] = [];
  let failWith: Error | undefined;
  const lookup: CredentialLookup = {
    getCredentials: async (req) => {
      const apiKey = req.apiKey ?? "";
      calls.push(apiKey);
      if (failWith) throw failWith;
      const found = known[apiKey];
      if (!found) throw serviceError(Code.NotFound, "API_KEY_NOT_FOUND", "no merchant with this API key");
      return create(GetCredentialsResponseSchema, { status: MerchantStatus.ACTIVE, secrets: [{ secret: "sk_1" }], ...found });
    },
  };
  return { lookup, calls, known, fail: (err: Error | undefined) => (failWith = err) };
}

function setup(known: Record<string, Known> = { pk_a: { merchantId: "m_a" }, pk_b: { merchantId: "m_b" } }) {
  const clock = manualClock();
  const merchants = fakeMerchants(known);
  const cache = new CredentialCache({ merchants: merchants.lookup, clock, ttlMs: 30_000, negativeTtlMs: 5_000 });
  return { clock, merchants, cache };
}

function changed(merchantId: string, apiKey: string): Uint8Array {
  return toBinary(MerchantChangedSchema, create(MerchantChangedSchema, { eventId: `ev_${merchantId}`, merchantId, apiKey, change: "status" }));
}

test("a found merchant is served from the cache until the TTL ends", async (t) => {
  const { clock, merchants, cache } = setup();
  t.is((await cache.get("pk_a"))?.merchantId, "m_a");
  clock.advance(29_999);
  await cache.get("pk_a");
  t.deepEqual(merchants.calls, ["pk_a"]);
  clock.advance(1);
  await cache.get("pk_a");
  t.deepEqual(merchants.calls, ["pk_a", "pk_a"]);
});

test("an unknown key is remembered only briefly (negative cache)", async (t) => {
  const { clock, merchants, cache } = setup();
  t.is(await cache.get("pk_nope"), undefined);
  t.is(await cache.get("pk_nope"), undefined);
  t.is(merchants.calls.length, 1);
  clock.advance(5_000);
  t.is(await cache.get("pk_nope"), undefined);
  t.is(merchants.calls.length, 2);
});

test("concurrent lookups of one key make one call", async (t) => {
  const { merchants, cache } = setup();
  await Promise.all([cache.get("pk_a"), cache.get("pk_a"), cache.get("pk_a")]);
  t.is(merchants.calls.length, 1);
});

test("a service failure is thrown, not cached as an unknown key", async (t) => {
  const { merchants, cache } = setup();
  merchants.fail(new ConnectError("down", Code.Unavailable));
  await t.throwsAsync(cache.get("pk_a"), { instanceOf: ConnectError });
  merchants.fail(undefined);
  t.is((await cache.get("pk_a"))?.merchantId, "m_a");
});

test("an empty or absurdly long key is unknown without a call", async (t) => {
  const { merchants, cache } = setup();
  t.is(await cache.get(""), undefined);
  t.is(await cache.get("k".repeat(257)), undefined);
  t.is(merchants.calls.length, 0);
});

test("a MerchantChanged event drops the merchant's entry by api key", async (t) => {
  const { merchants, cache } = setup();
  const bus = new InProcessBus();
  const subscription = await cache.watch(bus);
  await cache.get("pk_a");
  await cache.get("pk_b");
  merchants.known.pk_a = { merchantId: "m_a", status: MerchantStatus.DISABLED, secrets: [] };
  await bus.publish(MERCHANT_CHANGED_TOPIC, changed("m_a", "pk_a"), "ev1");
  await new Promise((resolve) => setImmediate(resolve));
  t.false((await cache.get("pk_a"))?.active ?? true);
  await cache.get("pk_b");
  t.deepEqual(merchants.calls, ["pk_a", "pk_b", "pk_a"]);
  await subscription.stop();
});

test("invalidation by merchant id drops entries whatever key they were cached under", async (t) => {
  const { merchants, cache } = setup({ pk_old: { merchantId: "m_a" } });
  await cache.get("pk_old");
  cache.invalidate({ merchantId: "m_a" });
  await cache.get("pk_old");
  t.is(merchants.calls.length, 2);
});

test("an answer that was in flight when the merchant changed is not stored", async (t) => {
  const { merchants, cache } = setup();
  const pending = cache.get("pk_a");
  cache.invalidate({ apiKey: "pk_a", merchantId: "m_a" });
  await pending;
  await cache.get("pk_a");
  t.is(merchants.calls.length, 2);
});

test("an unreadable event clears the whole cache", async (t) => {
  const { merchants, cache } = setup();
  const bus = new InProcessBus();
  await cache.watch(bus);
  await cache.get("pk_a");
  await bus.publish(MERCHANT_CHANGED_TOPIC, new Uint8Array([0xff, 0xff, 0xff]), "bad");
  await new Promise((resolve) => setImmediate(resolve));
  t.is(cache.size, 0);
  await cache.get("pk_a");
  t.is(merchants.calls.length, 2);
});

test("a rotated-out secret verifies until its expiry, checked against the clock even while cached", async (t) => {
  const { clock, cache } = setup({
    pk_a: {
      merchantId: "m_a",
      secrets: [{ secret: "sk_new" }, { secret: "sk_old", expiresAt: timestampFromDate(new Date("2026-11-22T10:00:10.000Z")) }],
    },
  });
  const credentials = (await cache.get("pk_a"))!;
  t.deepEqual(secretsValidAt(credentials, clock.now()), ["sk_new", "sk_old"]);
  clock.advance(10_000);
  t.deepEqual(secretsValidAt(credentials, clock.now()), ["sk_new"]);
});

test("a TTL of 0 turns caching off", async (t) => {
  const clock = manualClock();
  const merchants = fakeMerchants({ pk_a: { merchantId: "m_a" } });
  const cache = new CredentialCache({ merchants: merchants.lookup, clock, ttlMs: 0, negativeTtlMs: 5_000 });
  await cache.get("pk_a");
  await cache.get("pk_a");
  await cache.get("pk_x");
  await cache.get("pk_x");
  t.is(merchants.calls.length, 4);
});

test("a key's scopes and trusted mark are kept with its credentials, with the voice and the scope bits made once per entry", async (t) => {
  const { cache } = setup({ pk_pay: { merchantId: "m_a", scopes: ["withdrawals", "read"], trusted: true }, pk_odd: { merchantId: "m_a", scopes: ["deposits", "refunds"] } });
  const first = (await cache.get("pk_pay"))!;
  t.deepEqual(first.scopes, ["withdrawals", "read"]);
  t.true(first.trusted);
  t.deepEqual(first.voice, { merchantId: "m_a", keyId: "pk_pay", scopes: ["withdrawals", "read"], trusted: true });
  t.is(first.scopeMask, 0b101);
  t.true(Object.isFrozen(first.voice), "shared by every request: nobody may change it");
  t.is((await cache.get("pk_pay"))!.voice, first.voice, "the same object on every request");
  const odd = (await cache.get("pk_odd"))!;
  t.deepEqual(odd.scopes, ["deposits"], "a scope this gateway does not know grants nothing");
  t.false(odd.trusted);
});
