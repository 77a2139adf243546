import { InvalidArgumentError, type Command } from "commander";
import { create } from "@bufbuild/protobuf";
import {
  CompleteTransferReturnResponseSchema,
  FailTransferReturnResponseSchema,
  ListTransferReturnsResponseSchema,
  TransferReturnStatus,
  type TransferReturn,
} from "@payments/contracts/payout";
import { TRANSFER_RETURN_STATUSES, isTransferReturnStatusName, transferReturnStatusFromProto, transferReturnStatusToProto } from "@payments/contracts/statuses";
import { parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatTime, yesNo, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

// Transfer returns: money of an incoming transfer paid back to its sender by the payout
// service (the deposit service asks for it on `transfer return`). These commands are the
// operator's side of the live manual connector: list the returns waiting to be paid in the
// bank's portal, then complete or fail each one.

/** ListTransferReturns takes 1..100 per page; 0 means 20. */
export const TRANSFER_RETURN_PAGE_MAX = 100;

/** pending, processing, completed or failed (any case) → the proto enum. */
export function parseTransferReturnStatus(value: string): TransferReturnStatus {
  const text = value.trim().toLowerCase();
  if (!isTransferReturnStatusName(text)) throw new InvalidArgumentError(`expected one of ${TRANSFER_RETURN_STATUSES.join(", ")}.`);
  return transferReturnStatusToProto(text);
}

export function transferReturnStatusLabel(status: TransferReturnStatus): string {
  return transferReturnStatusFromProto(status) ?? "unknown";
}

function statusCell(r: TransferReturn): string {
  if (r.status === TransferReturnStatus.FAILED && r.failureReason) return `failed (${r.failureReason})`;
  if (r.awaitingOperator) return "processing (awaiting operator)";
  return transferReturnStatusLabel(r.status);
}

export function printTransferReturn(out: Output, r: TransferReturn): void {
  const fields: Array<[string, string]> = [
    ["id", r.id],
    ["transfer", `${r.transferId} (attempt ${r.attempt})`],
    ["kind", r.sandbox ? "sandbox (the sandbox connector: no money moves)" : "live (the live connector)"],
    ["status", transferReturnStatusLabel(r.status)],
  ];
  if (r.status === TransferReturnStatus.PROCESSING) {
    fields.push(["awaiting operator", r.awaitingOperator ? "yes: pay it in the bank, then `transfer-return complete` or `transfer-return fail`" : yesNo(false)]);
  }
  if (r.status === TransferReturnStatus.FAILED) fields.push(["failure reason", r.failureReason || "—"]);
  fields.push(["amount", formatMoney(r.amount, r.currency)], ["recipient", r.recipientName], ["IBAN", r.iban]);
  if (r.bankReference) fields.push(["bank reference", r.bankReference]);
  fields.push(["reason", r.reason], ["decided by", r.actor], ["created", formatTime(r.createdAt)], ["updated", formatTime(r.updatedAt)]);
  if (r.completedAt) fields.push(["final since", formatTime(r.completedAt)]);
  out.fields(fields);
}

function required(r: TransferReturn | undefined): TransferReturn {
  if (!r) throw new Error("the service returned no transfer return");
  return r;
}

export function registerTransferReturnCommands(program: Command, ctx: CommandContext): void {
  const group = program
    .command("transfer-return")
    .description("transfer returns (unmatched money paid back to its sender): list them, and complete or fail the live ones awaiting an operator");

  pagingOptions(
    group
      .command("list")
      .description("list transfer returns, newest first, a page at a time or --all")
      .option("--awaiting-operator", "only returns waiting for an operator's decision (processing: live ones, and the sandbox's stays-processing IBAN)")
      .option("--status <status>", `only returns in this status: ${TRANSFER_RETURN_STATUSES.join("|")}`, parseTransferReturnStatus)
      .option("--transfer <id>", "only the returns (every attempt) of this incoming transfer"),
    TRANSFER_RETURN_PAGE_MAX,
    20,
  )
    .addHelpText("after", pagingHelp("transferReturns"))
    .action(async (opts: { awaitingOperator?: boolean; status?: TransferReturnStatus; transfer?: string } & PagingOptions, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await payouts.listTransferReturns({
            status: opts.status ?? TransferReturnStatus.UNSPECIFIED,
            awaitingOperator: opts.awaitingOperator === true,
            transferId: opts.transfer ?? "",
            limit,
            cursor,
          });
          return { items: res.transferReturns, nextCursor: res.nextCursor };
        },
        json: (transferReturns, nextCursor) =>
          out.message(ListTransferReturnsResponseSchema, create(ListTransferReturnsResponseSchema, { transferReturns: [...transferReturns], nextCursor })),
        headers: ["ID", "TRANSFER", "KIND", "STATUS", "AMOUNT", "IBAN", "RECIPIENT", "DECIDED BY", "CREATED"],
        row: (r) => [r.id, r.transferId, r.sandbox ? "sandbox" : "live", statusCell(r), formatMoney(r.amount, r.currency), r.iban, r.recipientName, r.actor, formatTime(r.createdAt)],
        empty: "No transfer returns.",
        more: "More transfer returns",
        max: TRANSFER_RETURN_PAGE_MAX,
      });
    });

  group
    .command("complete")
    .description("complete a transfer return awaiting an operator (processing → completed) once the bank has paid it; the deposit service then marks the transfer returned")
    .argument("<id>", "the transfer return's id (trr_…)")
    .requiredOption("--bank-reference <ref>", "the bank's reference of the payment (from its portal or statement), up to 100 characters", parseRequiredText)
    .addHelpText(
      "after",
      "\nOnly a processing return can be completed; anything else fails with INVALID_TRANSACTION_STATE and changes nothing.\nOne whose bank answer is still awaited fails with BANK_ANSWER_PENDING.",
    )
    .action(async (id: string, opts: { bankReference: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.completeTransferReturn({ id, bankReference: opts.bankReference });
      if (out.json) return out.message(CompleteTransferReturnResponseSchema, res);
      const done = required(res.transferReturn);
      out.line(`Transfer return ${done.id} completed: ${formatMoney(done.amount, done.currency)} paid back to ${done.iban} (bank reference ${done.bankReference || opts.bankReference}).`);
      printTransferReturn(out, done);
    });

  group
    .command("fail")
    .description("fail a transfer return awaiting an operator (processing → failed); the transfer goes back to unmatched and may be returned again")
    .argument("<id>", "the transfer return's id (trr_…)")
    .requiredOption("--reason <text>", "why it failed (e.g. ACCOUNT_CLOSED, or the bank's words), up to 100 characters", parseRequiredText)
    .addHelpText("after", "\nOnly a processing return can be failed; anything else fails with INVALID_TRANSACTION_STATE and changes nothing.")
    .action(async (id: string, opts: { reason: string }, cmd: Command) => {
      const { out, payouts } = ctx.session(cmd);
      const res = await payouts.failTransferReturn({ id, reason: opts.reason });
      if (out.json) return out.message(FailTransferReturnResponseSchema, res);
      const failed = required(res.transferReturn);
      out.line(`Transfer return ${failed.id} failed (reason: ${failed.failureReason || opts.reason}); transfer ${failed.transferId} goes back to unmatched, its money still in suspense.`);
      printTransferReturn(out, failed);
    });
}
