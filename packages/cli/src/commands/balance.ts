import type { Command } from "commander";
import { create } from "@bufbuild/protobuf";
import {
  AdjustBalanceResponseSchema,
  GetBalancesResponseSchema,
  ListLedgerEntriesResponseSchema,
  type Balance,
  type LedgerEntry,
} from "@payments/contracts/payout";
import { parseAdjustmentAmount, parseCurrency, parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatSignedMoney, formatTime, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

/** ListLedgerEntries takes 1..500 per page; 0 means 100. */
export const LEDGER_PAGE_MAX = 500;

function balanceRow(balance: Balance): string[] {
  return [balance.currency, formatMoney(balance.available, balance.currency), formatMoney(balance.held, balance.currency)];
}

function printEntry(out: Output, entry: LedgerEntry): void {
  const fields: Array<[string, string]> = [
    ["entry", entry.id],
    ["merchant", entry.merchantId],
    ["kind", entry.kind],
    ["available change", formatSignedMoney(entry.availableDelta, entry.currency)],
    ["held change", formatSignedMoney(entry.heldDelta, entry.currency)],
  ];
  if (entry.transactionId) fields.push(["transaction", entry.transactionId]);
  if (entry.reason) fields.push(["reason", entry.reason]);
  fields.push(["created", formatTime(entry.createdAt)]);
  out.fields(fields);
}

export function registerBalanceCommands(program: Command, ctx: CommandContext): void {
  const balance = program.command("balance").description("merchants' balances (available and held, per currency) and their ledger; manual adjustments");

  balance
    .command("show")
    .description("a merchant's balances, one per currency it has used (TRY with zeros when it has none yet)")
    .requiredOption("--merchant <id>", "the merchant")
    .addHelpText("after", '\nWith --json, prints {"balances":[{"currency":"TRY","available":N,"held":N}]}.')
    .action(async (opts: { merchant: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.getBalances({ merchantId: opts.merchant });
      if (out.json) return out.message(GetBalancesResponseSchema, res);
      out.line(`Balances of merchant ${opts.merchant}:`);
      out.table(["CURRENCY", "AVAILABLE", "HELD"], res.balances.map(balanceRow), "No balances.");
    });

  balance
    .command("adjust")
    .description("post a manual adjustment of a merchant's available balance (positive adds, negative takes out), with a reason")
    .requiredOption("--merchant <id>", "the merchant")
    .requiredOption("--amount <kuruş>", "the change of available, whole kuruş, not 0; negative takes money out (--amount -500 or --amount=-500)", parseAdjustmentAmount)
    .option("--currency <code>", "ISO 4217 code (default TRY)", parseCurrency)
    .requiredOption("--reason <text>", "why (kept on the ledger entry)", parseRequiredText)
    .addHelpText(
      "after",
      `
The adjustment is one ledger entry of kind "adjustment". A negative amount may be written
--amount -500 or --amount=-500. Taking out more than is available fails with
INSUFFICIENT_BALANCE and changes nothing; held money cannot be adjusted.
With --json, prints {"balance":{…},"entry":{…}}: the balance after the adjustment and its ledger entry.`,
    )
    .action(async (opts: { merchant: string; amount: bigint; currency?: string; reason: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.adjustBalance({ merchantId: opts.merchant, amount: opts.amount, currency: opts.currency ?? "", reason: opts.reason });
      if (out.json) return out.message(AdjustBalanceResponseSchema, res);
      const after = res.balance;
      if (!after) throw new Error("the service returned no balance");
      out.line(
        `Adjusted merchant ${opts.merchant}'s ${after.currency} balance by ${formatSignedMoney(opts.amount, after.currency)}: available is now ${formatMoney(after.available, after.currency)}, held ${formatMoney(after.held, after.currency)}.`,
      );
      if (res.entry) {
        out.line();
        out.line("Ledger entry:");
        printEntry(out, res.entry);
      }
    });

  pagingOptions(
    balance
      .command("ledger")
      .description("a merchant's ledger entries (every movement of its balance), newest first, a page at a time or --all")
      .requiredOption("--merchant <id>", "the merchant")
      .option("--currency <code>", "only this currency (default: every currency)", parseCurrency),
    LEDGER_PAGE_MAX,
    100,
  )
    .addHelpText(
      "after",
      `
Kinds: deposit_credit, withdrawal_hold, withdrawal_release, withdrawal_settle, adjustment.${pagingHelp("entries")}`,
    )
    .action(async (opts: { merchant: string; currency?: string } & PagingOptions, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await payouts.listLedgerEntries({ merchantId: opts.merchant, currency: opts.currency ?? "", limit, cursor });
          return { items: res.entries, nextCursor: res.nextCursor };
        },
        json: (entries, nextCursor) => out.message(ListLedgerEntriesResponseSchema, create(ListLedgerEntriesResponseSchema, { entries: [...entries], nextCursor })),
        headers: ["ID", "CREATED", "KIND", "AVAILABLE CHANGE", "HELD CHANGE", "TRANSACTION", "REASON"],
        row: (e) => [
          e.id,
          formatTime(e.createdAt),
          e.kind,
          formatSignedMoney(e.availableDelta, e.currency),
          formatSignedMoney(e.heldDelta, e.currency),
          e.transactionId || "—",
          e.reason || "—",
        ],
        empty: "No ledger entries.",
        more: "More entries",
        max: LEDGER_PAGE_MAX,
      });
    });
}
