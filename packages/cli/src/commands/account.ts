import type { Command } from "commander";
import {
  CreateReceivingAccountResponseSchema,
  ListReceivingAccountsResponseSchema,
  SeedSandboxAccountsResponseSchema,
  UpdateReceivingAccountResponseSchema,
  type ReceivingAccount,
} from "@payments/contracts/bank-catalog";
import { parseBoolean } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { formatTime, yesNo, type Output } from "../output.js";

/** Sandbox accounts take sandbox merchants' deposits only; live accounts live merchants' only. */
function accountKind(account: ReceivingAccount): string {
  return account.sandbox ? "sandbox" : "live";
}

function printAccount(out: Output, account: ReceivingAccount | undefined): void {
  if (!account) throw new Error("the service returned no account");
  out.fields([
    ["id", account.id],
    ["bank", `${account.bankName} (${account.bankId})`],
    ["account name", account.accountName],
    ["IBAN", account.iban],
    ["active", yesNo(account.active)],
    ["FAST", yesNo(account.fastEnabled)],
    ["kind", accountKind(account)],
    ["created", formatTime(account.createdAt)],
    ["updated", formatTime(account.updatedAt)],
  ]);
}

export function registerAccountCommands(program: Command, ctx: CommandContext): void {
  const account = program.command("account").description("the pool of receiving accounts deposits are paid into");

  account
    .command("list")
    .description("list receiving accounts")
    .option("--bank <id>", "only this bank's accounts")
    .option("--sandbox", "only sandbox accounts")
    .option("--live", "only live accounts")
    .action(async (opts: { bank?: string; sandbox?: boolean; live?: boolean }, cmd: Command) => {
      if (opts.sandbox && opts.live) throw new UsageError("give --sandbox or --live, not both");
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.listReceivingAccounts({ bankId: opts.bank ?? "", sandbox: opts.sandbox ? true : opts.live ? false : undefined });
      if (out.json) return out.message(ListReceivingAccountsResponseSchema, res);
      out.table(
        ["ID", "BANK", "ACCOUNT NAME", "IBAN", "ACTIVE", "FAST", "KIND"],
        res.accounts.map((a) => [a.id, a.bankName || a.bankId, a.accountName, a.iban, yesNo(a.active), yesNo(a.fastEnabled), accountKind(a)]),
        "No receiving accounts.",
      );
    });

  account
    .command("add")
    .alias("create")
    .description("add a receiving account to a bank's pool (live unless --sandbox)")
    .requiredOption("--bank <id>", "bank id")
    .requiredOption("--name <account-name>", "account holder name, as the customer sees it")
    .requiredOption("--iban <iban>", "Turkish IBAN (TR + 24 digits)")
    .option("--fast", "also receives FAST transfers")
    .option("--inactive", "add it without assigning it to deposits yet")
    .option("--sandbox", "a sandbox account: only sandbox merchants' deposits are sent to it (default: live)")
    .action(async (opts: { bank: string; name: string; iban: string; fast?: boolean; inactive?: boolean; sandbox?: boolean }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.createReceivingAccount({
        bankId: opts.bank,
        accountName: opts.name,
        iban: opts.iban,
        fastEnabled: opts.fast === true,
        active: opts.inactive !== true,
        sandbox: opts.sandbox === true,
      });
      if (out.json) return out.message(CreateReceivingAccountResponseSchema, res);
      out.line("Receiving account created.");
      printAccount(out, res.account);
    });

  account
    .command("seed-sandbox")
    .description("add the made-up sandbox receiving accounts that are missing (sandbox merchants only; never used for live money)")
    .action(async (_opts: unknown, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.seedSandboxAccounts({});
      if (out.json) return out.message(SeedSandboxAccountsResponseSchema, res);
      out.line(res.added.length === 0 ? "Every sandbox receiving account is already there." : `Added ${res.added.length} sandbox receiving accounts.`);
      if (res.added.length > 0) {
        out.table(
          ["ID", "BANK", "IBAN", "FAST"],
          res.added.map((a) => [a.id, a.bankName || a.bankId, a.iban, yesNo(a.fastEnabled)]),
          "",
        );
      }
    });

  account
    .command("update")
    .description("change the given fields of a receiving account")
    .argument("<id>", "account id")
    .option("--name <account-name>", "account holder name")
    .option("--active <true|false>", "assign it to new deposits (true) or not (false)", parseBoolean)
    .option("--fast <true|false>", "receives FAST transfers", parseBoolean)
    .action(async (id: string, opts: { name?: string; active?: boolean; fast?: boolean }, cmd: Command) => {
      if (opts.name === undefined && opts.active === undefined && opts.fast === undefined) {
        throw new UsageError("nothing to update: give at least one of --name, --active, --fast");
      }
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.updateReceivingAccount({ accountId: id, accountName: opts.name, active: opts.active, fastEnabled: opts.fast });
      if (out.json) return out.message(UpdateReceivingAccountResponseSchema, res);
      out.line("Receiving account updated.");
      printAccount(out, res.account);
    });
}
