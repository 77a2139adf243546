import { open, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import ExcelJS from "exceljs";
import { create } from "@bufbuild/protobuf";
import {
  CompleteWithdrawalResponseSchema,
  FailWithdrawalResponseSchema,
  GetWithdrawalResponseSchema,
  ListWithdrawalsResponseSchema,
  WithdrawalApprovalState,
  WithdrawalStatus,
  type Withdrawal,
} from "@payments/contracts/payout";
import { withdrawalStatusFromProto } from "@payments/contracts/statuses";
import {
  CSV_BOM,
  CSV_DIALECTS,
  FILE_LOCALES,
  XlsxSheet,
  csvCell,
  csvLines,
  csvNumber,
  kurusToLira as liraOf,
  type FileLocale,
  type XlsxColumn,
  type XlsxWorkbookWriter,
  FAILURE_CODE_MAX,
  WITHDRAWAL_FAILURE_CODES,
  WITHDRAWAL_FAILURE_CODE_LIST,
} from "@payments/records";
import { WITHDRAWAL_STATUS_NAMES, parseFailureCode, parsePositiveAmount, parseRequiredText, parseWithdrawalStatus } from "../arguments.js";
import { UsageError } from "../errors.js";
import type { PayoutClient } from "../clients.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatTime, yesNo, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

/** ListWithdrawals takes 1..100 per page; 0 means 20. */
export const WITHDRAWAL_PAGE_MAX = 100;

export function withdrawalStatusLabel(status: WithdrawalStatus): string {
  return withdrawalStatusFromProto(status) ?? "unknown";
}

/** The status as a table shows it: with the failure reason, or who it waits for. */
function statusCell(withdrawal: Withdrawal): string {
  if ((withdrawal.status === WithdrawalStatus.FAILED || withdrawal.status === WithdrawalStatus.CANCELLED) && withdrawal.failureReason) {
    return `${withdrawalStatusLabel(withdrawal.status)} (${withdrawal.failureReason})`;
  }
  if (withdrawal.awaitingOperator) return "processing (awaiting operator)";
  if (withdrawal.status === WithdrawalStatus.PENDING && withdrawal.approval?.state === WithdrawalApprovalState.AWAITING) return "pending (awaiting the merchant's approval)";
  return withdrawalStatusLabel(withdrawal.status);
}

/** Where the merchant's own four-eyes on an API key's withdrawal stands, in words; undefined when none was needed. */
export function approvalLabel(withdrawal: Withdrawal): string | undefined {
  const approval = withdrawal.approval;
  if (!approval) return undefined;
  const decided = `by ${approval.decidedBy || "—"} at ${formatTime(approval.decidedAt)}`;
  switch (approval.state) {
    case WithdrawalApprovalState.AWAITING:
      return `awaiting a second person of the merchant (owner or finance, on the merchant dashboard) until ${formatTime(approval.expiresAt)}; the worker does not send it before`;
    case WithdrawalApprovalState.APPROVED:
      return `approved ${decided}`;
    case WithdrawalApprovalState.REJECTED:
      return `rejected ${decided}${approval.note ? `: ${approval.note}` : ""}`;
    case WithdrawalApprovalState.EXPIRED:
      return `expired at ${formatTime(approval.decidedAt)}: nobody of the merchant decided it in time`;
    case WithdrawalApprovalState.CANCELLED:
      return "cancelled while it waited: nobody decided it";
    case WithdrawalApprovalState.TRUSTED_KEY:
      return "not asked: above the merchant's threshold, but the API key is trusted for automatic payouts";
    default:
      return "unknown";
  }
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
  if (withdrawal.status === WithdrawalStatus.CANCELLED && withdrawal.failureReason) fields.push(["cancelled because", withdrawal.failureReason]);
  const approval = approvalLabel(withdrawal);
  if (approval) fields.push(["merchant's approval", approval]);
  fields.push(
    ["amount", formatMoney(withdrawal.amount, withdrawal.currency)],
    ["recipient", withdrawal.accountName],
    ["IBAN", withdrawal.iban],
    ["bank", withdrawal.bankId || "none named"],
  );
  if (withdrawal.bankReference) fields.push(["bank reference", withdrawal.bankReference]);
  fields.push(["customer", customerLabel(withdrawal)], ["created", formatTime(withdrawal.createdAt)]);
  // Who asked for it (issue 32): the person and their workload, or the API key and the gateway.
  if (withdrawal.createdBy) fields.push(["created by", withdrawal.createdBy]);
  if (withdrawal.apiKeyId) fields.push(["API key", withdrawal.apiKeyId]);
  fields.push(["updated", formatTime(withdrawal.updatedAt)]);
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

// ---------------------------------------------------------------- the bank's bulk-payment file

/** The bulk-payment file's columns, in order (English, the default). */
export const BANK_PAYMENT_CSV_HEADER = ["Recipient name", "IBAN", "Amount", "Description"] as const;

/** The same columns by locale (`--locale`). */
export const BANK_PAYMENT_HEADERS: Readonly<Record<FileLocale, readonly string[]>> = {
  en: BANK_PAYMENT_CSV_HEADER,
  tr: ["Alıcı adı", "IBAN", "Tutar", "Açıklama"],
};

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
 * match each payment when completing it). CRLF line ends (RFC 4180). English (default):
 * comma-separated, `1500.50`; Turkish: Turkish headers, `;`-separated, `1500,50`. The text
 * only: the file starts with CSV_BOM unless the operator asks for none (`--no-bom`).
 */
export function bankPaymentCsv(withdrawals: readonly Withdrawal[], locale: FileLocale = "en"): string {
  const dialect = CSV_DIALECTS[locale];
  const text = (value: string) => csvCell(value, dialect);
  const rows = [
    BANK_PAYMENT_HEADERS[locale].map(text),
    ...withdrawals.map((w) => [text(w.accountName), text(w.iban), csvNumber(kurusToLira(w.amount), dialect), text(w.id)]),
  ];
  return csvLines(rows, dialect);
}

/** The sheet's tab by locale. */
const BANK_PAYMENT_SHEET_NAME: Readonly<Record<FileLocale, string>> = { en: "Bulk payment", tr: "Toplu ödeme" };

/**
 * The same file as an .xlsx sheet in `workbook` (exceljs's streaming writer), ended: the
 * header row (bold, frozen), then per withdrawal the name, IBAN and transaction id as text and
 * the amount as a number in lira shown with two decimals.
 */
export async function writeBankPaymentSheet(workbook: XlsxWorkbookWriter, withdrawals: readonly Withdrawal[], locale: FileLocale): Promise<void> {
  const [name, iban, amount, description] = BANK_PAYMENT_HEADERS[locale] as [string, string, string, string];
  const columns: XlsxColumn[] = [
    { header: name, kind: "text", width: 32 },
    { header: iban, kind: "text", width: 34 },
    { header: amount, kind: "money", width: 16 },
    { header: description, kind: "text", width: 30 },
  ];
  const sheet = new XlsxSheet(workbook, BANK_PAYMENT_SHEET_NAME[locale], columns);
  // kurusToLira refuses a negative payment; its exact decimal read as a number is xlsxMoney's.
  for (const w of withdrawals) sheet.add([w.accountName, w.iban, Number(kurusToLira(w.amount)), w.id]);
  await sheet.finish();
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

export const EXPORT_FORMATS = ["csv", "xlsx"] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

function parseExportFormat(value: string): ExportFormat {
  const format = EXPORT_FORMATS.find((f) => f === value.trim().toLowerCase());
  if (format === undefined) throw new InvalidArgumentError(`must be one of ${EXPORT_FORMATS.join(", ")}.`);
  return format;
}

function parseLocale(value: string): FileLocale {
  const locale = FILE_LOCALES.find((l) => l === value.trim().toLowerCase());
  if (locale === undefined) throw new InvalidArgumentError(`must be one of ${FILE_LOCALES.join(", ")}.`);
  return locale;
}

/** `withdrawal fail --help`: the codes the reason takes, and when the command is refused. */
const failCodesHelp = `
Reason codes (the merchant's failureReason and its withdrawal.failed callback carry it):
${Object.entries(WITHDRAWAL_FAILURE_CODES)
  .map(([code, meaning]) => `  ${code.padEnd(18)} ${meaning}`)
  .join("\n")}
or another code of letters, digits and underscores (up to ${FAILURE_CODE_MAX}) as the bank gave it; lower case is upper-cased.
Anything else (e.g. "account closed") is refused before any call (exit 2), naming these codes.

Only a processing withdrawal can be failed; anything else fails with INVALID_TRANSACTION_STATE and changes nothing.`;

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
    .requiredOption("--reason <code>", `the failure code the merchant's failureReason carries: ${WITHDRAWAL_FAILURE_CODE_LIST}, or the bank's own code`, parseFailureCode)
    .addHelpText("after", failCodesHelp)
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
      .option("--awaiting-operator", "only withdrawals waiting for an operator's decision (processing; live ones and the sandbox's stays-processing IBAN)")
      .option("--iban <iban>", "only withdrawals to this IBAN (spaces and case ignored)")
      .option("--holder <prefix>", "only recipients (account holders) whose name starts with this, exactly as written")
      .option("--amount <kuruş>", "only withdrawals of exactly this amount, whole kuruş", parsePositiveAmount),
    WITHDRAWAL_PAGE_MAX,
    20,
  )
    .addHelpText("after", pagingHelp("withdrawals"))
    .action(async (opts: { merchant?: string; status?: WithdrawalStatus; awaitingOperator?: boolean; iban?: string; holder?: string; amount?: bigint } & PagingOptions, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await payouts.listWithdrawals({
            ...listScope(opts.merchant),
            status: opts.status ?? WithdrawalStatus.UNSPECIFIED,
            awaitingOperator: opts.awaitingOperator === true,
            iban: opts.iban ?? "",
            holderName: opts.holder ?? "",
            ...(opts.amount !== undefined ? { amount: opts.amount } : {}),
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
    .description("write the bank's bulk-payment file (CSV or XLSX) of the live withdrawals awaiting an operator (stdout, or --out FILE)")
    .requiredOption("--awaiting-operator", "the withdrawals to export: the live ones waiting for an operator (required; the only selection today)")
    .option("--format <format>", `${EXPORT_FORMATS.join(" or ")}: xlsx is a spreadsheet and needs --out`, parseExportFormat, "csv")
    .option("--locale <locale>", `${FILE_LOCALES.join(" or ")}: the headers' language and, for CSV, its separators (tr: ; between cells, comma decimals)`, parseLocale, "en")
    .option("--no-bom", "CSV only: leave out the UTF-8 byte-order mark the file otherwise starts with, for a bank portal that reads it as part of the first header")
    .option("--merchant <id>", "only this merchant's withdrawals (default: every merchant)")
    .option("--out <file>", "write the file here instead of stdout (replaced if it exists; a new file is readable by its owner only)")
    .addHelpText(
      "after",
      `
Columns: ${BANK_PAYMENT_CSV_HEADER.join(", ")} (--locale tr: ${BANK_PAYMENT_HEADERS.tr.join(", ")}) — the
recipient's account name, the IBAN, the amount in lira with two decimals (15050 kuruş is 150.50)
and the transaction id, which the bank shows as the payment's description. Oldest first.
CSV: UTF-8 starting with a byte-order mark (so Excel reads it as UTF-8; --no-bom leaves it out),
CRLF line ends, RFC 4180 quoting; comma-separated with 150.50, or with --locale tr
semicolon-separated with 150,50, as Excel set to Turkish reads it; a name starting with
= + - or @ gets a leading ' so a spreadsheet never reads it as a formula.
XLSX (--out required): one sheet, bold frozen header, names, IBANs and ids as text, amounts as
numbers in lira shown with two decimals.
Only live TRY withdrawals: sandbox ones never reach a bank, and one in another currency is
left out (counted on stderr).
After the bank has paid them: withdrawal complete ID --bank-reference REF (or fail ID --reason CODE).
With --out, prints a summary (--json: {"file","count","total"}; total in kuruş).`,
    )
    .action(async (opts: { format: ExportFormat; locale: FileLocale; bom: boolean; merchant?: string; out?: string }, cmd: Command) => {
      // Judged before the service is asked: a wrong combination is a usage error, not a half-done export.
      if (opts.format === "xlsx" && opts.out === undefined) throw new UsageError("--format xlsx writes a binary spreadsheet: give --out FILE.");
      if (opts.format === "xlsx" && !opts.bom) throw new UsageError("--no-bom is for CSV only: an .xlsx file has no byte-order mark.");
      const session = ctx.session(cmd);
      const waiting = await liveAwaitingOperator(session.payouts, opts.merchant);
      const lira = waiting.filter((w) => w.currency === "TRY");
      const skipped = waiting.length - lira.length;
      if (skipped > 0) session.io.stderr.write(`note: ${skipped} withdrawal(s) awaiting an operator in other currencies than TRY are not in the file\n`);
      const csv = () => (opts.bom ? CSV_BOM : "") + bankPaymentCsv(lira, opts.locale);
      if (opts.out === undefined) {
        session.io.stdout.write(csv());
        return;
      }
      const file = resolve(opts.out);
      if (opts.format === "csv") {
        await writeFile(file, csv(), { mode: 0o600 });
      } else {
        // Opened first, so a path that cannot be written fails before the workbook is built.
        const handle = await open(file, "w", 0o600);
        const stream = handle.createWriteStream();
        // exceljs listens for the file's errors only once it ends the file; one before (a full disk) must fail the command too.
        const broken = new Promise<never>((_, reject) => stream.once("error", reject));
        await Promise.race([writeBankPaymentSheet(new ExcelJS.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false }), lira, opts.locale), broken]);
      }
      const total = lira.reduce((sum, w) => sum + w.amount, 0n);
      if (session.out.json) return session.out.data({ file, count: lira.length, total });
      session.out.line(`Wrote ${lira.length} withdrawal(s), ${formatMoney(total, "TRY")} in all, to ${file}.`);
    });
}
