import type { Command } from "commander";
import type { CommandContext } from "./context.js";
import type { Output } from "./output.js";
import { consoleCall } from "./console-session.js";
import { UsageError } from "./errors.js";
import { consoleAdminCredential } from "./operator-signer.js";

// What the commands of the console's admin API share (`operator …`, `merchant user …`): their
// `--role` value and the call itself, as an admin.

/** What the console answers of any account (an operator, a merchant's user), as the commands print it. */
export interface ConsoleAccountOut {
  id: string;
  email: string;
  displayName: string;
  role: string;
  disabled: boolean;
  lastSignInAt: string | null;
  passwordSet: boolean;
  totpEnrolled: boolean;
}

/** The parser of a `--role` option whose value is one of `roles`. */
export function roleParser<R extends string>(roles: readonly R[], isRole: (value: string) => value is R): (value: string) => R {
  return (value) => {
    if (!isRole(value)) throw new UsageError(`--role must be one of ${roles.join(", ")}, got "${value}"`);
    return value;
  };
}

/** A call of the console's admin API (`route`, with `body` as JSON when given) as an admin (consoleAdminCredential), for `cmd`'s session: the answer's body. */
export type ConsoleAdminCall = (cmd: Command, method: string, route: string, body?: unknown) => Promise<Record<string, unknown>>;

/** The console admin API's call for the commands of `ctx`. */
export function consoleAdminCaller(ctx: CommandContext): ConsoleAdminCall {
  return async (cmd, method, route, body) => {
    const { io, options } = ctx.session(cmd);
    const { url, token } = await consoleAdminCredential(options.actor, io.env);
    return (await consoleCall(url, method, route, { token, ...(body !== undefined ? { body } : {}) })).body;
  };
}

/** A change of the console's admin API that waits for a second admin, as the console answers it (202). */
export interface ConsoleApprovalOut {
  id: string;
  action: string;
  targetEmail: string;
  change: Record<string, unknown>;
  requestedBy: string;
  expiresAt: string;
  status: string;
}

/**
 * The one-time link a done change answered, to hand to `holder`; or, when the console mailed it
 * (its SMTP_URL), whom it went to: the link is then in that mail only. A mail the server refused
 * is said so, and the console answers the link to hand over.
 */
export function printLink(out: Output, body: Record<string, unknown>, holder: string, intro = "One-time link"): void {
  const mail = body.mail as { status: string; to: string } | undefined;
  if (mail?.status === "sent") out.line(`The one-time link was mailed to ${mail.to}.`);
  if (mail?.status === "failed") out.line(`Mailing the one-time link to ${mail.to} failed: hand it over yourself.`);
  const link = body.link as { url: string; expiresAt: string } | undefined;
  if (!link) return;
  out.line(`${intro} (hand it to ${holder}; it works once, until ${link.expiresAt}):`);
  out.line(link.url);
}

/**
 * Says so when the console stored the change as a request for a second admin (202
 * `pending_approval`): its id and how another admin approves it. No link is printed then: the
 * one-time link goes to the approver. False when the change was done.
 */
export function printedPendingApproval(out: Output, body: Record<string, unknown>): boolean {
  if (body.status !== "pending_approval") return false;
  const approval = body.approval as ConsoleApprovalOut;
  out.line(`Waiting for a second admin: approval ${approval.id} (${approval.action} ${approval.targetEmail}), until ${approval.expiresAt}.`);
  out.line(`Another admin runs: operator approve ${approval.id} (the one-time link is printed to them)`);
  return true;
}
