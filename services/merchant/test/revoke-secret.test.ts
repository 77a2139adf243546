import test from "ava";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { eventually, rejectionOf } from "@payments/testing";
import { onEachBackend } from "./merchant-on-each-backend.js";

// RevokeSecret: one API secret ends now, on SQLite and on MariaDB. What the gateway accepts is
// what GetCredentials answers (its cache is dropped by the MerchantChanged event, watched here).

onEachBackend(test, "merchant-revoke-", (backend) => {
  const { client, gateway, asUser, published } = backend;

  async function merchantWithRotatedSecret() {
    const created = await client().createMerchant({ name: `Revoke Shop ${backend.name}`, allowedIps: [], callbackUrl: "", sandbox: true });
    const rotated = await client().rotateSecret({ merchantId: created.merchant!.id, gracePeriodSeconds: 3600 });
    const [current, old] = rotated.merchant!.secrets;
    return { merchantId: created.merchant!.id, apiKey: created.merchant!.apiKey, oldSecret: created.apiSecret, newSecret: rotated.apiSecret, currentId: current!.id, oldId: old!.id };
  }

  test(`${backend.name}: a rotated-out secret revoked during its grace stops verifying at once, and the gateway's cache is told`, async (t) => {
    const m = await merchantWithRotatedSecret();
    t.deepEqual(
      (await gateway().getCredentials({ apiKey: m.apiKey })).secrets.map((s) => s.secret),
      [m.newSecret, m.oldSecret],
      "both verify during the grace period",
    );

    const before = Date.now();
    const { merchant } = await client().revokeSecret({ merchantId: m.merchantId, secretId: m.oldId });
    const old = merchant!.secrets.find((s) => s.id === m.oldId)!;
    t.false(old.valid);
    t.true(Number(timestampMs(old.expiresAt!)) >= before - 1 && Number(timestampMs(old.expiresAt!)) <= Date.now(), "it ended now, not at the end of its grace");
    t.like(
      merchant!.secrets.find((s) => s.id === m.currentId),
      { valid: true, expiresAt: undefined },
    );

    t.deepEqual(
      (await gateway().getCredentials({ apiKey: m.apiKey })).secrets.map((s) => s.secret),
      [m.newSecret],
      "only the current secret verifies",
    );
    const read = (await client().getMerchant({ merchantId: m.merchantId })).merchant!;
    t.false(read.secrets.find((s) => s.id === m.oldId)!.valid);
    await eventually(() => published.some((e) => e.merchantId === m.merchantId && e.change === "secret_revoked" && e.apiKey === m.apiKey), "the MerchantChanged event");
  });

  test(`${backend.name}: the current secret cannot be revoked (LAST_SECRET), alone or with a rotated-out one beside it; nothing changes`, async (t) => {
    const created = await client().createMerchant({ name: "Only Secret", allowedIps: [], callbackUrl: "", sandbox: true });
    const merchantId = created.merchant!.id;
    const only = created.merchant!.secrets[0]!.id;
    t.like(await rejectionOf(client().revokeSecret({ merchantId, secretId: only })), { code: Code.FailedPrecondition, reason: "LAST_SECRET" });

    const m = await merchantWithRotatedSecret();
    const info = await rejectionOf(client().revokeSecret({ merchantId: m.merchantId, secretId: m.currentId }));
    t.like(info, { code: Code.FailedPrecondition, reason: "LAST_SECRET" });
    t.regex(info.message, /rotate the secret first/);
    t.deepEqual(
      (await gateway().getCredentials({ apiKey: m.apiKey })).secrets.map((s) => s.secret),
      [m.newSecret, m.oldSecret],
      "both still verify",
    );
    t.false(published.some((e) => e.merchantId === merchantId && e.change === "secret_revoked"), "no event for a refused revoke");
  });

  test(`${backend.name}: revoking a secret that has ended already changes nothing`, async (t) => {
    const m = await merchantWithRotatedSecret();
    const first = (await client().revokeSecret({ merchantId: m.merchantId, secretId: m.oldId })).merchant!;
    const again = (await client().revokeSecret({ merchantId: m.merchantId, secretId: m.oldId })).merchant!;
    t.deepEqual(again.updatedAt, first.updatedAt, "nothing written");
    t.deepEqual(
      again.secrets.map((s) => [s.id, s.valid]),
      first.secrets.map((s) => [s.id, s.valid]),
    );
  });

  test(`${backend.name}: an unknown merchant or secret, or another merchant's secret, is NOT_FOUND; a bad request is VALIDATION_ERROR`, async (t) => {
    const a = await merchantWithRotatedSecret();
    const b = await merchantWithRotatedSecret();
    t.like(await rejectionOf(client().revokeSecret({ merchantId: "mer_nope", secretId: a.oldId })), { code: Code.NotFound, reason: "MERCHANT_NOT_FOUND" });
    t.like(await rejectionOf(client().revokeSecret({ merchantId: a.merchantId, secretId: "sec_nope" })), { code: Code.NotFound, reason: "SECRET_NOT_FOUND" });
    t.like(await rejectionOf(client().revokeSecret({ merchantId: a.merchantId, secretId: b.oldId })), { code: Code.NotFound, reason: "SECRET_NOT_FOUND" });
    t.like(await rejectionOf(client().revokeSecret({ merchantId: a.merchantId, secretId: "" })), { code: Code.InvalidArgument, reason: "VALIDATION_ERROR", field: "secret_id" });
    t.deepEqual(
      (await gateway().getCredentials({ apiKey: b.apiKey })).secrets.map((s) => s.secret),
      [b.newSecret, b.oldSecret],
      "the other merchant's secret still verifies",
    );
  });

  test(`${backend.name}: the merchant's owner and finance users revoke their own secrets, a developer only those of keys that cannot withdraw, a viewer none; another merchant's is NOT_FOUND`, async (t) => {
    const a = await merchantWithRotatedSecret();
    const b = await merchantWithRotatedSecret();
    t.like(await rejectionOf(asUser(a.merchantId, "viewer").revokeSecret({ merchantId: a.merchantId, secretId: a.oldId })), { code: Code.PermissionDenied }, "viewer");
    // The primary key can withdraw: its secrets are the owner's and finance's to manage.
    t.like(await rejectionOf(asUser(a.merchantId, "developer").revokeSecret({ merchantId: a.merchantId, secretId: a.oldId })), { code: Code.PermissionDenied }, "developer");
    t.like(await rejectionOf(asUser(a.merchantId, "owner").revokeSecret({ merchantId: b.merchantId, secretId: b.oldId })), { code: Code.NotFound });
    t.like(await rejectionOf(asUser(a.merchantId, "owner").revokeSecret({ merchantId: a.merchantId, secretId: b.oldId })), { code: Code.NotFound, reason: "SECRET_NOT_FOUND" });
    t.deepEqual(
      (await gateway().getCredentials({ apiKey: b.apiKey })).secrets.map((s) => s.secret),
      [b.newSecret, b.oldSecret],
      "nothing of the other merchant's changed",
    );
    t.deepEqual(
      (await gateway().getCredentials({ apiKey: a.apiKey })).secrets.map((s) => s.secret),
      [a.newSecret, a.oldSecret],
      "nothing refused changed",
    );
    const { merchant } = await asUser(a.merchantId, "finance").revokeSecret({ merchantId: a.merchantId, secretId: a.oldId });
    t.false(merchant!.secrets.find((s) => s.id === a.oldId)!.valid);

    // A developer's own key (no withdrawals): its rotated-out secret is theirs to revoke.
    const dev = asUser(a.merchantId, "developer");
    const own = await dev.createApiKey({ merchantId: a.merchantId, label: "checkout", scopes: ["deposits"] });
    const [, old] = (await dev.rotateSecret({ merchantId: a.merchantId, apiKey: own.key!.id, gracePeriodSeconds: 3600 })).key!.secrets;
    const { key } = await dev.revokeSecret({ merchantId: a.merchantId, secretId: old!.id });
    t.false(key!.secrets.find((s) => s.id === old!.id)!.valid);
  });
});
