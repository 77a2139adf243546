import test from "ava";
import { SignJWT } from "jose";
import type { Knex } from "knex";
import {
  AssertionError,
  accessMigrations,
  ANSWERS_TABLE,
  AUDIT_TABLE,
  createAssertionSigner,
  generateAssertionKeyPair,
  isMerchantUser,
  listAudit,
  loadAssertionPrivateKey,
  loadAssertionPublicKey,
  recordAudit,
  roleAtLeast,
  signAssertion,
  verifyAssertion,
  verifyAssertionWithId,
} from "../src/index.js";
import { createLogger, ensureDatabase, migrate, openDatabase } from "@payments/kit";
import { createTestDatabase, manualClock } from "@payments/testing";

// The services believe only what the console's key signed for them: these are the ways an
// assertion is refused, and the append-only audit that records what was done with one.

const pair = generateAssertionKeyPair();
const privateKey = loadAssertionPrivateKey(pair.privateKeyPem);
const publicKey = loadAssertionPublicKey(pair.publicKeyPem);
const other = loadAssertionPrivateKey(generateAssertionKeyPair().privateKeyPem);
const ayse = { subject: "ayse@example.com", name: "Ayşe", role: "finance", kind: "human" } as const;
const now = new Date("2026-11-26T10:00:00Z");

test("a valid assertion for this service gives its subject, role and kind", async (t) => {
  const token = await signAssertion(privateKey, { ...ayse, audience: "payout" }, now);
  t.deepEqual(await verifyAssertion(publicKey, token, "payout", now), { subject: "ayse@example.com", name: "Ayşe", role: "finance", kind: "human" });
});

test("refused: another service's, expired, signed by another key, from the future, or a person's that lives longer than 60 s", async (t) => {
  const refused = async (token: string, audience = "payout", at = now) => (await t.throwsAsync(verifyAssertion(publicKey, token, audience, at), { instanceOf: AssertionError })).message;
  t.regex((await refused(await signAssertion(privateKey, { ...ayse, audience: "deposit" }, now))), /not valid here \(aud\)/);
  t.regex((await refused(await signAssertion(privateKey, { ...ayse, audience: "payout" }, now), "payout", new Date(now.getTime() + 66_000))), /expired/);
  t.truthy(await refused(await signAssertion(other, { ...ayse, audience: "payout" }, now)));
  t.truthy(await refused(await signAssertion(privateKey, { ...ayse, audience: "payout" }, new Date(now.getTime() + 3600_000))));
  const long = await new SignJWT({ role: "admin", kind: "human" }).setProtectedHeader({ alg: "EdDSA" }).setIssuer("payments-console").setSubject("x").setAudience("payout").setIssuedAt(now.getTime() / 1000).setExpirationTime(now.getTime() / 1000 + 3600).sign(privateKey);
  t.regex((await refused(long)), /at most 60 s/);
  const unknownRole = await new SignJWT({ role: "root", kind: "human" }).setProtectedHeader({ alg: "EdDSA" }).setIssuer("payments-console").setSubject("x").setAudience("payout").setIssuedAt(now.getTime() / 1000).setExpirationTime(now.getTime() / 1000 + 30).sign(privateKey);
  t.regex((await refused(unknownRole)), /no known role/);
  const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub: "x", role: "admin", kind: "human", aud: "payout", iss: "payments-console" })).toString("base64url")}.`;
  t.truthy(await refused(unsigned));
});

test("a merchant user's assertion names the merchant and a merchant role; an operator role with a merchant, or a merchant role without one, is refused", async (t) => {
  const user = { subject: "owner@shop.example.com", name: "Owner", role: "owner", kind: "human", merchantId: "mrc_1" } as const;
  const token = await signAssertion(privateKey, { ...user, audience: "payout" }, now);
  const identity = await verifyAssertion(publicKey, token, "payout", now);
  t.deepEqual(identity, user);
  t.true(isMerchantUser(identity));
  t.false(isMerchantUser(await verifyAssertion(publicKey, await signAssertion(privateKey, { ...ayse, audience: "payout" }, now), "payout", now)));
  const claims = (body: Record<string, unknown>) =>
    new SignJWT(body).setProtectedHeader({ alg: "EdDSA" }).setIssuer("payments-console").setSubject("x").setAudience("payout").setIssuedAt(now.getTime() / 1000).setExpirationTime(now.getTime() / 1000 + 30).sign(privateKey);
  const refused = async (token: string) => (await t.throwsAsync(verifyAssertion(publicKey, token, "payout", now), { instanceOf: AssertionError })).message;
  t.regex(await refused(await claims({ role: "admin", kind: "human", merchant_id: "mrc_1" })), /no known role/, "an operator's role is no merchant user's");
  t.regex(await refused(await claims({ role: "owner", kind: "human" })), /no known role/, "a merchant role alone opens nothing of ours");
  t.regex(await refused(await claims({ role: "owner", kind: "human", merchant_id: "" })), /empty merchant/);
});

test("a person's assertion cannot be signed for longer than 60 s; a service account's token can, up to 90 days, for the console alone", async (t) => {
  await t.throwsAsync(signAssertion(privateKey, { ...ayse, audience: "payout", ttlSeconds: 61 }, now), { instanceOf: AssertionError });
  const token = await signAssertion(privateKey, { subject: "reconciler", name: "reconciler", role: "viewer", kind: "service", audience: "console", ttlSeconds: 30 * 24 * 3600 }, now);
  t.is((await verifyAssertion(publicKey, token, "console", new Date(now.getTime() + 29 * 24 * 3600_000))).kind, "service");
  // A service takes nothing that lives longer than a minute: the token is exchanged at the console for one per call.
  const forService = await signAssertion(privateKey, { subject: "reconciler", name: "reconciler", role: "viewer", kind: "service", audience: "deposit", ttlSeconds: 3600 }, now);
  t.regex((await t.throwsAsync(verifyAssertion(publicKey, forService, "deposit", now), { instanceOf: AssertionError })).message, /at most 60 s/);
});

test("an assertion's id (jti) comes with its identity, for the services to accept it for one change; a malformed one is refused", async (t) => {
  const token = await signAssertion(privateKey, { ...ayse, audience: "payout" }, now);
  const { actor, jti } = await verifyAssertionWithId(publicKey, token, "payout", now);
  t.is(actor.subject, "ayse@example.com");
  t.regex(jti ?? "", /^asr_/);
  const other = await verifyAssertionWithId(publicKey, await signAssertion(privateKey, { ...ayse, audience: "payout" }, now), "payout", now);
  t.not(other.jti, jti, "every assertion has an id of its own");
  const claims = (jti: unknown) =>
    new SignJWT({ role: "admin", kind: "human", ...(jti === undefined ? {} : { jti: jti as string }) }).setProtectedHeader({ alg: "EdDSA" }).setIssuer("payments-console").setSubject("x").setAudience("payout").setIssuedAt(now.getTime() / 1000).setExpirationTime(now.getTime() / 1000 + 30).sign(privateKey);
  t.is((await verifyAssertionWithId(publicKey, await claims(undefined), "payout", now)).jti, undefined, "none named: the services refuse it for a change");
  for (const bad of ["", 7, "x".repeat(101)]) {
    t.regex((await t.throwsAsync(verifyAssertionWithId(publicKey, await claims(bad), "payout", now), { instanceOf: AssertionError })).message, /jti/, String(bad));
  }
});

test("an assertion naming more than one audience is refused by each of them", async (t) => {
  const token = await signAssertion(privateKey, { ...ayse, audience: ["payout", "deposit"] }, now);
  for (const audience of ["payout", "deposit"]) {
    t.regex((await t.throwsAsync(verifyAssertion(publicKey, token, audience, now), { instanceOf: AssertionError })).message, /more than one audience/, audience);
  }
});

test("a signer hands out a fresh assertion, never one used before, when asked for a change", async (t) => {
  const signer = createAssertionSigner(privateKey, ayse, { now: () => now });
  const read = await signer.assertionFor("payout");
  const changes = await Promise.all([signer.assertionFor("payout", { fresh: true }), signer.assertionFor("payout", { fresh: true })]);
  t.is(new Set([read, ...changes]).size, 3);
  t.is(await signer.assertionFor("payout"), read, "a read keeps the cached one");
});

test("a signer reuses an assertion per audience until 10 s before it expires", async (t) => {
  let at = now;
  const signer = createAssertionSigner(privateKey, ayse, { now: () => at });
  const first = await signer.assertionFor("payout");
  t.is(await signer.assertionFor("payout"), first);
  t.not(await signer.assertionFor("deposit"), first);
  at = new Date(now.getTime() + 51_000);
  t.not(await signer.assertionFor("payout"), first);
});

test("the roles are a ladder: each may what the ones below it may", (t) => {
  t.true(roleAtLeast("admin", "finance"));
  t.true(roleAtLeast("finance", "finance"));
  t.false(roleAtLeast("operator", "finance"));
  t.false(roleAtLeast("viewer", "support"));
});

for (const dialect of ["mysql", "sqlite"] as const) {
  test.serial(`${dialect}: the audit is append-only: the database refuses an UPDATE or DELETE of a record, and records page newest first by target`, async (t) => {
    let db: Knex;
    let drop: () => Promise<unknown> = () => Promise.resolve();
    if (dialect === "mysql") {
      const database = await createTestDatabase();
      await ensureDatabase(database.url);
      db = openDatabase({ url: database.url });
      drop = () => database.drop();
    } else {
      db = openDatabase({ sqliteFile: ":memory:" });
    }
    try {
      await migrate(db, accessMigrations);
      const clock = manualClock(now);
      const logger = createLogger({ service: "test", level: "silent" });
      for (let i = 0; i < 3; i++) {
        await recordAudit(db, clock, logger, { service: "payout", rpc: "payments.payout.v1.PayoutService/AdjustBalance", actor: "ayse@example.com", role: "finance", targets: ["mer_1", i === 2 ? "mer_2" : undefined], reason: `r${i}`, outcome: "ok" });
        clock.advance(1000);
      }
      await t.throwsAsync(db(AUDIT_TABLE).update({ outcome: "changed" }), { any: true, message: /append-only/ });
      await t.throwsAsync(db(AUDIT_TABLE).delete(), { any: true, message: /append-only/ });
      await t.throwsAsync(db(`${AUDIT_TABLE}_targets`).delete(), { any: true, message: /append-only/ });
      await db(ANSWERS_TABLE).insert({ audit_id: "aud_x", created_at: 1, outcome: "ok", after_json: null });
      await t.throwsAsync(db(ANSWERS_TABLE).update({ outcome: "changed" }), { any: true, message: /append-only/ });
      await t.throwsAsync(db(ANSWERS_TABLE).delete(), { any: true, message: /append-only/ });
      const first = await listAudit(db, { targetId: "mer_1", limit: 2 });
      if (first === "bad-cursor") return t.fail();
      t.deepEqual(first.rows.map((r) => r.reason), ["r2", "r1"]);
      const second = await listAudit(db, { targetId: "mer_1", limit: 2, cursor: first.nextCursor });
      if (second === "bad-cursor") return t.fail();
      t.deepEqual(second.rows.map((r) => r.reason), ["r0"]);
      t.is(second.nextCursor, "");
      const byActor = await listAudit(db, { actor: "ayse@example.com", limit: 10 });
      t.is(byActor === "bad-cursor" ? 0 : byActor.rows.length, 3);
    } finally {
      await db.destroy();
      await drop();
    }
  });
}
