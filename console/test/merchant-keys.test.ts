import test from "ava";
import { csrfOf } from "./harness.js";
import { newMerchant, signedInMerchantUser } from "./merchant-harness.js";
import { type Stack, stackForTests } from "./service-harness.js";

// The Developers page's API keys (issue 32): a key per system with the scopes it needs, its
// secret shown once; a developer gets no secret of a key that can withdraw by any form; the
// owner alone trusts a key for automatic payouts, after being told what that means.

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const keysOf = async (merchantId: string) => (await stack.merchants.listApiKeys({ merchantId })).keys;
const SECRET = /<dd><code>(sk_[^<]+)<\/code><\/dd>/;
const KEY = /<dd><code>(pk_[^<]+)<\/code><\/dd>/;

test("a developer makes a key without withdrawals (shown once, no-store), rotates its secret and revokes it; withdrawals are not offered, and a crafted form asking for them is refused with nothing made", async (t) => {
  const merchantId = await newMerchant(stack);
  const dev = await signedInMerchantUser(stack, merchantId, "dev@keys-dev.test", "developer");
  const page = await dev.get("/merchant/developers?lang=en");
  const csrf = csrfOf(page.html);
  t.regex(page.html, /name="scope_read"/);
  t.regex(page.html, /name="scope_deposits"/);
  t.notRegex(page.html, /name="scope_withdrawals"/, "a developer is not offered withdrawals");
  t.regex(page.html, /Only the owner or a finance user can create a key that can withdraw/);

  const crafted = await dev.post("/merchant/developers/keys?lang=en", { _csrf: csrf, label: "sneaky", scope_read: "1", scope_withdrawals: "1" });
  t.is(crafted.status, 403, crafted.html);
  t.regex(crafted.html, /only the owner or a finance user can/);
  t.is((await keysOf(merchantId)).length, 1, "nothing was made");

  const missing = await dev.post("/merchant/developers/keys?lang=en", { _csrf: csrf, label: "  " });
  t.is(missing.status, 400);
  t.regex(missing.html, /A name of 1 to 100 characters/);
  t.regex(missing.html, /Choose at least one scope/);

  const made = await dev.post("/merchant/developers/keys", { _csrf: csrf, label: "Ödeme sayfası", scope_deposits: "1" });
  t.is(made.status, 200, made.html);
  t.is(made.headers.get("cache-control"), "no-store");
  const apiKey = KEY.exec(made.html)?.[1];
  const secret = SECRET.exec(made.html)?.[1];
  t.truthy(apiKey && secret);
  const key = (await keysOf(merchantId)).find((k) => k.id === apiKey)!;
  t.like(key, { label: "Ödeme sayfası", trusted: false });
  t.deepEqual(key.scopes, ["deposits"]);

  const list = await dev.get("/merchant/developers?lang=tr");
  t.regex(list.html, /Ödeme sayfası/);
  t.regex(list.html, /yatırımlar/);
  t.notRegex(list.html, new RegExp(secret!.replace(/[^A-Za-z0-9]/g, ".")), "the secret is never shown again");

  const rotated = await dev.post(`/merchant/developers/keys/${apiKey}/rotate-secret`, { _csrf: csrf, grace: "0" });
  t.is(rotated.status, 200, rotated.html);
  t.is(rotated.headers.get("cache-control"), "no-store");
  t.truthy(SECRET.exec(rotated.html));
  const revoked = await dev.post(`/merchant/developers/keys/${apiKey}/revoke?lang=en`, { _csrf: csrf });
  t.is(revoked.status, 200, revoked.html);
  t.regex(revoked.html, /is revoked/);
  t.truthy((await keysOf(merchantId)).find((k) => k.id === apiKey)!.revokedAt);
});

test("a developer is refused every form that would show a secret of a key that can withdraw: the primary key's, another withdrawals key's; nothing changes", async (t) => {
  const merchantId = await newMerchant(stack);
  const finance = await signedInMerchantUser(stack, merchantId, "finance@keys-refused.test", "finance");
  const financeCsrf = csrfOf((await finance.get("/merchant/developers")).html);
  const payouts = KEY.exec((await finance.post("/merchant/developers/keys", { _csrf: financeCsrf, label: "payouts", scope_withdrawals: "1" })).html)?.[1];
  t.truthy(payouts, "finance makes a key that can withdraw");
  const primary = (await stack.merchants.getMerchant({ merchantId })).merchant!.apiKey;
  const before = JSON.stringify((await keysOf(merchantId)).map((k) => [k.id, k.secrets.map((s) => [s.id, s.valid]), k.revokedAt?.seconds]), (_, v: unknown) => (typeof v === "bigint" ? String(v) : v));

  const dev = await signedInMerchantUser(stack, merchantId, "dev@keys-refused.test", "developer");
  const page = await dev.get(`/merchant/developers/keys/${payouts}?lang=en`);
  t.is(page.status, 200);
  t.regex(page.html, /only the owner or a finance user can rotate or revoke its secrets/);
  t.notRegex(page.html, /rotate-secret"/, "no rotate form");
  t.notRegex(page.html, /\/revoke"/, "no revoke forms");
  const csrf = csrfOf(page.html);
  const secretId = (await keysOf(merchantId)).find((k) => k.id === payouts)!.secrets[0]!.id;
  for (const [what, path, form] of [
    ["the primary key's secret (the old form)", "/merchant/developers/rotate-secret", { grace: "0" }],
    ["the primary key's secret", `/merchant/developers/keys/${primary}/rotate-secret`, { grace: "0" }],
    ["another withdrawals key's secret", `/merchant/developers/keys/${payouts}/rotate-secret`, { grace: "0" }],
    ["revoke a withdrawals key's secret", `/merchant/developers/secrets/${secretId}/revoke`, {}],
    ["revoke a withdrawals key", `/merchant/developers/keys/${payouts}/revoke`, {}],
    ["trust a key", `/merchant/developers/keys/${payouts}/trust`, { trusted: "1", confirm: "1" }],
  ] as const) {
    const res = await dev.post(path, { _csrf: csrf, ...form });
    t.is(res.status, 403, `${what}: ${res.status}`);
    t.notRegex(res.html, /sk_/, `${what}: no secret`);
  }
  const after = JSON.stringify((await keysOf(merchantId)).map((k) => [k.id, k.secrets.map((s) => [s.id, s.valid]), k.revokedAt?.seconds]), (_, v: unknown) => (typeof v === "bigint" ? String(v) : v));
  t.is(after, before, "no key, secret or mark changed");
  t.is((await dev.get("/merchant/developers/keys/pk_nope")).status, 404);
});

test("only the owner trusts a withdrawals key for automatic payouts, after the warning and a ticked confirmation; the mark is shown and can be taken away", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "owner@keys-trust.test", "owner");
  const csrf = csrfOf((await owner.get("/merchant/developers")).html);
  const made = await owner.post("/merchant/developers/keys", { _csrf: csrf, label: "payouts server", scope_read: "1", scope_withdrawals: "1" });
  const apiKey = KEY.exec(made.html)?.[1] ?? "";
  const reads = KEY.exec((await owner.post("/merchant/developers/keys", { _csrf: csrf, label: "reports", scope_read: "1" })).html)?.[1] ?? "";
  t.truthy(apiKey && reads);

  const page = await owner.get(`/merchant/developers/keys/${apiKey}?lang=en`);
  t.regex(page.html, /sent without anyone&#39;s approval|sent without anyone's approval/);
  t.regex(page.html, /recorded in your audit trail/);
  t.notRegex((await owner.get(`/merchant/developers/keys/${reads}`)).html, /\/trust"/, "a key that cannot withdraw has nothing to trust");

  const unconfirmed = await owner.post(`/merchant/developers/keys/${apiKey}/trust?lang=en`, { _csrf: csrf, trusted: "1" });
  t.is(unconfirmed.status, 400);
  t.regex(unconfirmed.html, /Tick the box/);
  t.false((await keysOf(merchantId)).find((k) => k.id === apiKey)!.trusted);

  for (const role of ["finance", "developer"] as const) {
    const other = await signedInMerchantUser(stack, merchantId, `${role}@keys-trust.test`, role);
    const otherPage = await other.get(`/merchant/developers/keys/${apiKey}?lang=en`);
    t.regex(otherPage.html, /Only the owner can change this/);
    t.is((await other.post(`/merchant/developers/keys/${apiKey}/trust`, { _csrf: csrfOf(otherPage.html), trusted: "1", confirm: "1" })).status, 403, role);
  }
  t.false((await keysOf(merchantId)).find((k) => k.id === apiKey)!.trusted);

  const trusted = await owner.post(`/merchant/developers/keys/${apiKey}/trust`, { _csrf: csrf, trusted: "1", confirm: "1" });
  t.is(trusted.status, 303, trusted.html);
  t.true((await keysOf(merchantId)).find((k) => k.id === apiKey)!.trusted);
  const shown = await owner.get(`${trusted.location!}&lang=en`);
  t.regex(shown.html, /now trusted for automatic payouts/);
  t.regex((await owner.get("/merchant/developers?lang=tr")).html, /güvenilir/);

  const removed = await owner.post(`/merchant/developers/keys/${apiKey}/trust`, { _csrf: csrf, trusted: "0" });
  t.is(removed.status, 303);
  t.false((await keysOf(merchantId)).find((k) => k.id === apiKey)!.trusted);
});
