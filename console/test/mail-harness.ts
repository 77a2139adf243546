import type { ExecutionContext } from "ava";
import { simpleParser, type AddressObject, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

export const FROM = "payments@console.test";

export interface Received {
  envelopeFrom: string;
  envelopeTo: string[];
  mail: ParsedMail;
}

/** A local SMTP server that requires the URL's user and password and refuses any `bounce…@` recipient. */
export class Mailbox {
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    readonly messages: Received[],
  ) {}

  static async start(): Promise<Mailbox> {
    const messages: Received[] = [];
    const server = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, done) {
        if (auth.username === "mailer" && auth.password === "s3cret") return done(null, { user: auth.username });
        done(new Error("invalid credentials"));
      },
      onRcptTo(address, _session, done) {
        if (address.address.startsWith("bounce")) return done(Object.assign(new Error("mailbox unavailable"), { responseCode: 550 }));
        done();
      },
      onData(stream, session, done) {
        simpleParser(stream)
          .then((mail) => {
            const from = session.envelope.mailFrom;
            messages.push({ envelopeFrom: from ? from.address : "", envelopeTo: session.envelope.rcptTo.map((r) => r.address), mail });
            done();
          })
          .catch(done);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.server.address();
    if (!address || typeof address === "string") throw new Error("the SMTP server has no port");
    return new Mailbox(server, address.port, messages);
  }

  get url(): string {
    return `smtp://mailer:s3cret@127.0.0.1:${this.port}`;
  }

  /** The console's settings that send through this server. */
  get env(): Record<string, string> {
    return { SMTP_URL: this.url, MAIL_FROM: `Payments <${FROM}>` };
  }

  /** Every message to `address`, oldest first. */
  to(address: string): Received[] {
    return this.messages.filter((m) => m.envelopeTo.includes(address));
  }

  /** The newest message to `address` (one must have arrived). */
  last(address: string): Received {
    const found = this.to(address).at(-1);
    if (!found) throw new Error(`no mail to ${address}; mail to: ${this.messages.map((m) => m.envelopeTo.join(",")).join("; ")}`);
    return found;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The set-password link a mail carries, in its text and (the same) in its HTML. */
export function linkIn(received: Received): string {
  const url = /https?:\/\/\S+\/set-password\?token=[\w%-]+/.exec(received.mail.text ?? "")?.[0];
  if (!url) throw new Error(`no link in: ${received.mail.text}`);
  return url;
}

const addressOf = (field: AddressObject | AddressObject[] | undefined) => (Array.isArray(field) ? field[0] : field)?.value[0]?.address;

/** The message is from MAIL_FROM (header and envelope), to `to` alone, with the link in both parts. */
export function checkEnvelope(t: ExecutionContext, received: Received, to: string): string {
  t.is(received.envelopeFrom, FROM);
  t.is(received.mail.from?.value[0]?.address, FROM);
  t.is(received.mail.from?.value[0]?.name, "Payments");
  t.deepEqual(received.envelopeTo, [to]);
  t.is(addressOf(received.mail.to), to);
  const url = linkIn(received);
  t.true(typeof received.mail.html === "string" && received.mail.html.includes(`href="${url.replace(/&/g, "&amp;")}"`), "the HTML part links to it too");
  return url;
}

export async function mailbox(t: ExecutionContext): Promise<Mailbox> {
  const box = await Mailbox.start();
  t.teardown(() => box.close());
  return box;
}
