import { html } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import { defineTexts } from "../../shared/texts.js";
import { formatTime } from "../../shared/format.js";
import type { Mail } from "./mailer.js";

/** What a one-time link's mail says: to whom, for which console, from whom, the link and until when. */
export interface LinkMailInput {
  to: string;
  /** The recipient's display name. */
  name: string;
  /** The language of the page (or API call) the sender used. */
  lang: Language;
  /** `create`: an invitation (set a first password); `reset`: a new sign-in link. */
  purpose: "create" | "reset";
  /** The operators' console, or a merchant's dashboard (then `merchant` names it). */
  audience: "operator" | "merchant";
  merchant?: string;
  /** Who invited them or gave them the new link: a name, with the address when known. */
  by: string;
  url: string;
  expiresAt: number;
}

const mailTexts = defineTexts(
  {
    "subject.create.operator": "You are invited to the payments console",
    "subject.create.merchant": "You are invited to the {merchant} merchant dashboard",
    "subject.reset.operator": "Your new sign-in link to the payments console",
    "subject.reset.merchant": "Your new sign-in link to the {merchant} merchant dashboard",
    greeting: "Hello {name},",
    "body.create.operator": "{by} invited you to the payments console. Choose your password with this link:",
    "body.create.merchant": "{by} invited you to the {merchant} merchant dashboard. Choose your password with this link:",
    "body.reset.operator": "{by} gave you a new sign-in link to the payments console. Your open sessions have ended; choose a new password with this link:",
    "body.reset.merchant": "{by} gave you a new sign-in link to the {merchant} merchant dashboard. Your open sessions have ended; choose a new password with this link:",
    button: "Choose your password",
    expiry: "The link works once, until {until} (Türkiye time). Do not forward it: whoever opens it can set your password.",
    unexpected: "If you did not expect this mail, tell {by}.",
  },
  {
    "subject.create.operator": "Ödeme konsoluna davet edildiniz",
    "subject.create.merchant": "{merchant} üye işyeri paneline davet edildiniz",
    "subject.reset.operator": "Ödeme konsolu için yeni giriş bağlantınız",
    "subject.reset.merchant": "{merchant} üye işyeri paneli için yeni giriş bağlantınız",
    greeting: "Merhaba {name},",
    "body.create.operator": "{by} sizi ödeme konsoluna davet etti. Parolanızı bu bağlantıyla belirleyin:",
    "body.create.merchant": "{by} sizi {merchant} üye işyeri paneline davet etti. Parolanızı bu bağlantıyla belirleyin:",
    "body.reset.operator": "{by} size ödeme konsolu için yeni bir giriş bağlantısı verdi. Açık oturumlarınız kapatıldı; yeni parolanızı bu bağlantıyla belirleyin:",
    "body.reset.merchant": "{by} size {merchant} üye işyeri paneli için yeni bir giriş bağlantısı verdi. Açık oturumlarınız kapatıldı; yeni parolanızı bu bağlantıyla belirleyin:",
    button: "Parolanızı belirleyin",
    expiry: "Bağlantı yalnızca bir kez ve {until} tarihine kadar (Türkiye saati) geçerlidir. Kimseyle paylaşmayın: bağlantıyı açan herkes parolanızı belirleyebilir.",
    unexpected: "Bu e-postayı beklemiyorsanız {by} ile iletişime geçin.",
  },
);

/** One line: a name typed by anyone never starts another header or paragraph. */
const oneLine = (text: string) =>
  [...text]
    .map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? " " : c))
    .join("")
    .replace(/ {2,}/g, " ")
    .trim();

/** The mail of a one-time link, in the sender's page language: plain text and simple HTML with the same words. */
export function linkMail(input: LinkMailInput): Mail {
  const t = (key: Parameters<typeof mailTexts>[1]) =>
    mailTexts(input.lang, key, {
      name: oneLine(input.name),
      by: oneLine(input.by),
      merchant: oneLine(input.merchant ?? ""),
      until: formatTime(new Date(input.expiresAt), input.lang),
    });
  const subject = t(`subject.${input.purpose}.${input.audience}`);
  const lines = { greeting: t("greeting"), body: t(`body.${input.purpose}.${input.audience}`), expiry: t("expiry"), unexpected: t("unexpected") };
  const text = [lines.greeting, "", lines.body, "", input.url, "", lines.expiry, "", lines.unexpected, ""].join("\n");
  const body = html`<!doctype html>
<html lang="${input.lang}"><head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1f2328">
<p>${lines.greeting}</p>
<p>${lines.body}</p>
<p><a href="${input.url}" style="font-weight: 600">${t("button")}</a></p>
<p style="word-break: break-all"><code>${input.url}</code></p>
<p>${lines.expiry}</p>
<p style="color: #59636e">${lines.unexpected}</p>
</body></html>`;
  return { to: input.to, subject, text, html: body.text };
}
