import { Code, ConnectError } from "@connectrpc/connect";
import { MerchantService } from "@payments/contracts/merchant";
import { createAssertionSigner, type ActorIdentity } from "@payments/access";
import type { Knex } from "knex";
import type { ChangeOutcome, SignInLinkOut } from "../operator-admin.js";
import { findOperatorByEmail } from "../operators.js";
import type { ConsoleContext } from "../../context.js";
import type { Language } from "../../shared/i18n.js";
import { linkMail, type LinkMailInput } from "./messages.js";

/**
 * What became of a one-time link: `shown` (no SMTP_URL: the page or answer shows it, as before
 * mail), `sent` to the person (then it is shown nowhere), or `failed` (the mail server did not
 * take it: the link stays valid, and the one who made it may see it once to hand it over).
 */
export type LinkDelivery = { status: "shown" } | { status: "sent"; to: string } | { status: "failed"; to: string };

/** Mails the link when the console has a mailer; never throws (a refused mail is `failed`, logged). */
export async function deliverLink(deps: Pick<ConsoleContext, "mailer" | "logger">, input: LinkMailInput): Promise<LinkDelivery> {
  if (!deps.mailer) return { status: "shown" };
  const about = { to: input.to, purpose: input.purpose, audience: input.audience };
  try {
    await deps.mailer.send(linkMail(input));
    deps.logger.info(about, "one-time link mailed");
    return { status: "sent", to: input.to };
  } catch (err) {
    deps.logger.warn({ ...about, err }, "mailing a one-time link failed: the link stays valid");
    return { status: "failed", to: input.to };
  }
}

/** `Ayşe Yılmaz (ayse@example.com)`, or the address alone when the name is just that. */
export function personLabel(name: string, address: string): string {
  return name && name !== address ? `${name} (${address})` : address;
}

/** Whoever asked for a change (an approval's maker): an operator's name and address, or a service account's name. */
export async function makerLabel(db: Knex, subject: string): Promise<string> {
  const operator = await findOperatorByEmail(db, subject).catch(() => undefined);
  return operator ? personLabel(operator.displayName, operator.email) : subject;
}

/** An invitation sets a first password; the rest of the link-making changes are resets. */
export function purposeOfAction(action: string): "create" | "reset" {
  return action === "create_operator" || action === "invite_merchant_user" ? "create" : "reset";
}

/**
 * The merchant's name as the merchant service shows `actor` (their own assertion), for a mail
 * that names the dashboard; the id when it shows none or does not answer (the mail still goes).
 */
export async function merchantNameFor(deps: ConsoleContext, actor: ActorIdentity, merchantId: string): Promise<string> {
  if (!deps.privateKey) return merchantId;
  const signer = createAssertionSigner(deps.privateKey, actor, { now: () => deps.clock.now() });
  try {
    return (await deps.services.client(MerchantService, signer).getMerchant({ merchantId })).merchant?.name || merchantId;
  } catch (err) {
    if (!(err instanceof ConnectError && err.code === Code.NotFound)) deps.logger.warn({ err, merchant: merchantId }, "merchant name for a mail: none");
    return merchantId;
  }
}

export interface OutcomeMail {
  lang: Language;
  purpose: "create" | "reset";
  by: string;
  /** The merchant's name, for a merchant user's link (else the user's merchant id names it). */
  merchant?: string | undefined;
}

/** Mails the link a change made (ChangeOutcome with a link) to the account it is for. */
export async function deliverOutcome(deps: Pick<ConsoleContext, "mailer" | "logger">, outcome: ChangeOutcome & { link: SignInLinkOut }, mail: OutcomeMail): Promise<LinkDelivery> {
  if (outcome.status !== "done") return { status: "shown" };
  const account = "operator" in outcome ? { ...outcome.operator, audience: "operator" as const, merchantId: undefined } : { ...outcome.user, audience: "merchant" as const };
  return deliverLink(deps, {
    to: account.email,
    name: account.displayName,
    lang: mail.lang,
    purpose: mail.purpose,
    audience: account.audience,
    merchant: mail.merchant ?? account.merchantId,
    by: mail.by,
    url: outcome.link.url,
    expiresAt: outcome.link.expiresAt,
  });
}

/**
 * Mails the link a change made, if it made one and the console mails: to the account it is for,
 * in `lang`, saying `by` invited them (or gave the new link); a merchant user's mail names the
 * merchant as the service shows `actor`. `shown` when there is no link or no mailer.
 */
export async function mailChangeLink(deps: ConsoleContext, actor: ActorIdentity, outcome: ChangeOutcome, mail: Omit<OutcomeMail, "merchant">): Promise<LinkDelivery> {
  if (!deps.mailer || outcome.status !== "done" || !outcome.link) return { status: "shown" };
  const merchant = "user" in outcome ? await merchantNameFor(deps, actor, outcome.user.merchantId) : undefined;
  return deliverOutcome(deps, { ...outcome, link: outcome.link }, { ...mail, merchant });
}
