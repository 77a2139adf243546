import type { Command } from "commander";
import { GetFastSettingsResponseSchema, UpdateFastSettingsResponseSchema, type FastSettings } from "@payments/contracts/bank-catalog";
import { parseAmount, parseBoolean } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { formatKurus, yesNo, type Output } from "../output.js";

function printSettings(out: Output, settings: FastSettings | undefined): void {
  if (!settings) throw new Error("the service returned no FAST settings");
  out.fields([
    ["enabled", yesNo(settings.enabled)],
    ["min amount", formatKurus(settings.minAmount)],
    ["max amount", formatKurus(settings.maxAmount)],
  ]);
}

export function registerFastCommands(program: Command, ctx: CommandContext): void {
  const fast = program.command("fast").description("the FAST instant-transfer option: availability and default limits");

  fast
    .command("show")
    .description("show the FAST settings")
    .action(async (_opts: object, cmd: Command) => {
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.getFastSettings({});
      if (out.json) return out.message(GetFastSettingsResponseSchema, res);
      out.line("FAST:");
      printSettings(out, res.settings);
    });

  fast
    .command("set")
    .description("change the given FAST settings")
    .option("--enabled <true|false>", "offer FAST to merchants", parseBoolean)
    .option("--min <kuruş>", "default minimum amount, whole kuruş", parseAmount)
    .option("--max <kuruş>", "default maximum amount, whole kuruş", parseAmount)
    .action(async (opts: { enabled?: boolean; min?: bigint; max?: bigint }, cmd: Command) => {
      if (opts.enabled === undefined && opts.min === undefined && opts.max === undefined) {
        throw new UsageError("nothing to change: give at least one of --enabled, --min, --max");
      }
      const { out, bankCatalog } = ctx.session(cmd);
      const res = await bankCatalog.updateFastSettings({ enabled: opts.enabled, minAmount: opts.min, maxAmount: opts.max });
      if (out.json) return out.message(UpdateFastSettingsResponseSchema, res);
      out.line("FAST updated:");
      printSettings(out, res.settings);
    });
}
