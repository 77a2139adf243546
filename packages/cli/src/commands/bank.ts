import type { Command } from "commander";
import {
  CreateBankResponseSchema,
  ListAvailableBanksResponseSchema,
  ListBanksResponseSchema,
  UpdateBankResponseSchema,
  type Bank,
} from "@payments/contracts/bank-catalog";
import { parseAmount, parseBoolean } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { formatKurus, formatTime, yesNo, type Output } from "../output.js";

function printBank(out: Output, bank: Bank): void {
  out.fields([
    ["id", bank.id],
    ["name", bank.name],
    ["code", bank.code],
    ["logo", bank.logoUrl || "—"],
    ["active", yesNo(bank.active)],
    ["min amount", formatKurus(bank.minAmount)],
    ["max amount", formatKurus(bank.maxAmount)],
    ["created", formatTime(bank.createdAt)],
    ["updated", formatTime(bank.updatedAt)],
  ]);
}

function required(bank: Bank | undefined): Bank {
  if (!bank) throw new Error("the service returned no bank");
  return bank;
}

export function registerBankCommands(program: Command, ctx: CommandContext): void {
  const bank = program.command("bank").description("the bank catalog: banks, their codes, logos and default limits");

  bank
    .command("list")
    .description("list every bank, active or not, with its default limits")
    .action(async (_opts: object, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.listBanks({});
      if (out.json) return out.message(ListBanksResponseSchema, res);
      out.table(
        ["ID", "CODE", "NAME", "ACTIVE", "MIN (kuruş)", "MAX (kuruş)", "LOGO"],
        res.banks.map((b) => [b.id, b.code, b.name, yesNo(b.active), String(b.minAmount), String(b.maxAmount), b.logoUrl || "—"]),
        "No banks.",
      );
    });

  bank
    .command("available")
    .description("what one merchant sees now: active banks with that merchant's limits, and FAST when available")
    .requiredOption("--merchant <id>", "merchant id")
    .action(async (opts: { merchant: string }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.listAvailableBanks({ merchantId: opts.merchant });
      if (out.json) return out.message(ListAvailableBanksResponseSchema, res);
      const rows = res.banks.map((b) => [b.id, b.code, b.name, String(b.minAmount), String(b.maxAmount)]);
      if (res.fast) rows.push(["FAST", "FAST", "FAST", String(res.fast.minAmount), String(res.fast.maxAmount)]);
      out.table(["ID", "CODE", "NAME", "MIN (kuruş)", "MAX (kuruş)"], rows, "Nothing is available to this merchant.");
    });

  bank
    .command("create")
    .description("add a bank to the catalog")
    .requiredOption("--name <name>", "display name")
    .requiredOption("--code <code>", 'the bank\'s EFT code, e.g. "0064"')
    .requiredOption("--min <kuruş>", "default minimum amount, whole kuruş", parseAmount)
    .requiredOption("--max <kuruş>", "default maximum amount, whole kuruş", parseAmount)
    .option("--logo <url>", 'logo: absolute URL or a gateway path starting with "/"')
    .option("--inactive", "create it hidden from merchants")
    .action(async (opts: { name: string; code: string; min: bigint; max: bigint; logo?: string; inactive?: boolean }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.createBank({
        name: opts.name,
        code: opts.code,
        logoUrl: opts.logo ?? "",
        minAmount: opts.min,
        maxAmount: opts.max,
        active: opts.inactive !== true,
      });
      if (out.json) return out.message(CreateBankResponseSchema, res);
      out.line("Bank created.");
      printBank(out, required(res.bank));
    });

  bank
    .command("update")
    .description("change the given fields of a bank")
    .argument("<id>", "bank id")
    .option("--name <name>", "display name")
    .option("--logo <url>", 'logo: absolute URL or a gateway path starting with "/"')
    .option("--min <kuruş>", "default minimum amount, whole kuruş", parseAmount)
    .option("--max <kuruş>", "default maximum amount, whole kuruş", parseAmount)
    .option("--active <true|false>", "show (true) or hide (false) the bank", parseBoolean)
    .action(async (id: string, opts: { name?: string; logo?: string; min?: bigint; max?: bigint; active?: boolean }, cmd: Command) => {
      if ([opts.name, opts.logo, opts.min, opts.max, opts.active].every((v) => v === undefined)) {
        throw new UsageError("nothing to update: give at least one of --name, --logo, --min, --max, --active");
      }
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.updateBank({ bankId: id, name: opts.name, logoUrl: opts.logo, minAmount: opts.min, maxAmount: opts.max, active: opts.active });
      if (out.json) return out.message(UpdateBankResponseSchema, res);
      out.line("Bank updated.");
      printBank(out, required(res.bank));
    });
}
