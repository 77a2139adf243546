import type { Command } from "commander";
import {
  CreateReceivingAccountResponseSchema,
  ListReceivingAccountsResponseSchema,
  UpdateReceivingAccountResponseSchema,
  type ReceivingAccount,
} from "@payments/contracts/bank-catalog";
import { parseBoolean } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { formatTime, yesNo, type Output } from "../output.js";

function printAccount(out: Output, account: ReceivingAccount | undefined): void {
  if (!account) throw new Error("the service returned no account");
  out.fields([
    ["id", account.id],
    ["bank", `${account.bankName} (${account.bankId})`],
    ["account name", account.accountName],
    ["IBAN", account.iban],
    ["active", yesNo(account.active)],
    ["FAST", yesNo(account.fastEnabled)],
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
    .action(async (opts: { bank?: string }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.listReceivingAccounts({ bankId: opts.bank ?? "" });
      if (out.json) return out.message(ListReceivingAccountsResponseSchema, res);
      out.table(
        ["ID", "BANK", "ACCOUNT NAME", "IBAN", "ACTIVE", "FAST"],
        res.accounts.map((a) => [a.id, a.bankName || a.bankId, a.accountName, a.iban, yesNo(a.active), yesNo(a.fastEnabled)]),
        "No receiving accounts.",
      );
    });

  account
    .command("create")
    .description("add a receiving account to a bank's pool")
    .requiredOption("--bank <id>", "bank id")
    .requiredOption("--name <account-name>", "account holder name, as the customer sees it")
    .requiredOption("--iban <iban>", "Turkish IBAN (TR + 24 digits)")
    .option("--fast", "also receives FAST transfers")
    .option("--inactive", "add it without assigning it to deposits yet")
    .action(async (opts: { bank: string; name: string; iban: string; fast?: boolean; inactive?: boolean }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.createReceivingAccount({
        bankId: opts.bank,
        accountName: opts.name,
        iban: opts.iban,
        fastEnabled: opts.fast === true,
        active: opts.inactive !== true,
      });
      if (out.json) return out.message(CreateReceivingAccountResponseSchema, res);
      out.line("Receiving account created.");
      printAccount(out, res.account);
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
