import test from "ava";
import { Code } from "@connectrpc/connect";
import { toJsonString } from "@bufbuild/protobuf";
import { ListApiKeysResponseSchema, MerchantService } from "@payments/contracts/merchant";
import { AUDIT_TABLE } from "@payments/access";
import { createServiceClient, eventually, rejectionOf } from "@payments/testing";
import { onEachBackend } from "./merchant-on-each-backend.js";

// Issue 32: several API keys per merchant, each with its scopes, its trusted mark and its own
// secrets, on SQLite and on MariaDB. What the gateway admits is what GetCredentials answers.

onEachBackend(test, "merchant-api-keys-", (backend) => {
  const { client, gateway, asUser, published } = backend;
  const newMerchant = async () => {
    const created = await client().createMerchant({ name: `Keys Shop ${backend.name}`, allowedIps: [], callbackUrl: "", sandbox: true });
    return { id: created.merchant!.id, primary: created.merchant!.apiKey, primarySecret: created.apiSecret };
  };
  const secretsOf = async (apiKey: string) => (await gateway().getCredentials({ apiKey })).secrets.map((s) => s.secret);
  /** The callback-sender's read of where callbacks go and what signs them. */
  const target = () => createServiceClient(MerchantService, backend.url(), { operator: null, workload: "callback-sender" });

  test(`${backend.name}: a new merchant has one primary key with every scope; another key has the scopes asked and a secret of its own`, async (t) => {
    const m = await newMerchant();
    const [primary, ...others] = (await client().listApiKeys({ merchantId: m.id })).keys;
    t.like(primary, { id: m.primary, merchantId: m.id, primary: true, label: "", trusted: false, revokedAt: undefined });
    t.deepEqual(primary!.scopes, ["read", "deposits", "withdrawals"]);
    t.is(primary!.createdBy, "test-admin@example.com", "made by the admin who created the merchant");
    t.deepEqual(others, []);

    // Scopes in any order, repeated: stored once each, in the canonical order.
    const created = await client().createApiKey({ merchantId: m.id, label: "  checkout server ", scopes: ["deposits", "read", "deposits"] });
    const key = created.key!;
    t.regex(key.id, /^pk_[A-Za-z0-9_-]{32}$/);
    t.regex(created.apiSecret, /^sk_/);
    t.like(key, { merchantId: m.id, label: "checkout server", primary: false, trusted: false, createdBy: "test-admin@example.com" });
    t.deepEqual(key.scopes, ["read", "deposits"]);
    t.is(key.secrets.length, 1);

    const credentials = await gateway().getCredentials({ apiKey: key.id });
    t.like(credentials, { merchantId: m.id, trusted: false });
    t.deepEqual(credentials.scopes, ["read", "deposits"]);
    t.deepEqual(credentials.secrets.map((s) => s.secret), [created.apiSecret], "its own secret only");
    t.deepEqual(await secretsOf(m.primary), [m.primarySecret], "the primary key's secrets are its own");
    t.deepEqual((await gateway().getCredentials({ apiKey: m.primary })).scopes, ["read", "deposits", "withdrawals"]);

    const merchant = (await client().getMerchant({ merchantId: m.id })).merchant!;
    t.is(merchant.apiKey, m.primary);
    t.is(merchant.secrets.length, 1, "the merchant shows its primary key's secrets");
    t.deepEqual(
      (await client().listApiKeys({ merchantId: m.id })).keys.map((k) => k.id),
      [m.primary, key.id],
    );
    await eventually(() => published.some((e) => e.merchantId === m.id && e.change === "api_key_created" && e.apiKey === key.id), "the MerchantChanged event names the new key");
  });

  test(`${backend.name}: a key without scopes, with an unknown scope or without a label is VALIDATION_ERROR, and nothing is made`, async (t) => {
    const m = await newMerchant();
    const cases = [
      [{ label: "x", scopes: [] }, "scopes"],
      [{ label: "x", scopes: ["read", "refunds"] }, "scopes"],
      [{ label: "   ", scopes: ["read"] }, "label"],
      [{ label: "a".repeat(101), scopes: ["read"] }, "label"],
      [{ label: "bad\u202Ename", scopes: ["read"] }, "label"],
    ] as const;
    for (const [req, field] of cases) {
      const info = await rejectionOf(client().createApiKey({ merchantId: m.id, ...req, scopes: [...req.scopes] }));
      t.like(info, { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field }, JSON.stringify(req));
    }
    t.is((await client().listApiKeys({ merchantId: m.id })).keys.length, 1);
    t.like(await rejectionOf(client().createApiKey({ merchantId: "mer_nope", label: "x", scopes: ["read"] })), { code: Code.NotFound, reason: "MERCHANT_NOT_FOUND" });
  });

  test(`${backend.name}: each key rotates its own secrets; callbacks stay signed with the primary key's current secret`, async (t) => {
    const m = await newMerchant();
    const other = await client().createApiKey({ merchantId: m.id, label: "payouts", scopes: ["withdrawals"] });
    t.is((await target().getCallbackTarget({ merchantId: m.id })).signingSecret, m.primarySecret);

    const rotated = await client().rotateSecret({ merchantId: m.id, apiKey: other.key!.id, gracePeriodSeconds: 3600 });
    t.is(rotated.key!.id, other.key!.id);
    t.is(rotated.key!.secrets.length, 2);
    t.deepEqual(await secretsOf(other.key!.id), [rotated.apiSecret, other.apiSecret], "the other key's old secret keeps its grace");
    t.deepEqual(await secretsOf(m.primary), [m.primarySecret], "the primary key is untouched");
    t.is(rotated.merchant!.secrets.length, 1, "the merchant's view is the primary key's");
    t.is((await target().getCallbackTarget({ merchantId: m.id })).signingSecret, m.primarySecret, "callbacks are not signed with another key's secret");
    await eventually(() => published.some((e) => e.change === "secret_rotated" && e.apiKey === other.key!.id), "the event names the key rotated");

    const primary = await client().rotateSecret({ merchantId: m.id, gracePeriodSeconds: 0 });
    t.is(primary.key!.id, m.primary, "no key named: the primary");
    t.deepEqual(await secretsOf(m.primary), [primary.apiSecret]);
    t.is((await target().getCallbackTarget({ merchantId: m.id })).signingSecret, primary.apiSecret);

    // A secret is revoked on its own key: the other key's current one is LAST_SECRET, its old one may go.
    const [current, old] = rotated.key!.secrets;
    t.like(await rejectionOf(client().revokeSecret({ merchantId: m.id, secretId: current!.id })), { code: Code.FailedPrecondition, reason: "LAST_SECRET" });
    const revoked = await client().revokeSecret({ merchantId: m.id, secretId: old!.id });
    t.is(revoked.key!.id, other.key!.id);
    t.deepEqual(await secretsOf(other.key!.id), [rotated.apiSecret]);
    t.like(await rejectionOf(client().rotateSecret({ merchantId: m.id, apiKey: "pk_nope" })), { code: Code.NotFound, reason: "API_KEY_NOT_FOUND" });
  });

  test(`${backend.name}: a revoked key is unknown to the gateway at once, its secrets end; the primary key cannot be revoked`, async (t) => {
    const m = await newMerchant();
    const other = await client().createApiKey({ merchantId: m.id, label: "old integration", scopes: ["read"] });
    const revoked = (await client().revokeApiKey({ merchantId: m.id, apiKey: other.key!.id })).key!;
    t.truthy(revoked.revokedAt);
    t.is(revoked.revokedBy, "test-admin@example.com");
    t.true(revoked.secrets.every((s) => !s.valid), "its secrets ended");
    t.like(await rejectionOf(gateway().getCredentials({ apiKey: other.key!.id })), { code: Code.NotFound, reason: "API_KEY_NOT_FOUND" });
    await eventually(() => published.some((e) => e.change === "api_key_revoked" && e.apiKey === other.key!.id), "the event drops the gateway's cached key");

    const again = (await client().revokeApiKey({ merchantId: m.id, apiKey: other.key!.id })).key!;
    t.deepEqual(again.revokedAt, revoked.revokedAt, "revoking twice keeps the first end");
    t.like(await rejectionOf(client().rotateSecret({ merchantId: m.id, apiKey: other.key!.id })), { code: Code.FailedPrecondition, reason: "API_KEY_REVOKED" });
    t.is((await client().listApiKeys({ merchantId: m.id })).keys.at(-1)!.id, other.key!.id, "revoked keys are listed last");

    const info = await rejectionOf(client().revokeApiKey({ merchantId: m.id, apiKey: m.primary }));
    t.like(info, { code: Code.FailedPrecondition, reason: "PRIMARY_KEY" });
    t.regex(info.message, /signs the merchant's callbacks/);
    t.deepEqual(await secretsOf(m.primary), [m.primarySecret], "the primary key still works");
  });

  test(`${backend.name}: at most 20 keys that are not revoked, also when asked for at once`, async (t) => {
    const m = await newMerchant();
    for (let i = 0; i < 17; i++) await client().createApiKey({ merchantId: m.id, label: `key ${i}`, scopes: ["read"] });
    const racing = await Promise.allSettled([1, 2, 3, 4].map((i) => client().createApiKey({ merchantId: m.id, label: `race ${i}`, scopes: ["read"] })));
    t.is(racing.filter((r) => r.status === "fulfilled").length, 2, "18 + 2 = 20");
    const keys = (await client().listApiKeys({ merchantId: m.id })).keys;
    t.is(keys.length, 20);
    t.like(await rejectionOf(client().createApiKey({ merchantId: m.id, label: "one more", scopes: ["read"] })), { code: Code.FailedPrecondition, reason: "TOO_MANY_API_KEYS" });
    await client().revokeApiKey({ merchantId: m.id, apiKey: keys[1]!.id });
    t.truthy((await client().createApiKey({ merchantId: m.id, label: "after a revoke", scopes: ["read"] })).key);
  });

  test(`${backend.name}: a developer cannot obtain a secret of a key that can withdraw, by any RPC; owner and finance can; nothing changes when refused`, async (t) => {
    const m = await newMerchant();
    const payouts = await client().createApiKey({ merchantId: m.id, label: "payouts", scopes: ["read", "withdrawals"] });
    const [, old] = (await client().rotateSecret({ merchantId: m.id, apiKey: payouts.key!.id, gracePeriodSeconds: 3600 })).key!.secrets;
    const dev = asUser(m.id, "developer");
    const keysNow = async () => toJsonString(ListApiKeysResponseSchema, await client().listApiKeys({ merchantId: m.id }));
    const before = await keysNow();
    const refusals = {
      "create a withdrawals key": dev.createApiKey({ merchantId: m.id, label: "mine", scopes: ["withdrawals"] }),
      "create a key with every scope": dev.createApiKey({ merchantId: m.id, label: "mine", scopes: ["read", "deposits", "withdrawals"] }),
      "rotate the primary key's secret": dev.rotateSecret({ merchantId: m.id }),
      "rotate the primary key's secret by name": dev.rotateSecret({ merchantId: m.id, apiKey: m.primary, gracePeriodSeconds: 0 }),
      "rotate another withdrawals key's secret": dev.rotateSecret({ merchantId: m.id, apiKey: payouts.key!.id }),
      "revoke a withdrawals key's secret": dev.revokeSecret({ merchantId: m.id, secretId: old!.id }),
      "revoke a withdrawals key": dev.revokeApiKey({ merchantId: m.id, apiKey: payouts.key!.id }),
      "trust a key": dev.setApiKeyTrusted({ merchantId: m.id, apiKey: payouts.key!.id, trusted: true }),
    };
    for (const [what, call] of Object.entries(refusals)) {
      const info = await rejectionOf(call);
      t.like(info, { code: Code.PermissionDenied }, what);
    }
    t.is(await keysNow(), before, "no key, secret or mark changed");
    t.deepEqual(await secretsOf(m.primary), [m.primarySecret]);

    // What a developer may do: keys that cannot withdraw, theirs to rotate and revoke.
    const own = await dev.createApiKey({ merchantId: m.id, label: "checkout", scopes: ["read", "deposits"] });
    t.is(own.key!.createdBy, `developer@${m.id}.example.com`.toLowerCase(), "the verified subject, case-folded");
    const rotated = await dev.rotateSecret({ merchantId: m.id, apiKey: own.key!.id, gracePeriodSeconds: 0 });
    t.deepEqual(await secretsOf(own.key!.id), [rotated.apiSecret]);
    t.truthy((await dev.revokeApiKey({ merchantId: m.id, apiKey: own.key!.id })).key!.revokedAt);
    t.true((await dev.listApiKeys({ merchantId: m.id })).keys.length >= 3, "and reads the list");

    for (const role of ["owner", "finance"] as const) {
      const user = asUser(m.id, role);
      const made = await user.createApiKey({ merchantId: m.id, label: `${role}'s payouts`, scopes: ["withdrawals"] });
      t.deepEqual(await secretsOf(made.key!.id), [made.apiSecret], role);
      const primary = await user.rotateSecret({ merchantId: m.id, gracePeriodSeconds: 0 });
      t.deepEqual(await secretsOf(m.primary), [primary.apiSecret], role);
    }
    const viewer = asUser(m.id, "viewer");
    t.like(await rejectionOf(viewer.createApiKey({ merchantId: m.id, label: "v", scopes: ["read"] })), { code: Code.PermissionDenied });
    t.like(await rejectionOf(viewer.rotateSecret({ merchantId: m.id, apiKey: own.key!.id })), { code: Code.PermissionDenied });
    t.true((await viewer.listApiKeys({ merchantId: m.id })).keys.length >= 5);
  });

  test(`${backend.name}: another merchant's key is NOT_FOUND to a merchant's user, and nothing of it changes`, async (t) => {
    const a = await newMerchant();
    const b = await newMerchant();
    const theirs = await client().createApiKey({ merchantId: b.id, label: "b", scopes: ["read"] });
    const owner = asUser(a.id, "owner");
    t.like(await rejectionOf(owner.listApiKeys({ merchantId: b.id })), { code: Code.NotFound });
    t.like(await rejectionOf(owner.rotateSecret({ merchantId: a.id, apiKey: theirs.key!.id })), { code: Code.NotFound, reason: "API_KEY_NOT_FOUND" });
    t.like(await rejectionOf(owner.revokeApiKey({ merchantId: a.id, apiKey: theirs.key!.id })), { code: Code.NotFound, reason: "API_KEY_NOT_FOUND" });
    t.like(await rejectionOf(owner.setApiKeyTrusted({ merchantId: b.id, apiKey: b.primary, trusted: true })), { code: Code.NotFound });
    t.like(await rejectionOf(owner.revokeSecret({ merchantId: a.id, secretId: theirs.key!.secrets[0]!.id })), { code: Code.NotFound, reason: "SECRET_NOT_FOUND" });
    t.deepEqual(await secretsOf(theirs.key!.id), [theirs.apiSecret]);
    t.false((await gateway().getCredentials({ apiKey: b.primary })).trusted);
  });

  test(`${backend.name}: trusting a key for automatic payouts is the owner's (or an admin's), only for a key that can withdraw, and audited with the key as it was`, async (t) => {
    const m = await newMerchant();
    const reads = await client().createApiKey({ merchantId: m.id, label: "reports", scopes: ["read"] });
    for (const role of ["developer", "finance", "viewer"] as const) {
      t.like(await rejectionOf(asUser(m.id, role).setApiKeyTrusted({ merchantId: m.id, apiKey: m.primary, trusted: true })), { code: Code.PermissionDenied }, role);
    }
    t.false((await gateway().getCredentials({ apiKey: m.primary })).trusted, "refused: nothing changed");
    t.like(await rejectionOf(asUser(m.id, "owner").setApiKeyTrusted({ merchantId: m.id, apiKey: reads.key!.id, trusted: true })), {
      code: Code.FailedPrecondition,
      reason: "KEY_CANNOT_WITHDRAW",
    });

    const trusted = (await asUser(m.id, "owner").setApiKeyTrusted({ merchantId: m.id, apiKey: m.primary, trusted: true })).key!;
    t.true(trusted.trusted);
    t.true((await gateway().getCredentials({ apiKey: m.primary })).trusted, "the gateway signs the mark into its voice");
    await eventually(() => published.some((e) => e.change === "api_key_trusted" && e.apiKey === m.primary), "the event drops the gateway's cached key");
    t.false((await client().setApiKeyTrusted({ merchantId: m.id, apiKey: m.primary, trusted: false })).key!.trusted, "an admin takes it away");

    // The service's own append-only audit, as written in the change's transaction.
    const records = await backend
      .db()(AUDIT_TABLE)
      .where({ rpc: "payments.merchant.v1.MerchantService/SetApiKeyTrusted" })
      .andWhere("request_json", "like", `%${m.primary}%`)
      .select<Array<{ actor: string; role: string; outcome: string; merchant_id: string | null; request_json: string | null; before_json: string | null }>>(
        "actor",
        "role",
        "outcome",
        "merchant_id",
        "request_json",
        "before_json",
      );
    const byOwner = records.find((r) => r.actor === `owner@${m.id}.example.com`.toLowerCase() && r.outcome === "ok");
    t.truthy(byOwner, "the owner's trust is in the audit");
    t.like(byOwner, { merchant_id: m.id, role: "owner" });
    t.regex(byOwner!.request_json ?? "", /"trusted":\s*true/);
    t.regex(byOwner!.before_json ?? "", /"trusted":\s*false/, "with the key as it was before");
    t.true(records.some((r) => r.actor === "test-admin@example.com" && r.outcome === "ok" && /"trusted":\s*true/.test(r.before_json ?? "")), "the admin's too");
    t.true(records.some((r) => r.actor === `developer@${m.id}.example.com`.toLowerCase() && r.outcome === "PERMISSION_DENIED"), "and the refusals");
  });
});
