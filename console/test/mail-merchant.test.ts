import test from "ava";
import { api, csrfOf, doneOf, serviceAdminToken, setPasswordThroughLink, signedInBrowser, type Browser } from "./harness.js";
import { checkEnvelope, linkIn, Mailbox } from "./mail-harness.js";
import { merchantSignIn, newMerchant, PASSWORD, setMerchantPassword } from "./merchant-harness.js";
import { postFrom, startStack, type Stack } from "./service-harness.js";

// Merchant users' one-time links by mail (issue 33): an operator's invitation (approved by a
// second admin), the admin API's, and an owner's invitation and "send a new sign-in link" on the
// Team page each reach a real SMTP server, to the user, naming the merchant and who invited them,
// in the sender's page language; the pages never show a mailed link.

let stack: Stack;
let box: Mailbox;
test.before(async () => {
  box = await Mailbox.start();
  stack = await startStack({ consoleEnv: box.env });
});
test.after.always(async () => {
  await stack.stop();
  await box.close();
});

/** An operator admin made through the admin API (approved by a second service admin once one exists), the link read from their mail, signed in. */
async function adminByMail(email: string): Promise<Browser> {
  const created = await api(stack.c, "POST", "/api/operators", { token: await serviceAdminToken(stack.c, "bootstrap-bot"), body: { email, displayName: email.split("@")[0], role: "admin" } });
  const done = await doneOf(stack.c, created);
  if (done.link !== undefined) throw new Error("a mailed link is in the answer");
  if ((await setPasswordThroughLink(stack.c, linkIn(box.last(email)), PASSWORD)).status !== 303) throw new Error(`set password of ${email}`);
  const { browser, status } = await signedInBrowser(stack.c, email, PASSWORD);
  if (status !== 303) throw new Error(`sign-in of ${email}: ${status}`);
  return browser;
}

const userId = async (email: string) => ((await stack.c.console.context.db("merchant_users").where({ email }).first()) as { id: string }).id;

test.serial("an operator invites a merchant user from the merchant's page; a second admin's approval on the English page mails it, naming the merchant and who asked; the link works once", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Posta Dükkânı" });
  const maker = await adminByMail("ops1@mail.test");
  const approver = await adminByMail("ops2@mail.test");
  const page = await maker.get(`/merchants/${merchantId}`);
  const asked = await maker.post(`/merchants/${merchantId}/users/invite`, { _csrf: csrfOf(page.html), email: "boss@posta.test", displayName: "Büşra Patron", role: "owner" });
  t.is(asked.status, 202);
  const approvalId = /href="\/approvals\/console\/(apr_[^"]+)"/.exec(asked.html)?.[1];
  if (!approvalId) throw new Error("no link to the approval");

  const approved = await postFrom(approver, `/approvals/console/${approvalId}?lang=en`, `/approvals/console/${approvalId}/approve`, {});
  t.is(approved.status, 200);
  t.regex(approved.html, /The one-time link was sent by e-mail to boss@posta\.test/);
  t.notRegex(approved.html, /set-password\?token=/);

  const received = box.last("boss@posta.test");
  const url = checkEnvelope(t, received, "boss@posta.test");
  t.regex(url, /\/merchant\/set-password\?token=/);
  t.is(received.mail.subject, "You are invited to the Posta Dükkânı merchant dashboard");
  t.regex(received.mail.text ?? "", /^Hello Büşra Patron,\n\nops1 \(ops1@mail\.test\) invited you to the Posta Dükkânı merchant dashboard\./);
  t.is((await setMerchantPassword(stack, url, PASSWORD)).status, 303);
  t.is((await merchantSignIn(stack, "boss@posta.test")).status, 303);
  t.is((await setMerchantPassword(stack, url, "a password for someone else")).status, 410, "the link works once");
});

test.serial("the admin API's invitation is mailed in Turkish; an owner's invitation and reset on the English Team page are mailed and never shown; each link works once", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Çiçek Evi" });
  const invited = await doneOf(stack.c, await api(stack.c, "POST", `/api/merchants/${merchantId}/users`, { token: await serviceAdminToken(stack.c, "bootstrap-bot"), body: { email: "owner@cicek.test", displayName: "Şule Sahip", role: "owner" } }));
  t.deepEqual(invited.mail, { status: "sent", to: "owner@cicek.test" });
  t.is(invited.link, undefined);
  const ownerMail = box.last("owner@cicek.test");
  t.is(ownerMail.mail.subject, "Çiçek Evi üye işyeri paneline davet edildiniz");
  t.regex(ownerMail.mail.text ?? "", /^Merhaba Şule Sahip,\n\nbootstrap-bot sizi Çiçek Evi üye işyeri paneline davet etti\./);
  t.is((await setMerchantPassword(stack, checkEnvelope(t, ownerMail, "owner@cicek.test"), PASSWORD)).status, 303);
  const { browser: owner } = await merchantSignIn(stack, "owner@cicek.test");

  const invite = await postFrom(owner, "/merchant/team?lang=en", "/merchant/team/invite", { email: "fin@cicek.test", displayName: "Fatma Finans", role: "finance" });
  t.is(invite.status, 201);
  t.regex(invite.html, /The one-time link was sent by e-mail to fin@cicek\.test/);
  t.notRegex(invite.html, /set-password\?token=/);
  const finMail = box.last("fin@cicek.test");
  t.is(finMail.mail.subject, "You are invited to the Çiçek Evi merchant dashboard");
  t.regex(finMail.mail.text ?? "", /Şule Sahip \(owner@cicek\.test\) invited you/);
  const finLink = checkEnvelope(t, finMail, "fin@cicek.test");
  t.is((await setMerchantPassword(stack, finLink, PASSWORD)).status, 303);
  const { browser: fin } = await merchantSignIn(stack, "fin@cicek.test");
  t.is((await setMerchantPassword(stack, finLink, PASSWORD)).status, 410);

  const reset = await postFrom(owner, "/merchant/team", `/merchant/team/${await userId("fin@cicek.test")}/reset`, {});
  t.is(reset.status, 200);
  t.regex(reset.html, /sent by e-mail to fin@cicek\.test/);
  t.notRegex(reset.html, /set-password\?token=/);
  t.is(box.to("fin@cicek.test").length, 2);
  const resetMail = box.last("fin@cicek.test");
  t.is(resetMail.mail.subject, "Your new sign-in link to the Çiçek Evi merchant dashboard");
  t.regex(resetMail.mail.text ?? "", /Şule Sahip \(owner@cicek\.test\) gave you a new sign-in link/);
  t.is((await fin.get("/merchant")).status, 303, "the user's sessions have ended");
  const newPassword = "fatma's brand new password";
  t.is((await setMerchantPassword(stack, linkIn(resetMail), newPassword)).status, 303);
  t.is((await merchantSignIn(stack, "fin@cicek.test", newPassword)).status, 303);
  t.is((await setMerchantPassword(stack, linkIn(resetMail), PASSWORD)).status, 410);
});

test.serial("an owner's invitation the mail server refuses: the Team page says so and offers the still valid link once", async (t) => {
  const merchantId = await newMerchant(stack, { name: "Sekme Ltd" });
  await doneOf(stack.c, await api(stack.c, "POST", `/api/merchants/${merchantId}/users`, { token: await serviceAdminToken(stack.c, "bootstrap-bot"), body: { email: "owner@sekme.test", role: "owner" } }));
  t.is((await setMerchantPassword(stack, linkIn(box.last("owner@sekme.test")), PASSWORD)).status, 303);
  const { browser: owner } = await merchantSignIn(stack, "owner@sekme.test");
  const invite = await postFrom(owner, "/merchant/team?lang=tr", "/merchant/team/invite", { email: "bounce@sekme.test", role: "viewer" });
  t.is(invite.status, 201);
  t.regex(invite.html, /bounce@sekme\.test adresine e-posta gönderilemedi/);
  const shown = /<details><summary>Tek kullanımlık bağlantıyı göster<\/summary><p><code id="invite-link">([^<]+)<\/code>/.exec(invite.html)?.[1];
  if (!shown) throw new Error("no link offered");
  t.is(box.to("bounce@sekme.test").length, 0);
  t.is((await setMerchantPassword(stack, shown.replace(/&amp;/g, "&"), PASSWORD)).status, 303);
  t.is((await merchantSignIn(stack, "bounce@sekme.test")).status, 303);
});
