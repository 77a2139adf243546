import test from "ava";
import { api, Browser, doneOf, serviceAdminToken } from "./harness.js";
import { merchantSignIn, merchantUserAccount, newMerchant, PASSWORD, setMerchantPassword, signedInMerchantUser } from "./merchant-harness.js";
import { postFrom, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

const NEW_PASSWORD = "another long enough password";
const resetPath = (merchantId: string, userId: string) => `/api/merchants/${merchantId}/users/${userId}/reset`;

test("admin API: a reset gives a new one-time link and ends the user's sessions; the old password works until the link is used", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Reset Shop" });
  const user = await merchantUserAccount(stack, merchantId, "fin@reset.test", "finance");
  const { browser } = await merchantSignIn(stack, user.email);
  t.is((await browser.get("/merchant")).status, 200);

  const token = await serviceAdminToken(stack.c, "bootstrap-bot");
  // Once an admin exists (another test's), a reset waits for a second admin, who gets the link.
  const res = await doneOf(stack.c, await api(stack.c, "POST", resetPath(merchantId, user.id), { token, body: {} }));
  t.like(res.user, { id: user.id, email: user.email, merchantId });
  const url = (res.link as { url: string }).url;
  t.regex(url, /\/merchant\/set-password\?token=/);
  t.is((await browser.get("/merchant")).status, 303, "the user's session has ended");

  t.is((await merchantSignIn(stack, user.email)).status, 303, "the old password works until the link is used");
  t.is((await setMerchantPassword(stack, url, NEW_PASSWORD)).status, 303);
  t.is((await merchantSignIn(stack, user.email)).status, 401, "the old password no longer");
  t.is((await merchantSignIn(stack, user.email, NEW_PASSWORD)).status, 303);
  t.is((await setMerchantPassword(stack, url, PASSWORD)).status, 410, "the link works once");

  // A second reset ends the first reset's unused link.
  const first = await doneOf(stack.c, await api(stack.c, "POST", resetPath(merchantId, user.id), { token, body: {} }));
  const second = await doneOf(stack.c, await api(stack.c, "POST", resetPath(merchantId, user.id), { token, body: {} }));
  t.is((await setMerchantPassword(stack, (first.link as { url: string }).url, PASSWORD)).status, 410);
  t.is((await setMerchantPassword(stack, (second.link as { url: string }).url, PASSWORD)).status, 303);

  // The merchant's trail records it.
  const records = (await stack.c.console.context.db("operator_audit").where({ merchant_id: merchantId }).whereIn("rpc", ["console/ResetMerchantUser", "console/ApproveChange"])) as Array<{ outcome: string; actor: string }>;
  t.true(records.length >= 3);
  t.true(records.every((r) => ["ok", "APPROVAL_REQUIRED"].includes(r.outcome) && ["bootstrap-bot", "second-bot"].includes(r.actor)));
});

test("admin API: another merchant's user, an unknown id or a bad body is refused; clearTotp turns TOTP off; a non-admin is refused", async (t) => {
  const merchantA = await newMerchant(stack);
  const merchantB = await newMerchant(stack);
  const userB = await merchantUserAccount(stack, merchantB, "dev@reset-b.test", "developer");
  const token = await serviceAdminToken(stack.c, "bootstrap-bot");
  const other = await api(stack.c, "POST", resetPath(merchantA, userB.id), { token, body: {} });
  t.is(other.status, 404);
  t.is((await api(stack.c, "POST", resetPath(merchantA, "mus_nobody"), { token, body: {} })).status, 404);
  t.is((await api(stack.c, "POST", resetPath(merchantB, userB.id), { token, body: { clearTotp: "yes" } })).status, 400);
  t.is((await api(stack.c, "POST", resetPath(merchantB, userB.id), {})).status, 401);
  t.is((await merchantSignIn(stack, userB.email)).status, 303, "nothing changed by the refusals");

  await stack.c.console.context.db("merchant_users").where({ id: userB.id }).update({ totp_secret: "plain.JBSWY3DPEHPK3PXP", totp_last_step: null });
  t.is((await merchantSignIn(stack, userB.email)).status, 401, "TOTP on: the code is asked for");
  const cleared = await doneOf(stack.c, await api(stack.c, "POST", resetPath(merchantB, userB.id), { token, body: { clearTotp: true } }));
  t.false((cleared.user as { totpEnrolled: boolean }).totpEnrolled);
  t.is((await merchantSignIn(stack, userB.email)).status, 303, "TOTP off: the password alone signs in");
});

/** The user id in the Team page's row of `email`. */
const idOf = (html: string, email: string): string => {
  const row = html.split("<tr>").find((r) => new RegExp(`<td[^>]*>${email}</td>`).test(r));
  const id = row ? /action="\/merchant\/team\/(mus_[^/"]+)\/reset"/.exec(row)?.[1] : undefined;
  if (!id) throw new Error(`no reset form of ${email}`);
  return id;
};

test("an owner sends a team member a new sign-in link from the Team page: shown once, their sessions end; other merchants' ids are 404, other roles 403", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Reset Team" });
  const owner = await signedInMerchantUser(stack, merchantId, "owner@reset-team.test", "owner");
  const viewer = await signedInMerchantUser(stack, merchantId, "viewer@reset-team.test", "viewer");
  const viewerId = idOf((await owner.get("/merchant/team")).html, "viewer@reset-team.test");

  const res = await postFrom(owner, "/merchant/team", `/merchant/team/${viewerId}/reset`, {});
  t.is(res.status, 200);
  t.is(res.headers.get("cache-control"), "no-store");
  const link = /<code id="reset-link">([^<]+)<\/code>/.exec(res.html)?.[1];
  t.truthy(link);
  t.notRegex((await owner.get("/merchant/team")).html, /reset-link/, "the link is not shown again");
  t.is((await viewer.get("/merchant")).status, 303, "the user's session has ended");
  t.is((await setMerchantPassword(stack, link!.replace(/&amp;/g, "&"), NEW_PASSWORD)).status, 303);
  t.is((await merchantSignIn(stack, "viewer@reset-team.test", NEW_PASSWORD)).status, 303);

  // Another merchant's user: 404, nothing changed; a viewer may not: 403.
  const otherMerchant = await newMerchant(stack);
  const stranger = await merchantUserAccount(stack, otherMerchant, "someone@elsewhere.test", "owner");
  const { browser: strangerBrowser } = await merchantSignIn(stack, stranger.email);
  t.is((await postFrom(owner, "/merchant/team", `/merchant/team/${stranger.id}/reset`, {})).status, 404);
  t.is((await postFrom(owner, "/merchant/team", "/merchant/team/not-an-id!/reset", {})).status, 404);
  t.is((await strangerBrowser.get("/merchant")).status, 200, "the other merchant's user is still signed in");
  const viewerAgain = (await merchantSignIn(stack, "viewer@reset-team.test", NEW_PASSWORD)).browser;
  t.is((await postFrom(viewerAgain, "/merchant/team", `/merchant/team/${viewerId}/reset`, {})).status, 403);
  t.is((await new Browser(stack.c).post(`/merchant/team/${viewerId}/reset`, { _csrf: "x" })).status, 303, "signed out: to sign-in");

  const trail = (await owner.get("/merchant/team/audit")).html;
  t.regex(trail, /Üye işyeri kullanıcısının giriş bağlantısı yenilendi/, "the reset, in the page's Turkish");
  t.notRegex(trail, /ResetMerchantUser/, "never the RPC's name");
});
