import test, { type ExecutionContext } from "ava";
import { ConfigError } from "@payments/kit";
import { loadConsoleConfig } from "../src/config.js";
import { linkMail } from "../src/identity/mail/messages.js";
import { formatTime } from "../src/shared/format.js";
import { checkEnvelope, FROM, linkIn, mailbox, type Mailbox } from "./mail-harness.js";
import { api, Browser, csrfOf, doneOf, serviceAdminToken, setPasswordThroughLink, signedInBrowser, testConsole, type JsonAnswer, type TestConsole } from "./harness.js";

// One-time links by mail (issue 33): with SMTP_URL an invitation or a reset goes to the person,
// from MAIL_FROM, in the language of the page its sender used; the page names the address and
// never shows the link; a mail the server refuses is said so, and the link (still valid) is offered
// once. Without SMTP_URL the link is shown as before. A real SMTP server (smtp-server) on an
// ephemeral port receives every message.

const PASSWORD = "correct horse battery staple";

const approvalIdOf = (answer: JsonAnswer) => (answer.body.approval as { id: string }).id;

/** Alice, the first admin (made at once: bootstrap), her link read from her mail; signed in through the page. */
async function firstAdminByMail(t: ExecutionContext, c: TestConsole, box: Mailbox): Promise<Browser> {
  const created = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "alice@example.com", displayName: "Alice Admin", role: "admin" } });
  t.is(created.status, 201);
  t.deepEqual(created.body.mail, { status: "sent", to: "alice@example.com" });
  t.is(created.body.link, undefined, "a mailed link is not in the answer");
  const url = checkEnvelope(t, box.last("alice@example.com"), "alice@example.com");
  t.is((await setPasswordThroughLink(c, url, PASSWORD)).status, 303);
  const { browser, status } = await signedInBrowser(c, "alice@example.com", PASSWORD);
  t.is(status, 303);
  return browser;
}

/** `bootstrap-bot` asks for a change that waits for a second admin; its approval's id. */
async function asked(c: TestConsole, path: string, body: Record<string, unknown>): Promise<string> {
  const answer = await api(c, "POST", path, { token: await serviceAdminToken(c), body });
  if (answer.status !== 202) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return approvalIdOf(answer);
}

/** Approves a console approval on its page, as `browser`, in `lang`. */
async function approveOnPage(browser: Browser, id: string, lang: "en" | "tr") {
  const page = await browser.get(`/approvals/console/${id}?lang=${lang}`);
  return browser.post(`/approvals/console/${id}/approve`, { _csrf: csrfOf(page.html) });
}

test("settings: MAIL_FROM is required with SMTP_URL, and each must be well formed; the console refuses to start otherwise", async (t) => {
  t.throws(() => loadConsoleConfig({ SMTP_URL: "smtp://mail.example.com:587" }), { instanceOf: ConfigError, message: /MAIL_FROM: required when SMTP_URL is set/ });
  t.throws(() => loadConsoleConfig({ SMTP_URL: "http://mail.example.com", MAIL_FROM: FROM }), { message: /SMTP_URL: expected a smtp or smtps URL/ });
  t.throws(() => loadConsoleConfig({ SMTP_URL: "smtp://mail.example.com", MAIL_FROM: "not an address" }), { message: /MAIL_FROM: expected an address/ });
  t.throws(() => loadConsoleConfig({ SMTP_URL: "smtp://mail.example.com", MAIL_FROM: `${FROM}\nBcc: someone@else.test` }), { message: /MAIL_FROM/ });
  const ok = loadConsoleConfig({ SMTP_URL: "smtps://u:p@mail.example.com:465", MAIL_FROM: "Ödemeler <odeme@example.com>" });
  t.is(ok.MAIL_FROM, "Ödemeler <odeme@example.com>");
  t.is(loadConsoleConfig({}).SMTP_URL, undefined);
  await t.throwsAsync(testConsole(t, { SMTP_URL: "smtp://127.0.0.1:2525" }), { instanceOf: ConfigError, message: /MAIL_FROM/ });
});

test("an operator's invitation by the admin API is mailed (Turkish by default): the link sets a password once, then signs in; a second use is refused", async (t) => {
  const box = await mailbox(t);
  const c = await testConsole(t, box.env);
  await firstAdminByMail(t, c, box);
  const mail = box.last("alice@example.com").mail;
  t.is(mail.subject, "Ödeme konsoluna davet edildiniz");
  t.regex(mail.text ?? "", /^Merhaba Alice Admin,/);
  t.regex(mail.text ?? "", /bootstrap-bot sizi ödeme konsoluna davet etti/);
  // CONSOLE_SIGN_IN_LINK_TTL (24 h) after the clock's now, in Türkiye's time (UTC+3).
  const until = new Date(c.clock.now().getTime() + 24 * 3600_000);
  t.true(mail.text?.includes(`yalnızca bir kez ve ${formatTime(until, "tr")} tarihine kadar (Türkiye saati) geçerlidir`));
  t.is(formatTime(new Date("2026-11-23T10:00:00Z"), "tr"), "23 Kas 2026 13:00:00");
  t.is((await setPasswordThroughLink(c, linkIn(box.last("alice@example.com")), "someone else's password")).status, 410, "the link works once");
  t.is((await signedInBrowser(c, "alice@example.com", PASSWORD)).status, 303, "and the password it set still signs in");
});

test("a second admin approves an invitation and a reset on the approvals page (English): each is mailed to the person, the page says so and never shows the link", async (t) => {
  const box = await mailbox(t);
  const c = await testConsole(t, box.env);
  const alice = await firstAdminByMail(t, c, box);

  const invite = await asked(c, "/api/operators", { email: "bob@example.com", displayName: "Bob Operator", role: "operator" });
  const approved = await approveOnPage(alice, invite, "en");
  t.is(approved.status, 200);
  t.regex(approved.html, /The one-time link was sent by e-mail to bob@example\.com/);
  t.notRegex(approved.html, /set-password\?token=/, "the page never shows a mailed link");
  const received = box.last("bob@example.com");
  const url = checkEnvelope(t, received, "bob@example.com");
  t.notRegex(approved.html, new RegExp(new URL(url).searchParams.get("token")!));
  t.is(received.mail.subject, "You are invited to the payments console");
  t.regex(received.mail.text ?? "", /Hello Bob Operator,\n\nbootstrap-bot invited you to the payments console/);
  t.true(received.mail.text?.includes(`The link works once, until ${formatTime(new Date(c.clock.now().getTime() + 24 * 3600_000), "en")} (Türkiye time).`));
  t.is((await setPasswordThroughLink(c, url, PASSWORD)).status, 303);
  t.is((await signedInBrowser(c, "bob@example.com", PASSWORD)).status, 303);
  t.is((await setPasswordThroughLink(c, url, "another password entirely")).status, 410);

  const reset = await asked(c, "/api/operators/bob%40example.com/reset", {});
  t.regex((await approveOnPage(alice, reset, "en")).html, /sent by e-mail to bob@example\.com/);
  const resetMail = box.last("bob@example.com");
  t.is(box.to("bob@example.com").length, 2);
  t.is(resetMail.mail.subject, "Your new sign-in link to the payments console");
  t.regex(resetMail.mail.text ?? "", /bootstrap-bot gave you a new sign-in link/);
  const newPassword = "bob's brand new password";
  t.is((await setPasswordThroughLink(c, linkIn(resetMail), newPassword)).status, 303);
  t.is((await signedInBrowser(c, "bob@example.com", PASSWORD)).status, 401, "the old password is gone");
  t.is((await signedInBrowser(c, "bob@example.com", newPassword)).status, 303);
});

test("a mail the server refuses: the page says so and offers the still valid link once; the admin API answers it with mail status failed", async (t) => {
  const box = await mailbox(t);
  const c = await testConsole(t, box.env);
  const alice = await firstAdminByMail(t, c, box);

  const onPage = await approveOnPage(alice, await asked(c, "/api/operators", { email: "bounce.one@example.com", displayName: "Bounce One", role: "viewer" }), "tr");
  t.is(onPage.status, 200);
  t.regex(onPage.html, /bounce\.one@example\.com adresine e-posta gönderilemedi/);
  const shown = /<details><summary>Tek kullanımlık bağlantıyı göster<\/summary><p><code id="sign-in-link">([^<]+)<\/code>/.exec(onPage.html)?.[1];
  if (!shown) throw new Error("no link offered");
  t.is(box.to("bounce.one@example.com").length, 0);
  t.is((await setPasswordThroughLink(c, shown.replace(/&amp;/g, "&"), PASSWORD)).status, 303, "the link is valid");

  const viaApi = await doneOf(c, await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "bounce.two@example.com", displayName: "Bounce Two", role: "viewer" } }));
  t.deepEqual(viaApi.mail, { status: "failed", to: "bounce.two@example.com" });
  t.regex((viaApi.link as { url: string }).url, /\/set-password\?token=/);
});

test("without SMTP_URL the link is shown on the approval page, as before mail, and works once", async (t) => {
  const c = await testConsole(t);
  t.is(c.console.context.mailer, undefined);
  const created = await api(c, "POST", "/api/operators", { token: await serviceAdminToken(c), body: { email: "alice@example.com", displayName: "Alice Admin", role: "admin" } });
  t.is(created.body.mail, undefined);
  t.is((await setPasswordThroughLink(c, (created.body.link as { url: string }).url, PASSWORD)).status, 303);
  const { browser } = await signedInBrowser(c, "alice@example.com", PASSWORD);
  const page = await approveOnPage(browser, await asked(c, "/api/operators", { email: "bob@example.com", displayName: "Bob", role: "viewer" }), "en");
  t.is(page.status, 200);
  t.notRegex(page.html, /e-mail/);
  const url = /<code id="sign-in-link">([^<]+)<\/code>/.exec(page.html)?.[1]?.replace(/&amp;/g, "&");
  if (!url) throw new Error("no link shown");
  t.is((await setPasswordThroughLink(c, url, PASSWORD)).status, 303);
  t.is((await setPasswordThroughLink(c, url, PASSWORD)).status, 410);
});

test("a mail's words: a name typed by anyone stays on one line and is escaped in the HTML; the expiry is in Türkiye's time", (t) => {
  const mail = linkMail({
    to: "eve@example.com",
    name: "Eve\r\nBcc: all@example.com",
    lang: "tr",
    purpose: "create",
    audience: "merchant",
    merchant: "<b>Dükkân</b>",
    by: "Mallory <script>",
    url: "https://console.example/merchant/set-password?token=a&b",
    expiresAt: Date.UTC(2026, 0, 1, 9),
  });
  t.is(mail.to, "eve@example.com");
  t.is(mail.subject, "<b>Dükkân</b> üye işyeri paneline davet edildiniz");
  t.is(mail.text.split("\n")[0], "Merhaba Eve Bcc: all@example.com,");
  t.false(mail.text.includes("\r"));
  t.true(mail.text.includes("1 Oca 2026 12:00:00 tarihine kadar (Türkiye saati)"));
  t.false(mail.html.includes("<b>Dükkân"));
  t.true(mail.html.includes("&lt;b&gt;Dükkân&lt;/b&gt;"));
  t.false(mail.html.includes("<script>"));
  t.true(mail.html.includes('<a href="https://console.example/merchant/set-password?token=a&amp;b"'));
  t.true(mail.html.startsWith("<!doctype html>\n<html lang=\"tr\">"));
});
