import type { Command } from "commander";
import { create } from "@bufbuild/protobuf";
import {
  ConfirmDepositResponseSchema,
  DepositStatus,
  GetDepositResponseSchema,
  ListDepositsResponseSchema,
  RejectDepositResponseSchema,
  type Deposit,
} from "@payments/contracts/deposit";
import { depositStatusFromProto } from "@payments/contracts/statuses";
import { DEPOSIT_STATUS_NAMES, parseDepositStatus, parsePositiveAmount, parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { formatMoney, formatTime, yesNo, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";

/** ListDeposits takes 1..100 per page. */
export const DEPOSIT_PAGE_MAX = 100;

export function depositStatusLabel(status: DepositStatus): string {
  return depositStatusFromProto(status) ?? "unknown";
}

/** The assigned account (IBAN first: what the customer pays into), or why there is none. */
function accountLabel(deposit: Deposit): string {
  const account = deposit.assignedAccount;
  if (!account) return "none (the pool had no active account; only an operator can confirm it)";
  return `${account.iban} — ${account.accountName}, ${account.bankName || account.bankId} (${account.accountId})`;
}

function amountLabel(deposit: Deposit): string {
  const money = formatMoney(deposit.amount, deposit.currency);
  if (deposit.status !== DepositStatus.COMPLETED) return money;
  return deposit.amount === deposit.requestedAmount ? `${money}, received` : `${money}, received (differs from the requested amount)`;
}

export function printDeposit(out: Output, deposit: Deposit): void {
  const fields: Array<[string, string]> = [
    ["id", deposit.id],
    ["merchant", deposit.merchantId],
    ["process id", deposit.processId],
    ["status", depositStatusLabel(deposit.status)],
  ];
  if (deposit.status === DepositStatus.FAILED) fields.push(["failure reason", deposit.failureReason || "—"]);
  fields.push(
    ["amount", amountLabel(deposit)],
    ["requested amount", formatMoney(deposit.requestedAmount, deposit.currency)],
    ["reference", deposit.reference],
    ["bank", deposit.bankId || "none chosen (the merchant's widest limits)"],
    ["assigned account", accountLabel(deposit)],
    ["customer", deposit.customer ? `${deposit.customer.name} (username ${deposit.customer.username}, id ${deposit.customer.id})` : "—"],
    ["sandbox", yesNo(deposit.sandbox)],
  );
  if (deposit.latePayment) fields.push(["late payment", "yes"]);
  if (deposit.matchBy) {
    const reasons = deposit.matchReasons.length > 0 ? ` — ${deposit.matchReasons.join("; ")}` : "";
    fields.push(["matched", `${deposit.matchBy} ${deposit.matchScore.toFixed(2)}${reasons}`]);
  }
  if (deposit.metadataJson) fields.push(["metadata", deposit.metadataJson]);
  fields.push(["created", formatTime(deposit.createdAt)], ["expires", formatTime(deposit.expiresAt)], ["updated", formatTime(deposit.updatedAt)]);
  if (deposit.completedAt) fields.push(["final since", formatTime(deposit.completedAt)]);
  // Who completed it (the paying transfer's reporter, or the operator): recorded since issue 32.
  if (deposit.completedBy) fields.push(["completed by", deposit.completedBy]);
  out.fields(fields);
}

/** The deposit in a response, which a well-behaved service always sets. */
export function requiredDeposit(deposit: Deposit | undefined): Deposit {
  if (!deposit) throw new Error("the service returned no deposit");
  return deposit;
}

export function registerDepositCommands(program: Command, ctx: CommandContext): void {
  const deposit = program.command("deposit").description("look up deposits and decide pending ones by hand: confirm or reject");

  deposit
    .command("confirm")
    .description("complete a pending deposit (pending → completed), optionally with the amount actually received")
    .argument("<transaction-id>", "the deposit's transaction id (dep_…)")
    .option("--amount <kuruş>", "the amount actually received, whole kuruş (default: the transfer's amount with --transfer, else the requested amount)", parsePositiveAmount)
    .option("--transfer <transfer-id>", "the unmatched incoming transfer (trf_…, see `transfer unmatched`) that paid it; it is linked and leaves the unmatched list")
    .addHelpText("after", "\nThe deposit's amount becomes the amount received; the original stays as requestedAmount. Only a pending deposit can be confirmed.")
    .action(async (id: string, opts: { amount?: bigint; transfer?: string }, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const res = await deposits.confirmDeposit({ depositId: id, amount: opts.amount, transferId: opts.transfer?.trim() ?? "" });
      if (out.json) return out.message(ConfirmDepositResponseSchema, res);
      const confirmed = requiredDeposit(res.deposit);
      const requested = confirmed.amount === confirmed.requestedAmount ? "" : ` (requested ${formatMoney(confirmed.requestedAmount, confirmed.currency)})`;
      out.line(`Deposit ${confirmed.id} confirmed: ${depositStatusLabel(confirmed.status)}, ${formatMoney(confirmed.amount, confirmed.currency)} received${requested}.`);
      printDeposit(out, confirmed);
    });

  deposit
    .command("reject")
    .description("fail a pending deposit (pending → failed) with a reason")
    .argument("<transaction-id>", "the deposit's transaction id (dep_…)")
    .requiredOption("--reason <text>", "why (kept on the deposit, up to 500 characters)", parseRequiredText)
    .action(async (id: string, opts: { reason: string }, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const res = await deposits.rejectDeposit({ depositId: id, reason: opts.reason });
      if (out.json) return out.message(RejectDepositResponseSchema, res);
      const rejected = requiredDeposit(res.deposit);
      out.line(`Deposit ${rejected.id} rejected: ${depositStatusLabel(rejected.status)} (reason: ${rejected.failureReason}).`);
      printDeposit(out, rejected);
    });

  deposit
    .command("show")
    .description("show one deposit of any merchant")
    .argument("<transaction-id>", "the deposit's transaction id (dep_…)")
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      // No merchant id: operators see every merchant's deposits.
      const res = await deposits.getDeposit({ merchantId: "", allMerchants: true, key: { case: "depositId", value: id } });
      if (out.json) return out.message(GetDepositResponseSchema, res);
      printDeposit(out, requiredDeposit(res.deposit));
    });

  pagingOptions(
    deposit
      .command("list")
      .description("list deposits, newest first, a page at a time or --all")
      .option("--merchant <id>", "only this merchant's deposits")
      .option("--status <status>", `only deposits in this status: ${DEPOSIT_STATUS_NAMES.join("|")}`, parseDepositStatus)
      .option("--reference <reference>", "only the deposit with this reference (any case)")
      .option("--customer <id>", "only this customer's deposits (the merchant's customer id, exact)")
      .option("--customer-name <prefix>", "only customers whose name starts with this, exactly as written")
      .option("--iban <iban>", "only deposits to this receiving IBAN (spaces and case ignored)")
      .option("--amount <kuruş>", "only deposits of exactly this amount, whole kuruş", parsePositiveAmount),
    DEPOSIT_PAGE_MAX,
    20,
  )
    .addHelpText("after", pagingHelp("deposits"))
    .action(async (opts: { merchant?: string; status?: DepositStatus; reference?: string; customer?: string; customerName?: string; iban?: string; amount?: bigint } & PagingOptions, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await deposits.listDeposits({
            // Without --merchant the operator asks, explicitly, for every merchant's deposits.
            merchantId: opts.merchant ?? "",
            allMerchants: opts.merchant === undefined,
            status: opts.status ?? DepositStatus.UNSPECIFIED,
            reference: opts.reference ?? "",
            customerId: opts.customer ?? "",
            customerName: opts.customerName ?? "",
            accountIban: opts.iban ?? "",
            ...(opts.amount !== undefined ? { amount: opts.amount } : {}),
            limit,
            cursor,
          });
          return { items: res.deposits, nextCursor: res.nextCursor };
        },
        json: (deposits, nextCursor) => out.message(ListDepositsResponseSchema, create(ListDepositsResponseSchema, { deposits: [...deposits], nextCursor })),
        headers: ["ID", "MERCHANT", "PROCESS ID", "STATUS", "AMOUNT", "REFERENCE", "ACCOUNT IBAN", "CREATED"],
        row: (d) => [
          d.id,
          d.merchantId,
          d.processId,
          depositStatusLabel(d.status),
          formatMoney(d.amount, d.currency),
          d.reference,
          d.assignedAccount?.iban ?? "—",
          formatTime(d.createdAt),
        ],
        empty: "No deposits.",
        more: "More deposits",
        max: DEPOSIT_PAGE_MAX,
      });
    });
}
