import test from "ava";
import { totpCode } from "../src/identity/totp.js";
import { Browser, csrfOf } from "./harness.js";
import { merchantSignIn, merchantUserAccount, newMerchant, PASSWORD, signedInMerchantUser } from "./merchant-harness.js";
import { postFrom, startStack, type Stack } from "./service-harness.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack({ consoleEnv: { CONSOLE_TOTP_KEY: "22".repeat(32) } });
});
test.after.always(async () => {
  await stack.stop();
});

/** The base32 key the enrolment page shows (grouped by four). */
function keyOf(html: string): string {
  const match = /<dt>[^<]+<\/dt><dd><code>([A-Z2-7 ]+)<\/code><\/dd>/.exec(html);
  if (!match?.[1]) throw new Error("no key on the page");
  return match[1].replace(/ /g, "");
}

/** Signs in through /merchant/sign-in with a TOTP code. */
async function signInWithCode(email: string, code?: string) {
  const browser = new Browser(stack.c);
  const page = await browser.get("/merchant/sign-in");
  return browser.post("/merchant/sign-in", { _csrf: csrfOf(page.html), email, password: PASSWORD, ...(code ? { totp: code } : {}) });
}

const row = (email: string) => stack.c.console.context.db("merchant_users").where({ email }).first() as Promise<{ totp_secret: string | null; totp_last_step: number | null }>;

test("a merchant user turns TOTP on (sealed, confirmed by a code), then sign-in needs a code, once per code; off again with a current code", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Totp Shop" });
  const owner = await signedInMerchantUser(stack, merchantId, "owner@totp.test", "owner");
  const viewer = await signedInMerchantUser(stack, merchantId, "viewer@totp.test", "viewer");

  t.regex((await viewer.get("/merchant/team")).html, /href="\/merchant\/totp"/, "the Team page links the page");
  const enrol = await viewer.get("/merchant/totp");
  t.is(enrol.status, 200);
  t.regex(enrol.html, /otpauth:\/\/totp\/[^"<]*viewer%40totp\.test/);
  const key = keyOf(enrol.html);
  t.is(keyOf((await viewer.get("/merchant/totp")).html), key, "the same key until it is confirmed");

  const wrong = await viewer.post("/merchant/totp", { _csrf: csrfOf(enrol.html), code: "000000" });
  t.is(wrong.status, 400);
  t.is((await row("viewer@totp.test")).totp_secret, null, "nothing stored on a wrong code");
  t.is((await viewer.post("/merchant/totp", { code: totpCode(key, stack.c.clock.now()) })).status, 403, "no CSRF token, refused");

  const code = totpCode(key, stack.c.clock.now());
  const confirmed = await viewer.post("/merchant/totp", { _csrf: csrfOf(enrol.html), code });
  t.is(confirmed.status, 303);
  t.is(confirmed.location, "/merchant/totp");
  const stored = await row("viewer@totp.test");
  t.true(stored.totp_secret!.startsWith("v1."), "sealed at rest with CONSOLE_TOTP_KEY");
  t.false(stored.totp_secret!.includes(key));
  const on = await viewer.get("/merchant/totp");
  t.regex(on.html, /action="\/merchant\/totp\/remove"/, "enrolled: the removal form");
  t.notRegex(on.html, /otpauth:/, "the key is not shown again");

  // Sign-in now needs the code; the code of the enrolment is not accepted again.
  t.is((await signInWithCode("viewer@totp.test")).status, 401);
  t.is((await signInWithCode("viewer@totp.test", code)).status, 401, "a code is accepted once");
  stack.c.clock.advance(30_000);
  const signedIn = await signInWithCode("viewer@totp.test", totpCode(key, stack.c.clock.now()));
  t.is(signedIn.status, 303);
  t.is(signedIn.location, "/merchant");

  // Removal: a wrong code and the code just used are refused; a new one turns it off.
  const page = await viewer.get("/merchant/totp");
  t.is((await viewer.post("/merchant/totp/remove", { _csrf: csrfOf(page.html), code: "000000" })).status, 400);
  t.is((await viewer.post("/merchant/totp/remove", { _csrf: csrfOf(page.html), code: totpCode(key, stack.c.clock.now()) })).status, 400, "a code used at sign-in is not accepted again");
  t.truthy((await row("viewer@totp.test")).totp_secret);
  stack.c.clock.advance(30_000);
  const removed = await viewer.post("/merchant/totp/remove", { _csrf: csrfOf(page.html), code: totpCode(key, stack.c.clock.now()) });
  t.is(removed.status, 303);
  t.is(removed.location, "/merchant/totp?done=removed");
  t.like(await row("viewer@totp.test"), { totp_secret: null, totp_last_step: null });
  const after = await viewer.get(removed.location!);
  t.notRegex(after.html, /action="\/merchant\/totp\/remove"/);
  t.not(keyOf(after.html), key, "a new key to enrol with");
  t.is((await merchantSignIn(stack, "viewer@totp.test")).status, 303, "sign-in without a code again");

  // Each step is in the merchant's trail, done or refused.
  const trail = (await owner.get("/merchant/team/audit")).html;
  t.regex(trail, /İki adımlı doğrulama açıldı/);
  t.regex(trail, /İki adımlı doğrulama kapatıldı/);
  t.regex(trail, /Doğrulama kodu geçerli değil/, "the refusal, in words");
  t.notRegex(trail, /EnrolMerchantUserTotp|RemoveMerchantUserTotp|TOTP_INVALID/, "no RPC name or code shown raw");
  const records = (await stack.c.console.context.db("operator_audit").where({ merchant_id: merchantId }).whereLike("rpc", "%Totp")) as Array<{ actor: string; outcome: string }>;
  t.true(records.some((r) => r.actor === "viewer@totp.test" && r.outcome === "ok"));
});

test("a merchant session does not reach the operators' /totp; signed out, /merchant/totp goes to sign-in; the page in both languages", async (t) => {
  const merchantId = await newMerchant(stack);
  const user = await merchantUserAccount(stack, merchantId, "dev@totp-own.test", "developer");
  const { browser } = await merchantSignIn(stack, user.email);
  t.not((await browser.get("/totp")).status, 200, "the operators' enrolment needs an operator");
  t.is((await new Browser(stack.c).get("/merchant/totp")).status, 303, "not signed in: to sign-in");
  const page = await browser.get("/merchant/totp");
  t.is(page.status, 200);
  t.regex((await browser.get("/merchant/totp?lang=en")).html, /Two-step verification/);
  t.regex((await browser.get("/merchant/totp?lang=tr")).html, /İki adımlı doğrulama/);
  const confirmed = await postFrom(browser, "/merchant/totp", "/merchant/totp", { code: "12" });
  t.is(confirmed.status, 400);
});
