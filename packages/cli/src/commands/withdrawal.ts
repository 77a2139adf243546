import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { create } from "@bufbuild/protobuf";
import {
  CompleteWithdrawalResponseSchema,
  FailWithdrawalResponseSchema,
  GetWithdrawalResponseSchema,
  ListWithdrawalsResponseSchema,
  WithdrawalStatus,
  type Withdrawal,
} from "@payments/contracts/payout";
import { csvCell, csvLines, kurusToLira as liraOf } from "@payments/records";
import { WITHDRAWAL_STATUS_NAMES, parseRequiredText, parseWithdrawalStatus } from "../arguments.js";
import type { PayoutClient } from "../clients.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatTime, yesNo, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

/** ListWithdrawals takes 1..100 per page; 0 means 20. */
export const WITHDRAWAL_PAGE_MAX = 100;

export function withdrawalStatusLabel(status: WithdrawalStatus): string {
  switch (status) {
    case WithdrawalStatus.PENDING:
      return "pending";
    case WithdrawalStatus.PROCESSING:
      return "processing";
    case WithdrawalStatus.COMPLETED:
      return "completed";
    case WithdrawalStatus.FAILED:
      return "failed";
    case WithdrawalStatus.CANCELLED:
      return "cancelled";
    default:
      return "unknown";
  }
}

/** The status as a table shows it: with the failure reason, or who it waits for. */
function statusCell(withdrawal: Withdrawal): string {
  if (withdrawal.status === WithdrawalStatus.FAILED && withdrawal.failureReason) return `failed (${withdrawal.failureReason})`;
  if (withdrawal.awaitingOperator) return "processing (awaiting operator)";
  return withdrawalStatusLabel(withdrawal.status);
}

function kindLabel(withdrawal: Withdrawal): string {
  return withdrawal.sandbox ? "sandbox" : "live";
}

function customerLabel(withdrawal: Withdrawal): string {
  if (!withdrawal.userId && !withdrawal.userName && !withdrawal.name) return "—";
  return `${withdrawal.name || "—"} (username ${withdrawal.userName || "—"}, id ${withdrawal.userId || "—"})`;
}

export function printWithdrawal(out: Output, withdrawal: Withdrawal): void {
  const fields: Array<[string, string]> = [
    ["id", withdrawal.id],
    ["merchant", withdrawal.merchantId],
    ["process id", withdrawal.processId],
    ["kind", `${kindLabel(withdrawal)} (${withdrawal.sandbox ? "the sandbox connector: no money moves" : "the live connector"})`],
    ["status", withdrawalStatusLabel(withdrawal.status)],
  ];
  if (withdrawal.status === WithdrawalStatus.PROCESSING) {
    fields.push(["awaiting operator", withdrawal.awaitingOperator ? "yes: pay it in the bank, then `withdrawal complete` or `withdrawal fail`" : yesNo(false)]);
  }
  if (withdrawal.status === WithdrawalStatus.FAILED) fields.push(["failure reason", withdrawal.failureReason || "—"]);
  fields.push(
    ["amount", formatMoney(withdrawal.amount, withdrawal.currency)],
    ["recipient", withdrawal.accountName],
    ["IBAN", withdrawal.iban],
    ["bank", withdrawal.bankId || "none named"],
  );
  if (withdrawal.bankReference) fields.push(["bank reference", withdrawal.bankReference]);
  fields.push(["customer", customerLabel(withdrawal)], ["created", formatTime(withdrawal.createdAt)], ["updated", formatTime(withdrawal.updatedAt)]);
  if (withdrawal.completedAt) fields.push(["final since", formatTime(withdrawal.completedAt)]);
  out.fields(fields);
}

/** The withdrawal in a response, which a well-behaved service always sets. */
function requiredWithdrawal(withdrawal: Withdrawal | undefined): Withdrawal {
  if (!withdrawal) throw new Error("the service returned no withdrawal");
  return withdrawal;
}

/** Which merchant a listing is about: one (--merchant), or, said explicitly to the service, every merchant. */
function listScope(merchant: string | undefined): { merchantId: string; allMerchants: boolean } {
  return merchant === undefined ? { merchantId: "", allMerchants: true } : { merchantId: merchant, allMerchants: false };
}

// ---------------------------------------------------------------- the bank's bulk-payment CSV

/** The bulk-payment file's columns, in order. */
export const BANK_PAYMENT_CSV_HEADER = ["Recipient name", "IBAN", "Amount", "Description"] as const;

/** Kuruş to lira with two decimals, exactly (the shared kurusToLira); a payment amount is never negative. */
export function kurusToLira(amount: bigint): string {
  if (amount < 0n) throw new Error(`a payment amount cannot be negative (${amount})`);
  return liraOf(amount);
}

/** The shared RFC 4180 cell with the formula-injection guard (@payments/records). */
export { csvCell };

/**
 * The CSV an operator uploads to a bank's bulk-payment screen: a header row, then per
 * withdrawal the recipient's name, IBAN, the amount in lira with two decimals and the
 * transaction id as the description (what the bank's statement shows, so the operator can
 * match each payment when completing it). UTF-8, CRLF line ends (RFC 4180).
 */
export function bankPaymentCsv(withdrawals: readonly Withdrawal[]): string {
  const rows = [BANK_PAYMENT_CSV_HEADER, ...withdrawals.map((w) => [w.accountName, w.iban, kurusToLira(w.amount), w.id])];
  return csvLines(rows.map((row) => row.map(csvCell)));
}

/** Every live withdrawal waiting for an operator (of one merchant, or all), oldest first: all pages. */
async function liveAwaitingOperator(payouts: PayoutClient, merchant: string | undefined): Promise<Withdrawal[]> {
  const found: Withdrawal[] = [];
  let cursor = "";
  do {
    const page = await payouts.listWithdrawals({ ...listScope(merchant), awaitingOperator: true, sandbox: false, limit: WITHDRAWAL_PAGE_MAX, cursor });
    found.push(...page.withdrawals);
    cursor = page.nextCursor;
  } while (cursor !== "");
  return found.reverse();
}

function parseExportFormat(value: string): "csv" {
  if (value.trim().toLowerCase() !== "csv") throw new InvalidArgumentError("the only format is csv.");
  return "csv";
}

export function registerWithdrawalCommands(program: Command, ctx: CommandContext): void {
  const withdrawal = program
    .command("withdrawal")
    .description("look up withdrawals (payouts to a recipient IBAN), export the live ones awaiting an operator for the bank, and complete or fail them");

  withdrawal
    .command("complete")
    .description("complete a withdrawal awaiting an operator (processing → completed) once the bank has paid it: the held amount is paid out and the bank's reference kept")
    .argument("<transaction-id>", "the withdrawal's transaction id")
    .requiredOption("--bank-reference <ref>", "the bank's reference of the transfer (from its portal or statement), up to 100 characters", parseRequiredText)
    .addHelpText(
      "after",
      "\nOnly a processing withdrawal can be completed; anything else fails with INVALID_TRANSACTION_STATE and changes nothing.\nOne whose bank answer is still awaited fails with BANK_ANSWER_PENDING.",
    )
    .action(async (id: string, opts: { bankReference: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.completeWithdrawal({ withdrawalId: id, bankReference: opts.bankReference });
      if (out.json) return out.message(CompleteWithdrawalResponseSchema, res);
      const completed = requiredWithdrawal(res.withdrawal);
      out.line(
        `Withdrawal ${completed.id} completed: ${withdrawalStatusLabel(completed.status)}, ${formatMoney(completed.amount, completed.currency)} paid out to ${completed.iban} (bank reference ${completed.bankReference || opts.bankReference}).`,
      );
      printWithdrawal(out, completed);
    });

  withdrawal
    .command("fail")
    .description("fail a withdrawal awaiting an operator (processing → failed) with a reason code; the held amount returns to available")
    .argument("<transaction-id>", "the withdrawal's transaction id")
    .requiredOption("--reason <code>", "the failure reason code the merchant sees: letters, digits and underscores, e.g. ACCOUNT_CLOSED, ACCOUNT_NOT_FOUND, NAME_MISMATCH", parseRequiredText)
    .addHelpText("after", "\nOnly a processing withdrawal can be failed; anything else fails with INVALID_TRANSACTION_STATE and changes nothing.")
    .action(async (id: string, opts: { reason: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.failWithdrawal({ withdrawalId: id, reason: opts.reason });
      if (out.json) return out.message(FailWithdrawalResponseSchema, res);
      const failed = requiredWithdrawal(res.withdrawal);
      out.line(
        `Withdrawal ${failed.id} failed (reason: ${failed.failureReason || opts.reason}); the held ${formatMoney(failed.amount, failed.currency)} returned to the merchant's available balance.`,
      );
      printWithdrawal(out, failed);
    });

  withdrawal
    .command("show")
    .description("show one withdrawal of any merchant")
    .argument("<transaction-id>", "the withdrawal's transaction id")
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      // An operator's lookup across merchants, said so explicitly.
      const res = await payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: id } });
      if (out.json) return out.message(GetWithdrawalResponseSchema, res);
      printWithdrawal(out, requiredWithdrawal(res.withdrawal));
    });

  pagingOptions(
    withdrawal
      .command("list")
      .description("list withdrawals of one merchant or of every merchant, newest first, a page at a time or --all")
      .option("--merchant <id>", "only this merchant's withdrawals (default: every merchant)")
      .option("--status <status>", `only withdrawals in this status: ${WITHDRAWAL_STATUS_NAMES.join("|")}`, parseWithdrawalStatus)
      .option("--awaiting-operator", "only withdrawals waiting for an operator's decision (processing; live ones and the sandbox's stays-processing IBAN)"),
    WITHDRAWAL_PAGE_MAX,
    20,
  )
    .addHelpText("after", pagingHelp("withdrawals"))
    .action(async (opts: { merchant?: string; status?: WithdrawalStatus; awaitingOperator?: boolean } & PagingOptions, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await payouts.listWithdrawals({
            ...listScope(opts.merchant),
            status: opts.status ?? WithdrawalStatus.UNSPECIFIED,
            awaitingOperator: opts.awaitingOperator === true,
            limit,
            cursor,
          });
          return { items: res.withdrawals, nextCursor: res.nextCursor };
        },
        json: (withdrawals, nextCursor) => out.message(ListWithdrawalsResponseSchema, create(ListWithdrawalsResponseSchema, { withdrawals: [...withdrawals], nextCursor })),
        headers: ["ID", "MERCHANT", "KIND", "PROCESS ID", "STATUS", "AMOUNT", "IBAN", "RECIPIENT", "CREATED"],
        row: (w) => [w.id, w.merchantId, kindLabel(w), w.processId, statusCell(w), formatMoney(w.amount, w.currency), w.iban, w.accountName, formatTime(w.createdAt)],
        empty: "No withdrawals.",
        more: "More withdrawals",
        max: WITHDRAWAL_PAGE_MAX,
      });
    });

  withdrawal
    .command("export")
    .description("write the bank's bulk-payment CSV of the live withdrawals awaiting an operator (stdout, or --out FILE)")
    .requiredOption("--awaiting-operator", "the withdrawals to export: the live ones waiting for an operator (required; the only selection today)")
    .option("--format <format>", "csv (the only format)", parseExportFormat, "csv")
    .option("--merchant <id>", "only this merchant's withdrawals (default: every merchant)")
    .option("--out <file>", "write the CSV to this file instead of stdout (replaced if it exists; a new file is readable by its owner only)")
    .addHelpText(
      "after",
      `
Columns: ${BANK_PAYMENT_CSV_HEADER.join(", ")} — the recipient's account name, the IBAN, the
amount in lira with two decimals (15050 kuruş is 150.50) and the transaction id, which the
bank shows as the payment's description. Oldest first; UTF-8, comma-separated, CRLF line
ends, RFC 4180 quoting; a name starting with = + - or @ gets a leading ' so a spreadsheet
never reads it as a formula. Only live TRY withdrawals: sandbox ones never reach a bank, and
one in another currency is left out (counted on stderr).
After the bank has paid them: withdrawal complete ID --bank-reference REF (or fail ID --reason CODE).
With --out, prints a summary (--json: {"file","count","total"}; total in kuruş).`,
    )
    .action(async (opts: { merchant?: string; out?: string }, cmd: Command) => {
      const session = ctx.session(cmd);
      const waiting = await liveAwaitingOperator(session.payouts, opts.merchant);
      const lira = waiting.filter((w) => w.currency === "TRY");
      const skipped = waiting.length - lira.length;
      if (skipped > 0) session.io.stderr.write(`note: ${skipped} withdrawal(s) awaiting an operator in other currencies than TRY are not in the file\n`);
      const csv = bankPaymentCsv(lira);
      if (opts.out === undefined) {
        session.io.stdout.write(csv);
        return;
      }
      const file = resolve(opts.out);
      await writeFile(file, csv, { mode: 0o600 });
      const total = lira.reduce((sum, w) => sum + w.amount, 0n);
      if (session.out.json) return session.out.data({ file, count: lira.length, total });
      session.out.line(`Wrote ${lira.length} withdrawal(s), ${formatMoney(total, "TRY")} in all, to ${file}.`);
    });
}
