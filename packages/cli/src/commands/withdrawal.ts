import type { Command } from "commander";
import {
  CompleteWithdrawalResponseSchema,
  FailWithdrawalResponseSchema,
  GetWithdrawalResponseSchema,
  ListWithdrawalsResponseSchema,
  WithdrawalStatus,
  type Withdrawal,
} from "@payments/contracts/payout";
import { WITHDRAWAL_STATUS_NAMES, pageLimitParser, parseRequiredText, parseWithdrawalStatus } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatTime, type Output } from "../output.js";

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

function customerLabel(withdrawal: Withdrawal): string {
  if (!withdrawal.userId && !withdrawal.userName && !withdrawal.name) return "—";
  return `${withdrawal.name || "—"} (username ${withdrawal.userName || "—"}, id ${withdrawal.userId || "—"})`;
}

export function printWithdrawal(out: Output, withdrawal: Withdrawal): void {
  const fields: Array<[string, string]> = [
    ["id", withdrawal.id],
    ["merchant", withdrawal.merchantId],
    ["process id", withdrawal.processId],
    ["status", withdrawalStatusLabel(withdrawal.status)],
  ];
  if (withdrawal.status === WithdrawalStatus.FAILED) fields.push(["failure reason", withdrawal.failureReason || "—"]);
  fields.push(
    ["amount", formatMoney(withdrawal.amount, withdrawal.currency)],
    ["recipient", withdrawal.accountName],
    ["IBAN", withdrawal.iban],
    ["bank", withdrawal.bankId || "none named"],
    ["customer", customerLabel(withdrawal)],
    ["created", formatTime(withdrawal.createdAt)],
    ["updated", formatTime(withdrawal.updatedAt)],
  );
  if (withdrawal.completedAt) fields.push(["final since", formatTime(withdrawal.completedAt)]);
  out.fields(fields);
}

/** The withdrawal in a response, which a well-behaved service always sets. */
function requiredWithdrawal(withdrawal: Withdrawal | undefined): Withdrawal {
  if (!withdrawal) throw new Error("the service returned no withdrawal");
  return withdrawal;
}

export function registerWithdrawalCommands(program: Command, ctx: CommandContext): void {
  const withdrawal = program
    .command("withdrawal")
    .description("look up withdrawals (payouts to a recipient IBAN) and decide the ones a bank left processing: complete or fail");

  withdrawal
    .command("complete")
    .description("complete a withdrawal the bank left processing (processing → completed): the held amount is paid out")
    .argument("<transaction-id>", "the withdrawal's transaction id")
    .addHelpText("after", "\nOnly a processing withdrawal can be completed; anything else fails with INVALID_TRANSACTION_STATE and changes nothing.")
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.completeWithdrawal({ withdrawalId: id });
      if (out.json) return out.message(CompleteWithdrawalResponseSchema, res);
      const completed = requiredWithdrawal(res.withdrawal);
      out.line(`Withdrawal ${completed.id} completed: ${withdrawalStatusLabel(completed.status)}, ${formatMoney(completed.amount, completed.currency)} paid out to ${completed.iban}.`);
      printWithdrawal(out, completed);
    });

  withdrawal
    .command("fail")
    .description("fail a withdrawal the bank left processing (processing → failed) with a reason code; the held amount returns to available")
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
      // No merchant id: operators see every merchant's withdrawals.
      const res = await payouts.getWithdrawal({ merchantId: "", key: { case: "withdrawalId", value: id } });
      if (out.json) return out.message(GetWithdrawalResponseSchema, res);
      printWithdrawal(out, requiredWithdrawal(res.withdrawal));
    });

  withdrawal
    .command("list")
    .description("list withdrawals, newest first, one page at a time")
    .option("--merchant <id>", "only this merchant's withdrawals")
    .option("--status <status>", `only withdrawals in this status: ${WITHDRAWAL_STATUS_NAMES.join("|")}`, parseWithdrawalStatus)
    .option("--limit <n>", `page size, 1 to ${WITHDRAWAL_PAGE_MAX} (default: the service's, 20)`, pageLimitParser(WITHDRAWAL_PAGE_MAX))
    .option("--cursor <cursor>", "the next page: the cursor a previous list printed")
    .addHelpText("after", '\nWith --json, prints {"withdrawals":[…],"nextCursor":"…"}; nextCursor is "" on the last page.')
    .action(async (opts: { merchant?: string; status?: WithdrawalStatus; limit?: number; cursor?: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.listWithdrawals({
        merchantId: opts.merchant ?? "",
        status: opts.status ?? WithdrawalStatus.UNSPECIFIED,
        limit: opts.limit ?? 0,
        cursor: opts.cursor ?? "",
      });
      if (out.json) return out.message(ListWithdrawalsResponseSchema, res);
      out.table(
        ["ID", "MERCHANT", "PROCESS ID", "STATUS", "AMOUNT", "IBAN", "RECIPIENT", "CREATED"],
        res.withdrawals.map((w) => [
          w.id,
          w.merchantId,
          w.processId,
          w.status === WithdrawalStatus.FAILED && w.failureReason ? `failed (${w.failureReason})` : withdrawalStatusLabel(w.status),
          formatMoney(w.amount, w.currency),
          w.iban,
          w.accountName,
          formatTime(w.createdAt),
        ]),
        "No withdrawals.",
      );
      if (res.nextCursor !== "") out.line(`\nMore withdrawals: add --cursor ${res.nextCursor}`);
    });
}
