import { createTransport } from "nodemailer";
import type { ConsoleConfig } from "../../config.js";

/** One message: plain text for every reader, simple HTML for those who show it. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * What sends the console's mail (one-time links). The console's context holds one when SMTP_URL
 * is set; tests may give their own (`startConsole({ mailer })`).
 */
export interface Mailer {
  /** The sender, as MAIL_FROM gives it: `payments@example.com` or `Payments <payments@example.com>`. */
  readonly from: string;
  /** Resolves when the server accepted the message for `to`; rejects otherwise. */
  send(mail: Mail): Promise<void>;
  close(): void;
}

/**
 * Timeouts well under the console's own request timeout (30 s): a mail server that does not
 * answer makes the page say so, not hang. Sending is one connection per message (no pool): links
 * are few, and a pool would keep a socket open to a server between them.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 8_000, greetingTimeout: 8_000, socketTimeout: 15_000, dnsTimeout: 5_000 } as const;

/** An SMTP mailer for `url` (`smtp://user:pass@host:587`, STARTTLS when offered; `smtps://…:465`, TLS at once). */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = createTransport({ url, ...SMTP_TIMEOUTS, disableFileAccess: true, disableUrlAccess: true });
  return {
    from,
    async send(mail) {
      const info = await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      if (info.rejected.length > 0) throw new Error(`the mail server refused ${mail.to}`);
    },
    close() {
      transport.close();
    },
  };
}

/** The mailer SMTP_URL and MAIL_FROM name, or undefined when SMTP_URL is unset (links are shown on screen then). */
export function mailerFromConfig(config: Pick<ConsoleConfig, "SMTP_URL" | "MAIL_FROM">): Mailer | undefined {
  if (!config.SMTP_URL) return undefined;
  // The schema requires MAIL_FROM with SMTP_URL; this is the same rule for a caller that built a config itself.
  if (!config.MAIL_FROM) throw new Error("MAIL_FROM is required when SMTP_URL is set");
  return smtpMailer(config.SMTP_URL, config.MAIL_FROM);
}
