import type { Command } from "commander";
import { ListUnmatchedTransfersResponseSchema, ReportTransferResponseSchema, type IncomingTransfer } from "@payments/contracts/deposit";
import { pageLimitParser, parsePositiveAmount, parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatTime, type Output } from "../output.js";
import { depositStatusLabel, printDeposit } from "./deposit.js";

/** ListUnmatchedTransfers takes 1..500; 0 means 100. */
export const UNMATCHED_MAX = 500;
const UNMATCHED_DEFAULT = 100;

function printTransfer(out: Output, transfer: IncomingTransfer): void {
  const fields: Array<[string, string]> = [
    ["id", transfer.id],
    ["IBAN", transfer.iban],
    ["amount", formatMoney(transfer.amount, transfer.currency)],
    ["sender", transfer.senderName],
    ["description", transfer.reference || "(empty)"],
    ["bank transaction id", transfer.bankTransactionId],
    ["reported", formatTime(transfer.reportedAt)],
  ];
  fields.push(transfer.depositId ? ["deposit", transfer.depositId] : ["unmatched", transfer.unmatchedReason || "yes"]);
  out.fields(fields);
}

export function registerTransferCommands(program: Command, ctx: CommandContext): void {
  const transfer = program.command("transfer").description("incoming bank transfers on the receiving accounts: report one, list the unmatched");

  transfer
    .command("report")
    .description("report an incoming transfer seen on a receiving account: it completes the pending deposit it matches, or is kept as unmatched")
    .requiredOption("--iban <iban>", "the receiving account's IBAN (spaces and case are ignored)")
    .requiredOption("--amount <kuruş>", "the amount received, whole kuruş", parsePositiveAmount)
    .requiredOption("--sender <name>", "the sender's name as the bank shows it", parseRequiredText)
    .option("--reference <text>", "the transfer description, which should carry the deposit's reference")
    .requiredOption("--bank-tx-id <id>", "the bank's id of the transfer, unique per receiving account", parseRequiredText)
    .option("--currency <code>", "ISO 4217 code (default TRY)")
    .addHelpText(
      "after",
      `
Matching: among the pending deposits assigned to that account, the one whose reference is in the
description, else the only one awaiting exactly this amount. The deposit completes with the amount
received. Reporting the same --bank-tx-id on the same account again changes nothing.
With --json, prints {"transfer":{…},"deposit":{…},"duplicate":false}; "deposit" is left out when it matched none.`,
    )
    .action(async (opts: { iban: string; amount: bigint; sender: string; reference?: string; bankTxId: string; currency?: string }, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const res = await deposits.reportTransfer({
        iban: opts.iban,
        amount: opts.amount,
        currency: opts.currency ?? "",
        senderName: opts.sender,
        reference: opts.reference ?? "",
        bankTransactionId: opts.bankTxId,
      });
      if (out.json) return out.message(ReportTransferResponseSchema, res);
      const reported = res.transfer;
      if (!reported) throw new Error("the service returned no transfer");

      if (res.duplicate) {
        out.line(`Duplicate report: bank transaction ${reported.bankTransactionId} on ${reported.iban} was already reported at ${formatTime(reported.reportedAt)}; nothing changed.`);
        if (reported.amount !== opts.amount) {
          out.line(`Note: the first report was for ${formatMoney(reported.amount, reported.currency)}; this report's details were ignored.`);
        }
        out.line(
          res.deposit
            ? `It had matched deposit ${res.deposit.id} (reference ${res.deposit.reference}), which is ${depositStatusLabel(res.deposit.status)}.`
            : `It had matched no deposit: ${reported.unmatchedReason || "unmatched"}.`,
        );
        out.line();
        out.line("Transfer:");
        printTransfer(out, reported);
        return;
      }

      if (res.deposit) {
        const paid = res.deposit;
        out.line(
          `Matched: deposit ${paid.id} (reference ${paid.reference}) is now ${depositStatusLabel(paid.status)} with ${formatMoney(paid.amount, paid.currency)} received.`,
        );
        out.line();
        out.line("Transfer:");
        printTransfer(out, reported);
        out.line();
        out.line("Deposit:");
        printDeposit(out, paid);
        return;
      }

      out.line(`Unmatched: ${reported.unmatchedReason || "it matched no pending deposit"}.`);
      out.line("The transfer is kept for an operator (`pnpm cli transfer unmatched`); `pnpm cli deposit confirm ID [--amount N]` completes a deposit by hand.");
      out.line();
      out.line("Transfer:");
      printTransfer(out, reported);
    });

  transfer
    .command("unmatched")
    .description("transfers that matched no pending deposit, oldest first")
    .option("--limit <n>", `how many, 1 to ${UNMATCHED_MAX} (default: the service's, ${UNMATCHED_DEFAULT})`, pageLimitParser(UNMATCHED_MAX))
    .action(async (opts: { limit?: number }, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const limit = opts.limit ?? 0;
      const res = await deposits.listUnmatchedTransfers({ limit });
      if (out.json) return out.message(ListUnmatchedTransfersResponseSchema, res);
      out.table(
        ["ID", "REPORTED", "IBAN", "AMOUNT", "SENDER", "DESCRIPTION", "BANK TX ID", "WHY UNMATCHED"],
        res.transfers.map((t) => [
          t.id,
          formatTime(t.reportedAt),
          t.iban,
          formatMoney(t.amount, t.currency),
          t.senderName,
          t.reference || "—",
          t.bankTransactionId,
          t.unmatchedReason || "—",
        ]),
        "No unmatched transfers.",
      );
      const shown = limit === 0 ? UNMATCHED_DEFAULT : limit;
      if (res.transfers.length >= shown) out.line(`\nShowing the oldest ${res.transfers.length}; there may be more (--limit up to ${UNMATCHED_MAX}).`);
    });
}
