import test from "ava";
import { csrfOf } from "./harness.js";
import { merchantSignIn, merchantUserAccount, newMerchant, setMerchantPassword, signedInMerchantUser } from "./merchant-harness.js";
import { postFrom, signedInAs, type Stack, stackForTests } from "./service-harness.js";

let stack: Stack;
stackForTests(test, (s) => {
  stack = s;
});

/** The user id in the Team page's row of `email`. */
const idOf = (html: string, email: string): string => {
  const row = html.split("<tr>").find((r) => new RegExp(`<td[^>]*>${email}</td>`).test(r));
  const id = row ? /action="\/merchant\/team\/(mus_[^/"]+)\/role"/.exec(row)?.[1] : undefined;
  if (!id) throw new Error(`no row of ${email}`);
  return id;
};

test("an owner invites: the one-time link is shown once (no-store) and signs the new user in; the trail records it", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Team One" });
  const owner = await signedInMerchantUser(stack, merchantId, "owner@one.test", "owner");
  const res = await postFrom(owner, "/merchant/team", "/merchant/team/invite", { email: "Fin@One.test", displayName: "Fin", role: "finance" });
  t.is(res.status, 201);
  t.is(res.headers.get("cache-control"), "no-store");
  const link = /<code id="invite-link">([^<]+)<\/code>/.exec(res.html)?.[1];
  t.truthy(link);
  t.notRegex((await owner.get("/merchant/team")).html, /invite-link/, "the link is not shown again");
  t.is((await setMerchantPassword(stack, link!.replace(/&amp;/g, "&"), "a long enough password")).status, 303);
  t.is((await merchantSignIn(stack, "fin@one.test", "a long enough password")).status, 303);

  // Refusals: a taken email, a bad one, a bad role; nothing added.
  t.is((await postFrom(owner, "/merchant/team", "/merchant/team/invite", { email: "fin@one.test", role: "viewer" })).status, 409);
  t.is((await postFrom(owner, "/merchant/team", "/merchant/team/invite", { email: "not an email", role: "viewer" })).status, 400);
  t.is((await postFrom(owner, "/merchant/team", "/merchant/team/invite", { email: "z@one.test", role: "admin" })).status, 400);

  const trail = await owner.get("/merchant/team/audit?lang=tr");
  t.is(trail.status, 200);
  t.regex(trail.html, /Üye işyeri kullanıcısı davet edildi/, "the step in Turkish");
  t.notRegex(trail.html, /InviteMerchantUser/, "never the step's code");
  t.regex(trail.html, /owner@one\.test/);
  t.regex(trail.html.replace(/<[^>]*>/g, ""), /Bu e-postayla bir kullanıcı zaten var/, "the refused repeat's outcome, in words");
  t.notRegex(trail.html, /MERCHANT_USER_EXISTS/);
});

test("an owner changes a role (at once) and removes a user (their session ends)", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "owner@two.test", "owner");
  const dev = await signedInMerchantUser(stack, merchantId, "dev@two.test", "developer");
  const devId = idOf((await owner.get("/merchant/team")).html, "dev@two.test");

  const changed = await postFrom(owner, "/merchant/team", `/merchant/team/${devId}/role`, { role: "owner" });
  t.is(changed.status, 303);
  t.is(changed.location, "/merchant/team?done=role");
  // The role counts at once: the former developer now reaches owner pages.
  t.is((await dev.get("/merchant/team/audit")).status, 200);

  const removed = await postFrom(owner, "/merchant/team", `/merchant/team/${devId}/remove`, {});
  t.is(removed.status, 303);
  t.is((await dev.get("/merchant/team")).status, 303, "the removed user's session has ended");
  t.is((await merchantSignIn(stack, "dev@two.test")).status, 401);
  t.notRegex((await owner.get("/merchant/team")).html, /dev@two\.test/);
  const trail = (await owner.get("/merchant/team/audit?lang=en")).html;
  t.regex(trail, /Merchant user(&#39;|')s role changed/);
  t.regex(trail, /Merchant user removed/);
});

test("the last owner is never demoted or removed", async (t) => {
  const merchantId = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, merchantId, "only@three.test", "owner");
  const ownId = idOf((await owner.get("/merchant/team")).html, "only@three.test");
  const demote = await postFrom(owner, "/merchant/team", `/merchant/team/${ownId}/role`, { role: "viewer" });
  t.is(demote.status, 409);
  t.regex(demote.html, /last owner/);
  t.is((await postFrom(owner, "/merchant/team", `/merchant/team/${ownId}/remove`, {})).status, 409);
  const page = await owner.get("/merchant/team");
  t.is(page.status, 200);
  t.regex(page.html, /only@three\.test<\/td><td[^>]*>sahip/);
});

test("another merchant's user id is 404 and nothing changes", async (t) => {
  const mine = await newMerchant(stack);
  const theirs = await newMerchant(stack);
  const owner = await signedInMerchantUser(stack, mine, "owner@four.test", "owner");
  const other = await merchantUserAccount(stack, theirs, "victim@four.test", "owner");
  t.is((await postFrom(owner, "/merchant/team", `/merchant/team/${other.id}/role`, { role: "viewer" })).status, 404);
  t.is((await postFrom(owner, "/merchant/team", `/merchant/team/${other.id}/remove`, {})).status, 404);
  t.is((await postFrom(owner, "/merchant/team", "/merchant/team/not%20an%20id/remove", {})).status, 404);
  t.notRegex((await owner.get("/merchant/team")).html, /victim@four\.test/, "another merchant's users are not listed");
  // The victim is untouched: still an owner who signs in.
  const victim = await merchantSignIn(stack, "victim@four.test");
  t.is(victim.status, 303);
  t.regex((await victim.browser.get("/merchant/team")).html, /victim@four\.test<\/td><td[^>]*>sahip/);
  t.notRegex((await owner.get("/merchant/team/audit")).html, /victim@four\.test/, "nor in this merchant's trail");
});

test("an operator admin invites from the merchant's page in the operator console: it waits for a second admin, who gets the link on the approvals page; the maker never does", async (t) => {
  const merchantId = await newMerchant(stack, { name: "From Ops" });
  const admin = await signedInAs(stack.c, "admin@five.test", "admin");
  const page = await admin.get(`/merchants/${merchantId}?lang=en`);
  t.regex(page.html, new RegExp(`action="/merchants/${merchantId}/users/invite"`));
  const res = await admin.post(`/merchants/${merchantId}/users/invite?lang=en`, { _csrf: csrfOf(page.html), email: "boss@five.test", role: "owner" });
  t.is(res.status, 202);
  t.regex(res.html, /Inviting boss@five\.test to From Ops&#39;s dashboard waits for a second admin/);
  t.notRegex(res.html, /set-password/, "no link for the admin who asked");
  const approvalId = /href="\/approvals\/console\/(apr_[^"]+)"/.exec(res.html)?.[1];
  if (!approvalId) throw new Error("no link to the approval");

  // The maker sees it waiting for someone else, and cannot approve it by replaying the form.
  const own = await admin.get(`/approvals/console/${approvalId}?lang=en`);
  t.regex(own.html, /You asked for this: it waits for someone else to approve it\./);
  t.notRegex(own.html, new RegExp(`/approvals/console/${approvalId}/approve`));
  const replay = await admin.post(`/approvals/console/${approvalId}/approve?lang=en`, { _csrf: csrfOf(own.html) });
  t.is(replay.status, 403);
  t.notRegex(replay.html, /set-password/);

  // A second admin finds it in the inbox, named by the merchant's name, and approves: the link is theirs, once.
  const second = await signedInAs(stack.c, "admin2@five.test", "admin");
  const inbox = await second.get("/approvals?lang=en");
  t.regex(inbox.html, new RegExp(`href="/approvals/console/${approvalId}"`));
  t.regex(inbox.html, /Invite boss@five\.test to From Ops (?:<span class="nw">)?\(mer_[^)]+\)&#39;s(?:<\/span>)? dashboard, role owner/);
  const detail = await second.get(`/approvals/console/${approvalId}?lang=en`);
  const approved = await second.post(`/approvals/console/${approvalId}/approve?lang=en`, { _csrf: csrfOf(detail.html) });
  t.is(approved.status, 200);
  t.is(approved.headers.get("cache-control"), "no-store");
  const link = /<code id="sign-in-link">([^<]+)<\/code>/.exec(approved.html)?.[1];
  t.truthy(link);
  t.notRegex((await second.get(`/approvals/console/${approvalId}?lang=en`)).html, /set-password/, "shown once");
  t.is((await setMerchantPassword(stack, link!.replace(/&amp;/g, "&"), "a long enough password")).status, 303);
  const signedIn = await merchantSignIn(stack, "boss@five.test", "a long enough password");
  t.is(signedIn.status, 303);
  const trail = (await signedIn.browser.get("/merchant/team/audit")).html;
  t.regex(trail, /admin@five\.test/);
  t.regex(trail, /admin2@five\.test/);
  // An unknown merchant is refused; a viewer operator is not offered the form and cannot post it.
  t.is((await admin.post("/merchants/mer_nope/users/invite", { _csrf: csrfOf(page.html), email: "x@five.test", role: "owner" })).status, 404);
  const viewer = await signedInAs(stack.c, "viewer@five.test", "viewer");
  const viewerPage = await viewer.get(`/merchants/${merchantId}`);
  t.notRegex(viewerPage.html, /users\/invite/);
  t.is((await viewer.post(`/merchants/${merchantId}/users/invite`, { _csrf: csrfOf(viewerPage.html), email: "y@five.test", role: "owner" })).status, 403);
  t.is((await viewer.get(`/approvals/console/${approvalId}`)).status, 403, "the console's approvals are an admin's");
});
