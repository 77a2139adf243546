import test from "ava";
import { csrfOf, type Browser } from "./harness.js";
import { merchantUserAccount, newMerchant } from "./merchant-harness.js";
import { postFrom, signedInAs, type Stack, stackForTests } from "./service-harness.js";

// Operator accounts and a merchant's dashboard users in the operators' console (issue 33): admins
// invite, change roles, disable and send new links through the console's own four-eyes (the
// maker never approves their own; a second admin does); support reads a merchant's users; every
// form needs the session's CSRF token and a role the console checks, replayed or not.

let stack: Stack;
let admin: Browser;
let second: Browser;
stackForTests(test, async (s) => {
  stack = s;
  admin = await signedInAs(stack.c, "ada@example.com", "admin");
  second = await signedInAs(stack.c, "berk@example.com", "admin");
});

const operatorRow = (email: string) => stack.c.console.context.db("operators").where({ email }).first() as Promise<{ id: string; role: string; disabled: number | boolean } | undefined>;
const userDisabled = async (id: string) => Boolean(((await stack.c.console.context.db("merchant_users").where({ id }).first()) as { disabled: number | boolean } | undefined)?.disabled);
const text = (page: string) => page.replace(/<[^>]+>/g, "").replace(/&#39;/g, "'").replace(/\s+/g, " ");

test.serial("an admin sees the accounts with name, role, authenticator, last sign-in and state, in English and in Turkish", async (t) => {
  const page = await admin.get("/operators?lang=en");
  t.is(page.status, 200);
  const words = text(page.html);
  t.regex(words, /ada \(you\) ada@example\.com admin Off \d/);
  t.regex(words, /berk berk@example\.com admin Off/);
  t.true(page.html.includes('href="/operators"'), "in the navigation");
  const tr = text((await admin.get("/operators?lang=tr")).html);
  t.true(tr.includes("Operatör hesapları"));
  t.true(tr.includes("yönetici Kapalı"));
  t.true(tr.includes("Operatör davet et"));
});

test.serial("inviting waits for a second admin: the maker gets no link and no Approve button and is refused if they post it; the second admin approves and is shown the link", async (t) => {
  const asked = await postFrom(admin, "/operators?lang=en", "/operators/invite", { email: "cem@example.com", displayName: "Cem", role: "operator" });
  t.is(asked.status, 202);
  t.regex(text(asked.html), /Invite cem@example\.com as operator: this waits for a second admin's approval/);
  t.false(asked.html.includes("set-password"));
  const id = /href="\/approvals\/console\/([A-Za-z0-9_-]+)"/.exec(asked.html)?.[1];
  t.truthy(id);
  t.is(await operatorRow("cem@example.com"), undefined);

  const own = await admin.get(`/approvals/console/${id!}?lang=en`);
  t.false(own.html.includes(`action="/approvals/console/${id!}/approve"`));
  const forced = await admin.post(`/approvals/console/${id!}/approve`, { _csrf: csrfOf(own.html) });
  t.is(forced.status, 403);
  t.is(await operatorRow("cem@example.com"), undefined);

  const approved = await postFrom(second, `/approvals/console/${id!}`, `/approvals/console/${id!}/approve`, {});
  t.is(approved.status, 200);
  t.regex(approved.html, /\/set-password\?token=/);
  t.is((await operatorRow("cem@example.com"))?.role, "operator");
});

test.serial("a viewer cannot open the page nor invite, even replaying the form with their own token; a post without the token is refused; bad input changes nothing", async (t) => {
  const viewer = await signedInAs(stack.c, "vera@example.com", "viewer");
  t.is((await viewer.get("/operators")).status, 403);
  const home = await viewer.get("/");
  const replay = await viewer.post("/operators/invite", { _csrf: csrfOf(home.html), email: "sneaky@example.com", displayName: "Sneaky", role: "admin" });
  t.is(replay.status, 403);
  t.is((await admin.post("/operators/invite", { email: "nocsrf@example.com", displayName: "No", role: "viewer" })).status, 403);
  const bad = await postFrom(admin, "/operators?lang=en", "/operators/invite", { email: "not-an-email", displayName: "Bad", role: "viewer" });
  t.is(bad.status, 400);
  t.true(bad.html.includes("The email is not an email address."));
  const badRole = await postFrom(admin, "/operators?lang=tr", "/operators/invite", { email: "ok@example.com", displayName: "Ok", role: "emperor" });
  t.is(badRole.status, 400);
  t.true(badRole.html.includes("Rollerden birini seçin."));
  const pending = await stack.c.console.context.db("operator_approvals").whereIn("target_email", ["sneaky@example.com", "nocsrf@example.com", "not-an-email", "ok@example.com"]);
  t.deepEqual(pending, []);
});

test.serial("raising a role waits, lowering and disabling are done at once, a new sign-in link waits; the last admin's own row offers nothing", async (t) => {
  await signedInAs(stack.c, "deniz@example.com", "operator");
  const row = (await operatorRow("deniz@example.com"))!;
  const raised = await postFrom(admin, "/operators?lang=en", `/operators/${row.id}/role`, { role: "finance" });
  t.is(raised.status, 202);
  t.is((await operatorRow("deniz@example.com"))?.role, "operator");
  const lowered = await postFrom(admin, "/operators?lang=en", `/operators/${row.id}/role`, { role: "viewer" });
  t.is(lowered.status, 200);
  t.regex(text(lowered.html), /Done: Role of deniz@example\.com to viewer/);
  t.is((await operatorRow("deniz@example.com"))?.role, "viewer");
  const reset = await postFrom(admin, "/operators?lang=en", `/operators/${row.id}/reset`, { clearTotp: "1" });
  t.is(reset.status, 202);
  const disabled = await postFrom(admin, "/operators?lang=en", `/operators/${row.id}/disable`, {});
  t.is(disabled.status, 200);
  t.truthy((await operatorRow("deniz@example.com"))?.disabled);
  t.regex(text(disabled.html), /deniz deniz@example\.com viewer Off .* Disabled/);
  // The admin's own row has no forms: nobody disables or demotes themselves here.
  const self = (await operatorRow("ada@example.com"))!;
  t.false((await admin.get("/operators")).html.includes(`/operators/${self.id}/disable`));
  t.is((await postFrom(admin, "/operators?lang=en", `/operators/${self.id}/disable`, {})).status, 403);
  t.is((await postFrom(admin, "/operators", "/operators/opr_nobody/disable", {})).status, 404);
});

test.serial("a merchant's dashboard users: support reads them, with no forms; an admin's new link waits for a second admin, disabling is at once; another merchant's user id is not found", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Kuşadası Kitap" });
  const other = await newMerchant(stack, { name: "Başka Dükkân" });
  const owner = await merchantUserAccount(stack, merchantId, "owner@kitap.example.com", "owner");
  const clerk = await merchantUserAccount(stack, merchantId, "clerk@kitap.example.com", "finance");
  const stranger = await merchantUserAccount(stack, other, "x@baska.example.com", "owner");
  const support = await signedInAs(stack.c, "sude@example.com", "support");
  const read = await support.get(`/merchants/${merchantId}/users?lang=en`);
  t.is(read.status, 200);
  const words = text(read.html);
  t.true(words.includes("Dashboard users of Kuşadası Kitap"));
  t.regex(words, /owner owner@kitap\.example\.com owner Off Never Active/);
  t.false(read.html.includes("/reset"), "support reads only");
  t.false(words.includes("x@baska"));
  t.true(read.html.includes(`href="/merchants/${merchantId}#h-invite-user"`), "the invite is linked");
  t.true(text((await support.get(`/merchants/${merchantId}/users?lang=tr`)).html).includes("Kuşadası Kitap panel kullanıcıları"));
  const replay = await support.post(`/merchants/${merchantId}/users/${clerk.id}/disable`, { _csrf: csrfOf(read.html) });
  t.is(replay.status, 403);
  t.false(await userDisabled(clerk.id));
  t.is((await support.get("/merchants/mer_nosuchmerchant/users")).status, 404);

  const reset = await postFrom(admin, `/merchants/${merchantId}/users?lang=en`, `/merchants/${merchantId}/users/${owner.id}/reset`, {});
  t.is(reset.status, 202);
  t.regex(text(reset.html), /A new sign-in link for owner@kitap\.example\.com: this waits for a second admin's approval/);
  const disabled = await postFrom(admin, `/merchants/${merchantId}/users?lang=en`, `/merchants/${merchantId}/users/${clerk.id}/disable`, {});
  t.is(disabled.status, 200);
  t.regex(text(disabled.html), /clerk clerk@kitap\.example\.com finance Off Never Disabled/);
  t.is((await postFrom(admin, `/merchants/${merchantId}/users`, `/merchants/${merchantId}/users/${stranger.id}/disable`, {})).status, 404);
  t.false(await userDisabled(stranger.id));
});
