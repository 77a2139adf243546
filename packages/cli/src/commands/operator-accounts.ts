import type { Command } from "commander";
import { parseDuration } from "@payments/kit";
import { CONSOLE_ASSERTION_AUDIENCE, loadAssertionPrivateKey, MAX_SERVICE_TOKEN_TTL_SECONDS, OPERATOR_ROLES, signAssertion, isOperatorRole, type OperatorRole } from "@payments/access";
import type { CommandContext } from "../context.js";
import { consoleAdminCaller, printedPendingApproval, printLink, roleParser, type ConsoleAccountOut, type ConsoleApprovalOut } from "../console-admin.js";
import { UsageError } from "../errors.js";

/**
 * A service account's token is for the console alone: the CLI exchanges it there for a 60-second
 * assertion per call (a fresh one for every change), which is all the services accept.
 */
export const SERVICE_TOKEN_AUDIENCE = CONSOLE_ASSERTION_AUDIENCE;

const parseRole = roleParser(OPERATOR_ROLES, isOperatorRole);

const path = (email: string, action: string) => `/api/operators/${encodeURIComponent(email)}/${action}`;

/**
 * `operator …`: the console's accounts, as an admin (after `login`, or with PAYMENTS_OPERATOR_TOKEN),
 * and `operator token`, which mints a service account's token with the signing key itself.
 */
export function registerOperatorAccountCommands(program: Command, ctx: CommandContext): void {
  const operator = program.command("operator").description("console accounts of operators (admin), their approvals, and service-account tokens");

  /**
   * Prints what a change did: done (with the one-time link to hand over: to the admin who made it
   * alone at bootstrap, or to the second admin who approved it) or waiting for a second admin.
   */
  const report = (cmd: Command, body: Record<string, unknown>) => {
    const { out } = ctx.session(cmd);
    if (out.json) return out.data(body);
    if (printedPendingApproval(out, body)) return;
    const account = body.operator as ConsoleAccountOut | undefined;
    if (account) out.line(`${account.email}: ${account.role}${account.disabled ? ", disabled" : ""}.`);
    // An approved invite or reset of a merchant's user answers the user.
    const user = body.user as (ConsoleAccountOut & { merchantId: string }) | undefined;
    if (user) out.line(`${user.email}: ${user.role} of ${user.merchantId}.`);
    printLink(out, body, user ? "the user" : "the operator");
  };

  const call = consoleAdminCaller(ctx);

  operator
    .command("create")
    .description("create an account: it waits for a second admin, whose approval prints its one-time set-password link (only the very first admin is made at once)")
    .requiredOption("--email <email>", "the operator's email (their sign-in name)")
    .requiredOption("--name <display name>", "the name shown in the console and the audit trail")
    .requiredOption("--role <role>", OPERATOR_ROLES.join(" | "), parseRole)
    .action(async (opts: { email: string; name: string; role: OperatorRole }, cmd: Command) => {
      report(cmd, await call(cmd, "POST", "/api/operators", { email: opts.email, displayName: opts.name, role: opts.role }));
    });

  operator
    .command("list")
    .description("list accounts, in creation order")
    .option("--limit <n>", "accounts per page (1-200)", "50")
    .option("--after <cursor>", "the page after this cursor (printed under the previous page)")
    .action(async (opts: { limit: string; after?: string }, cmd: Command) => {
      const query = new URLSearchParams({ limit: opts.limit, ...(opts.after ? { after: opts.after } : {}) });
      const body = await call(cmd, "GET", `/api/operators?${query.toString()}`);
      const { out } = ctx.session(cmd);
      if (out.json) return out.data(body);
      const rows = (body.operators as ConsoleAccountOut[]).map((o) => [o.email, o.displayName, o.role, o.disabled ? "disabled" : "enabled", o.totpEnrolled ? "yes" : "no", o.lastSignInAt ?? "—"]);
      out.table(["EMAIL", "NAME", "ROLE", "STATUS", "TOTP", "LAST SIGN-IN"], rows, "No accounts.");
      if (typeof body.next === "string") out.line(`More: operator list --after ${body.next}`);
    });

  for (const [name, description] of [
    ["disable", "disable an account: its sessions end at once"],
    ["enable", "enable a disabled account again: it waits for a second admin"],
  ] as const) {
    operator
      .command(name)
      .description(description)
      .requiredOption("--email <email>", "the operator's email")
      .action(async (opts: { email: string }, cmd: Command) => report(cmd, await call(cmd, "POST", path(opts.email, name), {})));
  }

  operator
    .command("set-role")
    .description("change an account's role: lowering is done at once, raising waits for a second admin")
    .requiredOption("--email <email>", "the operator's email")
    .requiredOption("--role <role>", OPERATOR_ROLES.join(" | "), parseRole)
    .action(async (opts: { email: string; role: OperatorRole }, cmd: Command) => report(cmd, await call(cmd, "POST", path(opts.email, "role"), { role: opts.role })));

  operator
    .command("reset")
    .description("a new one-time link to set a password (earlier links stop working) and the account's sessions ended: it waits for a second admin, whose approval prints the link")
    .requiredOption("--email <email>", "the operator's email")
    .option("--clear-totp", "also remove their authenticator (a lost phone): they enrol again")
    .action(async (opts: { email: string; clearTotp?: boolean }, cmd: Command) => report(cmd, await call(cmd, "POST", path(opts.email, "reset"), { clearTotp: opts.clearTotp === true })));

  operator
    .command("approvals")
    .description("changes waiting for a second admin (or, with --status, decided ones)")
    .option("--status <status>", "pending | approved | rejected | expired | all", "pending")
    .action(async (opts: { status: string }, cmd: Command) => {
      const body = await call(cmd, "GET", `/api/approvals?status=${encodeURIComponent(opts.status)}`);
      const { out } = ctx.session(cmd);
      if (out.json) return out.data(body);
      const rows = (body.approvals as ConsoleApprovalOut[]).map((a) => [a.id, a.action, a.targetEmail, JSON.stringify(a.change), a.requestedBy, a.status, a.expiresAt]);
      out.table(["ID", "ACTION", "ACCOUNT", "CHANGE", "ASKED BY", "STATUS", "EXPIRES"], rows, "Nothing waits for approval.");
    });

  for (const decision of ["approve", "reject"] as const) {
    operator
      .command(`${decision} <id>`)
      .description(decision === "approve" ? "approve another admin's change: it is applied as asked, and a one-time link it makes is printed to you, to hand over" : "reject a change (the admin who asked may withdraw it this way)")
      .action(async (id: string, _opts: unknown, cmd: Command) => report(cmd, await call(cmd, "POST", `/api/approvals/${encodeURIComponent(id)}/${decision}`)));
  }

  operator
    .command("token")
    .description("mint a service account's token (automation): signed here with OPERATOR_ASSERTION_PRIVATE_KEY, for the console, where the CLI exchanges it for a 60-second assertion per call; printed once")
    .requiredOption("--name <name>", "the service account's name: what the audit trail records as the actor")
    .requiredOption("--role <role>", OPERATOR_ROLES.join(" | "), parseRole)
    .option("--ttl <duration>", "how long it is valid, e.g. 12h, 30d (at most 90d)", "30d")
    .action(async (opts: { name: string; role: OperatorRole; ttl: string }, cmd: Command) => {
      const { out, io } = ctx.session(cmd);
      const keyText = io.env.OPERATOR_ASSERTION_PRIVATE_KEY;
      if (!keyText) throw new UsageError("operator token signs with OPERATOR_ASSERTION_PRIVATE_KEY (PEM text or a file path): set it in this shell only");
      const ttlMs = parseDuration(opts.ttl);
      if (ttlMs === undefined || ttlMs < 1000) throw new UsageError(`--ttl must be a duration such as 12h or 30d, got "${opts.ttl}"`);
      const ttlSeconds = Math.floor(ttlMs / 1000);
      if (ttlSeconds > MAX_SERVICE_TOKEN_TTL_SECONDS) throw new UsageError("--ttl is at most 90d");
      const name = opts.name.trim();
      if (!/^[A-Za-z0-9._@-]{1,100}$/.test(name)) throw new UsageError("--name: letters, digits, . _ @ - only (at most 100)");
      let key;
      try {
        key = loadAssertionPrivateKey(keyText);
      } catch (err) {
        throw new UsageError(`OPERATOR_ASSERTION_PRIVATE_KEY: ${(err as Error).message}`);
      }
      const now = new Date();
      const token = await signAssertion(key, { subject: name, name, role: opts.role, kind: "service", audience: SERVICE_TOKEN_AUDIENCE, ttlSeconds }, now);
      const expiresAt = new Date(Math.floor(now.getTime() / 1000) * 1000 + ttlSeconds * 1000).toISOString();
      if (out.json) return out.data({ token, subject: name, role: opts.role, audience: SERVICE_TOKEN_AUDIENCE, expiresAt });
      io.stderr.write(`Service token for ${name} (${opts.role}), valid until ${expiresAt}. It is shown once: store it as a secret now.\n`);
      out.line(token);
    });
}
