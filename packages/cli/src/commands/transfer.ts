import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  GetTransferResponseSchema,
  IncomingTransferSchema,
  ReportTransferResponseSchema,
  ResolveTransferResponseSchema,
  ReturnDecisionSchema,
  TransferStatus,
  type IncomingTransfer,
  type ResolveTransferRequest,
  type TransferCandidate,
} from "@payments/contracts/deposit";
import { transferStatusFromProto } from "@payments/contracts/statuses";
import { parseDurationSeconds, parsePositiveAmount, parseRequiredText } from "../arguments.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { operatorName } from "../operator.js";
import { formatMoney, formatTime, messageJson, yesNo, type Output } from "../output.js";
import { pagingHelp, pagingOptions, printListing, type PagingOptions } from "../paging.js";
import { depositStatusLabel, printDeposit } from "./deposit.js";

/** ListUnmatchedTransfers takes 1..500; 0 means 100. */
export const UNMATCHED_MAX = 500;
const UNMATCHED_DEFAULT = 100;

/** Statement formats ImportStatement reads: MT940, ISO 20022 camt.053 statements and camt.054 notifications. */
export const STATEMENT_FORMATS = ["mt940", "camt053", "camt054"] as const;

/** mt940, camt053 or camt054 (any case, "camt.053" too); anything else is a usage error before any call. */
export function parseStatementFormat(value: string): string {
  const text = value.trim().toLowerCase().replace(/^camt\.(05[34])$/, "camt$1");
  if (!(STATEMENT_FORMATS as readonly string[]).includes(text)) throw new InvalidArgumentError(`expected one of ${STATEMENT_FORMATS.join(", ")}.`);
  return text;
}

/**
 * How long `transfer import` waits for the service: a statement is imported in one
 * transaction, which for a bank's busiest day takes longer than the CLI's usual deadline.
 * The import is all or nothing, so an import cut short by the deadline may be run again.
 */
export const IMPORT_TIMEOUT_SECONDS = 15 * 60;

export function transferStatusLabel(transfer: IncomingTransfer): string {
  // UNSPECIFIED: a service from before statuses; a transfer either paid a deposit or did not.
  return transferStatusFromProto(transfer.status) ?? (transfer.depositId ? "matched" : "unmatched");
}

/** Whole seconds since the transfer was reported (0 when it has no time or is in the future). */
export function transferAgeSeconds(transfer: IncomingTransfer, nowMs = Date.now()): number {
  if (!transfer.reportedAt) return 0;
  return Math.max(0, Math.floor((nowMs - timestampDate(transfer.reportedAt).getTime()) / 1000));
}

/** "45s", "12m 5s", "3h 12m", "2d 4h": the two largest units. */
export function formatAge(seconds: number): string {
  const units: Array<[string, number]> = [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ];
  let rest = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
    if (parts.length === 2) break;
  }
  return parts.length === 0 ? "0s" : parts.join(" ");
}

function formatScore(score: number): string {
  return score.toFixed(2);
}

function candidateLabel(c: TransferCandidate): string {
  return `${c.depositId} ${formatScore(c.score)}${c.reasons.length > 0 ? ` (${c.reasons.join("; ")})` : ""}`;
}

/** "reference 1.00 — reference exact; amount exact" */
function matchLabel(by: string, score: number, reasons: readonly string[]): string {
  return `${by} ${formatScore(score)}${reasons.length > 0 ? ` — ${reasons.join("; ")}` : ""}`;
}

/** The WHY column of `transfer unmatched`: the reason, and for review what it waits on. */
function openReason(t: IncomingTransfer): string {
  const why = t.unmatchedReason || "—";
  if (t.status !== TransferStatus.REVIEW) return why;
  if (t.reviewDepositId) return `${why}; waits on deposit ${t.reviewDepositId}`;
  if (t.candidates.length > 0) return `${why}; candidates: ${t.candidates.slice(0, 3).map((c) => `${c.depositId} ${formatScore(c.score)}`).join(", ")}`;
  return why;
}

function printTransfer(out: Output, transfer: IncomingTransfer): void {
  const fields: Array<[string, string]> = [
    ["id", transfer.id],
    ["status", transferStatusLabel(transfer)],
    ["IBAN", transfer.iban],
    ["amount", formatMoney(transfer.amount, transfer.currency)],
    ["sender", transfer.senderName],
  ];
  if (transfer.senderIban) fields.push(["sender IBAN", transfer.senderIban]);
  fields.push(["description", transfer.reference || "(empty)"], ["bank transaction id", transfer.bankTransactionId]);
  if (transfer.valueDate) fields.push(["value date", transfer.valueDate]);
  if (transfer.source) fields.push(["source", transfer.source]);
  fields.push(["reported", formatTime(transfer.reportedAt)]);
  // Who reported it: the bank integration, feed or directory, or the person and their workload (issue 32).
  if (transfer.reportedBy) fields.push(["reported by", transfer.reportedBy]);
  if (transfer.depositId) fields.push(["deposit", transfer.depositId]);
  else if (transfer.status === TransferStatus.REVIEW) fields.push(["in review", transfer.unmatchedReason || "yes"]);
  else fields.push(["unmatched", transfer.unmatchedReason || "yes"]);
  if (transfer.reviewDepositId) fields.push(["waits on deposit", transfer.reviewDepositId]);
  if (transfer.matchBy) fields.push(["matched by", matchLabel(transfer.matchBy, transfer.matchScore, transfer.matchReasons)]);
  transfer.candidates.forEach((c, i) => fields.push([i === 0 ? "candidates" : "", `${i + 1}. ${candidateLabel(c)}`]));
  if (transfer.late) fields.push(["late", yesNo(true) + " (it matched an expired deposit)"]);
  if (transfer.resolution || transfer.resolvedBy) {
    fields.push(["resolution", `${transfer.resolution || "—"} by ${transfer.resolvedBy || "—"} at ${formatTime(transfer.resolvedAt)}`]);
  }
  out.fields(fields);
}

function requiredTransfer(transfer: IncomingTransfer | undefined): IncomingTransfer {
  if (!transfer) throw new Error("the service returned no transfer");
  return transfer;
}

type Decision = ResolveTransferRequest["decision"];

export function registerTransferCommands(program: Command, ctx: CommandContext): void {
  const transfer = program.command("transfer").description("incoming bank transfers on the receiving accounts: report or import them, list the open ones, show one, and resolve it (match, complete, refuse, return)");

  transfer
    .command("report")
    .description("report an incoming transfer seen on a receiving account: it completes the pending deposit it matches, or is kept as unmatched")
    .requiredOption("--iban <iban>", "the receiving account's IBAN (spaces and case are ignored)")
    .requiredOption("--amount <kuruş>", "the amount received, whole kuruş", parsePositiveAmount)
    .option("--sender <name>", "the sender's name as the bank shows it (leave it out when the bank names nobody)", parseRequiredText)
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
    .action(async (opts: { iban: string; amount: bigint; sender?: string; reference?: string; bankTxId: string; currency?: string }, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const res = await deposits.reportTransfer({
        iban: opts.iban,
        amount: opts.amount,
        currency: opts.currency ?? "",
        senderName: opts.sender ?? "",
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

  pagingOptions(
    transfer
      .command("unmatched")
      .description("the open transfers an operator still has to resolve (unmatched and in review), oldest first, with their age, a page at a time or --all")
      .option("--older-than <duration>", "only those reported at least this long ago: 24h, 90m, 1h30m, 2d, or seconds", parseDurationSeconds)
      .option("--review", "only the review queue: the transfers in review (not the unmatched ones)"),
    UNMATCHED_MAX,
    UNMATCHED_DEFAULT,
  )
    .addHelpText(
      "after",
      `
STATUS is unmatched (no deposit: the money is in suspense) or review (waiting for an operator:
ambiguous, or under-, over- or late paid); AGE is now minus reported. For review, WHY also names
the deposit it waits on or the top candidates. Resolve one with \`transfer match|complete|refuse|return\`.
Give the same --older-than and --review with --cursor as on the page that printed it.${pagingHelp("transfers")}
Each transfer is proto JSON plus "ageSeconds", its age in whole seconds when the CLI printed it.`,
    )
    .action(async (opts: { olderThan?: number; review?: boolean } & PagingOptions, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const queue = opts.review === true ? "transfers in review" : "open transfers";
      await printListing(out, opts, {
        fetch: async (cursor, limit) => {
          const res = await deposits.listUnmatchedTransfers({
            limit,
            includeReview: true,
            reviewOnly: opts.review === true,
            olderThanMs: BigInt(opts.olderThan ?? 0) * 1000n,
            cursor,
          });
          return { items: res.transfers, nextCursor: res.nextCursor };
        },
        json: (transfers, nextCursor) => {
          const now = Date.now();
          out.data({ transfers: transfers.map((t) => ({ ...messageJson(IncomingTransferSchema, t), ageSeconds: transferAgeSeconds(t, now) })), nextCursor });
        },
        headers: ["ID", "STATUS", "AGE", "REPORTED", "IBAN", "AMOUNT", "SENDER", "DESCRIPTION", "BANK TX ID", "WHY"],
        row: (t) => [
          t.id,
          transferStatusLabel(t),
          formatAge(transferAgeSeconds(t)),
          formatTime(t.reportedAt),
          t.iban,
          formatMoney(t.amount, t.currency),
          t.senderName,
          t.reference || "—",
          t.bankTransactionId,
          openReason(t),
        ],
        empty: opts.olderThan === undefined ? `No ${queue}.` : `No ${queue} that old.`,
        more: `More ${queue}`,
        max: UNMATCHED_MAX,
      });
    });

  transfer
    .command("show")
    .description("one transfer: status, how it matched (or the ranked candidates), late, value date, sender IBAN, source, resolution and every action")
    .argument("<transfer-id>", "the transfer's id (trf_…)")
    .action(async (id: string, _opts: object, cmd: Command) => {
      const { out, deposits } = ctx.session(cmd);
      const res = await deposits.getTransfer({ transferId: id });
      if (out.json) return out.message(GetTransferResponseSchema, res);
      const shown = requiredTransfer(res.transfer);
      printTransfer(out, shown);
      out.line();
      out.line("Actions:");
      out.table(
        ["AT", "ACTION", "ACTOR", "DEPOSIT", "REASON"],
        shown.actions.map((a) => [formatTime(a.at), a.action, a.actor || "—", a.depositId || "—", a.reason || "—"]),
        "  (none)",
      );
    });

  const resolveHelp = `
--actor defaults to the PAYMENTS_OPERATOR environment variable, else the OS user name. The decision,
who and why are recorded on the transfer (see \`transfer show\`).
With --json, prints {"transfer":{…},"deposit":{…}} ("deposit" left out when none was completed).`;

  async function resolve(cmd: Command, transferId: string, opts: { reason: string; actor?: string }, decision: Decision): Promise<void> {
    const actor = operatorName(opts.actor, ctx.io.env);
    const { out, deposits } = ctx.session(cmd);
    const res = await deposits.resolveTransfer({ transferId, actor, reason: opts.reason, decision });
    if (out.json) return out.message(ResolveTransferResponseSchema, res);
    const resolved = requiredTransfer(res.transfer);
    const paid = res.deposit;
    out.line(
      paid
        ? `Transfer ${resolved.id} is ${transferStatusLabel(resolved)}: deposit ${paid.id} (reference ${paid.reference}) is now ${depositStatusLabel(paid.status)} with ${formatMoney(paid.amount, paid.currency)}${paid.latePayment ? " (late payment)" : ""}.`
        : `Transfer ${resolved.id} is ${transferStatusLabel(resolved)}.`,
    );
    out.line();
    out.line("Transfer:");
    printTransfer(out, resolved);
    if (paid) {
      out.line();
      out.line("Deposit:");
      printDeposit(out, paid);
    }
  }

  const reasonOption = ["--reason <text>", "why (required; recorded with the decision)"] as const;
  const actorOption = ["--actor <name>", "who decides (default: $PAYMENTS_OPERATOR, else the OS user name)"] as const;

  transfer
    .command("match")
    .description("give an unmatched or in-review transfer to a deposit (pending, or expired: a late payment), completing it")
    .argument("<transfer-id>", "the transfer's id (trf_…)")
    .argument("<deposit-id>", "the deposit it pays (dep_…)")
    .requiredOption(...reasonOption, parseRequiredText)
    .option(...actorOption, parseRequiredText)
    .addHelpText("after", resolveHelp)
    .action((transferId: string, depositId: string, opts: { reason: string; actor?: string }, cmd: Command) =>
      resolve(cmd, transferId, opts, { case: "matchDepositId", value: depositId.trim() }),
    );

  transfer
    .command("complete")
    .description("complete the deposit an in-review transfer is attached to (under-, over- or late payment)")
    .argument("<transfer-id>", "the transfer's id (trf_…)")
    .requiredOption(...reasonOption, parseRequiredText)
    .option(...actorOption, parseRequiredText)
    .addHelpText("after", resolveHelp)
    .action((transferId: string, opts: { reason: string; actor?: string }, cmd: Command) => resolve(cmd, transferId, opts, { case: "complete", value: true }));

  transfer
    .command("refuse")
    .description("do not apply an in-review transfer to its deposit: it becomes unmatched, its money stays in suspense")
    .argument("<transfer-id>", "the transfer's id (trf_…)")
    .requiredOption(...reasonOption, parseRequiredText)
    .option(...actorOption, parseRequiredText)
    .addHelpText("after", resolveHelp)
    .action((transferId: string, opts: { reason: string; actor?: string }, cmd: Command) => resolve(cmd, transferId, opts, { case: "refuse", value: true }));

  transfer
    .command("return")
    .description("pay an unmatched or in-review transfer back to its sender (through the payout service: see `transfer-return list`)")
    .argument("<transfer-id>", "the transfer's id (trf_…)")
    .option("--iban <sender-iban>", "the IBAN to pay back to (default: the sender's IBAN the bank reported)", parseRequiredText)
    .option("--name <recipient-name>", "the recipient's name for the return (default: the sender name the bank reported; required when it named nobody)", parseRequiredText)
    .requiredOption(...reasonOption, parseRequiredText)
    .option(...actorOption, parseRequiredText)
    .addHelpText("after", resolveHelp)
    .action((transferId: string, opts: { reason: string; actor?: string; iban?: string; name?: string }, cmd: Command) =>
      resolve(cmd, transferId, opts, { case: "return", value: create(ReturnDecisionSchema, { iban: opts.iban ?? "", recipientName: opts.name ?? "" }) }),
    );

  transfer
    .command("import")
    .description("import a bank statement, all or nothing: every credit is recorded as a transfer, once (a repeated bank transaction id changes nothing)")
    .requiredOption("--format <format>", `the statement's format: ${STATEMENT_FORMATS.join("|")}`, parseStatementFormat)
    .requiredOption("--file <path>", "the statement file")
    .option("--timeout <duration>", `how long to wait for the import (default ${IMPORT_TIMEOUT_SECONDS / 60}m)`, parseDurationSeconds)
    .addHelpText(
      "after",
      `
The whole file is imported in one transaction: it is recorded completely or not at all, so a
failed or cut-short import is simply run again (what was recorded counts as duplicates). A
statement of an account that is not one of our receiving accounts refuses the whole file.

With --json, prints {"imported":n,"matched":n,"unmatched":n,"duplicates":n,"review":n,"returned":n,"skipped":["…"]}
(the first four keys always in that order; returned: late payments the merchant's rule sent
straight back; skipped: the lines left out, each with why).`,
    )
    .action(async (opts: { format: string; file: string; timeout?: number }, cmd: Command) => {
      const timeoutMs = (opts.timeout ?? IMPORT_TIMEOUT_SECONDS) * 1000;
      if (timeoutMs === 0) throw new UsageError("--timeout must be longer than 0s");
      let content: Uint8Array;
      try {
        content = await readFile(opts.file);
      } catch (err) {
        throw new UsageError(`cannot read ${opts.file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      const { out, deposits } = ctx.session(cmd);
      const res = await deposits.importStatement({ format: opts.format, content, fileName: basename(opts.file) }, { timeoutMs });
      if (out.json) {
        return out.data({ imported: res.imported, matched: res.matched, unmatched: res.unmatched, duplicates: res.duplicates, review: res.review, returned: res.returned, skipped: res.skipped });
      }
      out.line(`Imported ${opts.file}: ${res.imported} new transfer(s).`);
      out.fields([
        ["imported", String(res.imported)],
        ["matched", String(res.matched)],
        ["unmatched", String(res.unmatched)],
        ["review", String(res.review)],
        ["returned by the merchant's rule", String(res.returned)],
        ["duplicates", String(res.duplicates)],
        ["skipped", String(res.skipped.length)],
      ]);
      if (res.skipped.length > 0) {
        out.line();
        out.line("Skipped:");
        for (const why of res.skipped) out.line(`  ${why}`);
      }
      if (res.unmatched + res.review > 0) out.line("\nOpen transfers: `pnpm cli transfer unmatched`.");
    });
}
