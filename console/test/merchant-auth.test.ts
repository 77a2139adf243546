import test from "ava";
import { Browser, csrfOf } from "./harness.js";
import { merchantSignIn, merchantUserAccount, newMerchant, PASSWORD, signedInMerchantUser } from "./merchant-harness.js";
import { signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

test("invite → link → password → sign-in: the merchant session opens the dashboard, in its own cookie", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Auth Shop" });
  const browser = await signedInMerchantUser(stack, merchantId, "owner@auth.test", "owner");
  t.truthy(browser.cookie("console_merchant_session"));
  t.is(browser.cookie("console_session"), undefined, "no operator session is made");
  const team = await browser.get("/merchant/team");
  t.is(team.status, 200);
  t.regex(team.html, /owner@auth\.test/);
  t.regex(team.html, /Auth Shop/, "the merchant's name in the header");
  t.regex(team.headers.get("content-security-policy") ?? "", /script-src 'nonce-/);
  // Signed in already: the sign-in page sends to the dashboard.
  t.is((await browser.get("/merchant/sign-in")).location, "/merchant");
  // The link was used once: it does not open again.
  const again = await new Browser(stack.c).get("/merchant/set-password?token=nothing");
  t.is(again.status, 410);
});

test("a wrong password, an unknown email and an operator's credentials are refused alike", async (t) => {
  const merchantId = await newMerchant(stack);
  await merchantUserAccount(stack, merchantId, "wrong@auth.test", "viewer");
  const wrong = await merchantSignIn(stack, "wrong@auth.test", "not the password, really");
  t.is(wrong.status, 401);
  t.is(wrong.browser.cookie("console_merchant_session"), undefined);
  t.is((await merchantSignIn(stack, "nobody@auth.test")).status, 401);
  // An operator's email and password do not sign in to the merchant dashboard.
  await signedInAs(stack.c, "ops@auth.test", "operator");
  t.is((await merchantSignIn(stack, "ops@auth.test", PASSWORD)).status, 401);
});

test("an operator's cookie does not open /merchant pages, a merchant user's cookie does not open operator pages", async (t) => {
  const merchantId = await newMerchant(stack);
  const merchantUser = await signedInMerchantUser(stack, merchantId, "cross@auth.test", "owner");
  const operator = await signedInAs(stack.c, "cross-op@auth.test", "admin");

  const asOperator = await operator.get("/merchant/team");
  t.is(asOperator.status, 303);
  t.is(asOperator.location, "/merchant/sign-in");
  const asMerchant = await merchantUser.get("/merchants");
  t.is(asMerchant.status, 303);
  t.is(asMerchant.location, "/sign-in");

  // Even the same secret under the other cookie name opens nothing.
  const secret = merchantUser.cookie("console_merchant_session")!;
  const res = await fetch(`${stack.c.url}/`, { redirect: "manual", headers: { cookie: `console_session=${encodeURIComponent(secret)}` } });
  t.is(res.status, 303);
  t.is(res.headers.get("location"), "/sign-in");
  const opSecret = operator.cookie("console_session")!;
  const res2 = await fetch(`${stack.c.url}/merchant/team`, { redirect: "manual", headers: { cookie: `console_merchant_session=${encodeURIComponent(opSecret)}` } });
  t.is(res2.status, 303);
  t.is(res2.headers.get("location"), "/merchant/sign-in");
});

test("a state-changing merchant request without the session's CSRF token is refused, nothing changed", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "csrf@auth.test", "owner");
  const none = await owner.post("/merchant/team/invite", { email: "x@auth.test", role: "viewer" });
  t.is(none.status, 403);
  const wrong = await owner.post("/merchant/team/invite", { _csrf: "not-the-token-of-this-session-at-all", email: "x@auth.test", role: "viewer" });
  t.is(wrong.status, 403);
  // An operator session's token is not the merchant session's either.
  const operator = await signedInAs(stack.c, "csrf-op@auth.test", "admin");
  const opToken = csrfOf((await operator.get("/")).html);
  t.is((await owner.post("/merchant/team/invite", { _csrf: opToken, email: "x@auth.test", role: "viewer" })).status, 403);
  t.notRegex((await owner.get("/merchant/team")).html, /x@auth\.test/);
});

test("a viewer cannot reach owner actions, by page or by replaying the POST", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "boss@auth.test", "owner");
  const viewer = await signedInMerchantUser(stack, merchantId, "look@auth.test", "viewer");
  const page = await viewer.get("/merchant/team");
  t.is(page.status, 200);
  t.notRegex(page.html, /action="\/merchant\/team\/invite"/, "no invite form for a viewer");
  t.is((await viewer.get("/merchant/team/audit")).status, 403);
  const token = csrfOf(page.html);
  // The owner's own form, replayed by the viewer with the viewer's valid token.
  const ownerPage = await owner.get("/merchant/team");
  const bossId = /action="\/merchant\/team\/(mus_[^/"]+)\/role"/.exec(ownerPage.html)?.[1];
  t.truthy(bossId);
  for (const [path, form] of [
    ["/merchant/team/invite", { email: "sneak@auth.test", role: "owner" }],
    [`/merchant/team/${bossId}/role`, { role: "viewer" }],
    [`/merchant/team/${bossId}/remove`, {}],
  ] as const) {
    const res = await viewer.post(path, { _csrf: token, ...form });
    t.is(res.status, 403, path);
  }
  const after = await owner.get("/merchant/team");
  t.notRegex(after.html, /sneak@auth\.test/);
  t.regex(after.html, /boss@auth\.test<\/td><td[^>]*>sahip/);
});

test("sign-out ends the session: the cookie no longer opens the dashboard", async (t) => {
  const merchantId = await newMerchant(stack);
  const browser = await signedInMerchantUser(stack, merchantId, "bye@auth.test", "finance");
  const secret = browser.cookie("console_merchant_session")!;
  const page = await browser.get("/merchant/team");
  const out = await browser.post("/merchant/sign-out", { _csrf: csrfOf(page.html) });
  t.is(out.status, 303);
  t.is(out.location, "/merchant/sign-in?done=signed_out");
  t.is(browser.cookie("console_merchant_session"), undefined);
  const replay = await fetch(`${stack.c.url}/merchant/team`, { redirect: "manual", headers: { cookie: `console_merchant_session=${encodeURIComponent(secret)}` } });
  t.is(replay.status, 303);
});
