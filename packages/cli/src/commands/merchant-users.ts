import type { Command } from "commander";
import { isMerchantRole, MERCHANT_ROLES, type MerchantRole } from "@payments/access";
import type { CommandContext } from "../context.js";
import { consoleAdminCaller, printedPendingApproval, printLink, roleParser, type ConsoleAccountOut } from "../console-admin.js";

const parseMerchantRole = roleParser(MERCHANT_ROLES, isMerchantRole);

/**
 * `merchant user invite|list|reset`: a merchant's own people (the merchant dashboard), through the
 * console's admin API, as an admin (after `login`, or with PAYMENTS_OPERATOR_TOKEN). `merchant`
 * is the existing `merchant` command group.
 */
export function registerMerchantUserCommands(merchant: Command, ctx: CommandContext): void {
  const user = merchant.command("user").description("the merchant's own users of the merchant dashboard (admin, through the console)");

  const call = consoleAdminCaller(ctx);
  const usersPath = (merchantId: string) => `/api/merchants/${encodeURIComponent(merchantId)}/users`;

  user
    .command("invite")
    .description("invite someone of the merchant to its dashboard: it waits for a second admin, whose approval prints their one-time set-password link")
    .requiredOption("--merchant <id>", "the merchant id")
    .requiredOption("--email <email>", "the user's email (their sign-in name)")
    .requiredOption("--role <role>", MERCHANT_ROLES.join(" | "), parseMerchantRole)
    .option("--name <display name>", "the name shown in the dashboard and the audit trail (default: the email's local part)")
    .action(async (opts: { merchant: string; email: string; role: MerchantRole; name?: string }, cmd: Command) => {
      const body = await call(cmd, "POST", usersPath(opts.merchant), { email: opts.email, role: opts.role, ...(opts.name ? { displayName: opts.name } : {}) });
      const { out } = ctx.session(cmd);
      if (out.json) return out.data(body);
      if (printedPendingApproval(out, body)) return;
      const invited = body.user as ConsoleAccountOut;
      out.line(`${invited.email}: ${invited.role} of ${opts.merchant}.`);
      printLink(out, body, "the user");
    });

  user
    .command("reset")
    .description("give a merchant user a new one-time sign-in link (set a new password) and end their sessions: it waits for a second admin, whose approval prints the link")
    .requiredOption("--merchant <id>", "the merchant id")
    .requiredOption("--user <id>", "the user's id (as `merchant user list` shows it)")
    .option("--clear-totp", "also turn the user's two-step verification off (a lost authenticator)")
    .action(async (opts: { merchant: string; user: string; clearTotp?: boolean }, cmd: Command) => {
      const body = await call(cmd, "POST", `${usersPath(opts.merchant)}/${encodeURIComponent(opts.user)}/reset`, opts.clearTotp ? { clearTotp: true } : {});
      const { out } = ctx.session(cmd);
      if (out.json) return out.data(body);
      if (printedPendingApproval(out, body)) return;
      const reset = body.user as ConsoleAccountOut;
      out.line(`${reset.email} of ${opts.merchant}: signed out everywhere${opts.clearTotp ? ", two-step verification off" : ""}.`);
      printLink(out, body, "the user", "New one-time link");
    });

  user
    .command("list")
    .description("list the merchant's users, in creation order (removed ones too)")
    .requiredOption("--merchant <id>", "the merchant id")
    .action(async (opts: { merchant: string }, cmd: Command) => {
      const body = await call(cmd, "GET", usersPath(opts.merchant));
      const { out } = ctx.session(cmd);
      if (out.json) return out.data(body);
      const rows = (body.users as ConsoleAccountOut[]).map((u) => [u.id, u.email, u.displayName, u.role, u.disabled ? "removed" : "active", u.passwordSet ? "yes" : "no", u.lastSignInAt ?? "—"]);
      out.table(["ID", "EMAIL", "NAME", "ROLE", "STATUS", "PASSWORD", "LAST SIGN-IN"], rows, "No users.");
    });
}
