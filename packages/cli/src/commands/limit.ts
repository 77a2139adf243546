import type { Command } from "commander";
import { ClearMerchantLimitResponseSchema, ListMerchantLimitsResponseSchema, SetMerchantLimitResponseSchema, type MerchantLimit } from "@payments/contracts/bank-catalog";
import { parseAmount, parseBankRef, parseBoolean } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";

const DEFAULT = "default";

function limitRow(limit: MerchantLimit): string[] {
  return [
    limit.bankId,
    limit.enabled === undefined ? DEFAULT : limit.enabled ? "yes" : "no (hidden)",
    limit.minAmount === undefined ? DEFAULT : String(limit.minAmount),
    limit.maxAmount === undefined ? DEFAULT : String(limit.maxAmount),
  ];
}

const HEADERS = ["BANK", "ENABLED", "MIN (kuruş)", "MAX (kuruş)"];

export function registerLimitCommands(program: Command, ctx: CommandContext): void {
  const limit = program.command("limit").description("per-merchant overrides of a bank's (or FAST's) availability and limits");

  limit
    .command("set")
    .description("set a merchant's override for one bank or FAST; options left out follow the default")
    .requiredOption("--merchant <id>", "merchant id")
    .requiredOption("--bank <bank-id|FAST>", "a bank id, or FAST", parseBankRef)
    .option("--enabled <true|false>", "false hides the bank (or FAST) from this merchant", parseBoolean)
    .option("--min <kuruş>", "minimum amount for this merchant, whole kuruş", parseAmount)
    .option("--max <kuruş>", "maximum amount for this merchant, whole kuruş", parseAmount)
    .addHelpText("after", "\nThe override replaces any earlier one for the same bank. `limit clear` removes it.")
    .action(async (opts: { merchant: string; bank: string; enabled?: boolean; min?: bigint; max?: bigint }, cmd: Command) => {
      if (opts.enabled === undefined && opts.min === undefined && opts.max === undefined) {
        throw new UsageError("nothing to set: give at least one of --enabled, --min, --max (or use `limit clear` to go back to the defaults)");
      }
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.setMerchantLimit({
        limit: { merchantId: opts.merchant, bankId: opts.bank, enabled: opts.enabled, minAmount: opts.min, maxAmount: opts.max },
      });
      if (out.json) return out.message(SetMerchantLimitResponseSchema, res);
      out.line(`Override set for merchant ${opts.merchant}:`);
      out.table(HEADERS, res.limit ? [limitRow(res.limit)] : []);
    });

  limit
    .command("clear")
    .description("remove a merchant's override for one bank or FAST: the defaults apply again")
    .requiredOption("--merchant <id>", "merchant id")
    .requiredOption("--bank <bank-id|FAST>", "a bank id, or FAST", parseBankRef)
    .action(async (opts: { merchant: string; bank: string }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.clearMerchantLimit({ merchantId: opts.merchant, bankId: opts.bank });
      if (out.json) return out.message(ClearMerchantLimitResponseSchema, res);
      out.line(`Override of ${opts.bank} for merchant ${opts.merchant} removed: the defaults apply.`);
    });

  limit
    .command("list")
    .description("list a merchant's overrides")
    .requiredOption("--merchant <id>", "merchant id")
    .action(async (opts: { merchant: string }, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.listMerchantLimits({ merchantId: opts.merchant });
      if (out.json) return out.message(ListMerchantLimitsResponseSchema, res);
      out.table(HEADERS, res.limits.map(limitRow), "No overrides: every bank follows its defaults.");
    });
}
