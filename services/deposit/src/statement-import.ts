import { Code } from "@connectrpc/connect";
import { serviceError, validationError } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { BankFeedError, camt053Adapter, camt054Adapter, mt940Adapter, type BankFeedAdapter, type IncomingTransferRecord, type ParseResult, type SkippedEntry } from "./bank-feed/index.js";
import { recordTransfers, type RecordedTransfer } from "./transfers.js";

/** The statement formats ImportStatement reads: MT940, and ISO 20022 camt.053 statements and camt.054 notifications. */
export const STATEMENT_FORMATS: Readonly<Record<string, BankFeedAdapter>> = { mt940: mt940Adapter, camt053: camt053Adapter, camt054: camt054Adapter };

/** What a batch of transfers did: recorded (matched, unmatched, in review, returned by a rule) or already recorded. */
export interface TransferCounts {
  imported: number;
  matched: number;
  unmatched: number;
  review: number;
  /** Late payments the merchant's rule sent straight back (returning). */
  returned: number;
  duplicates: number;
}

export interface ImportCounts extends TransferCounts {
  skipped: string[];
}

/** Counts one transfer of a batch; `undefined` is one already recorded (a duplicate). */
export function countTransfer(counts: TransferCounts, outcome: RecordedTransfer | undefined): void {
  if (!outcome) {
    counts.duplicates++;
    return;
  }
  counts.imported++;
  const status = outcome.transfer.status;
  if (status === "matched") counts.matched++;
  else if (status === "review") counts.review++;
  else if (status === "returning") counts.returned++;
  else counts.unmatched++;
}

/** The record as the service reports a transfer: the statement's free text is the description it matches on; `reportedBy` says who brought it. */
export function reportOf(record: IncomingTransferRecord, source: string, reportedBy: string) {
  return {
    iban: record.receivingIban,
    amount: record.amount,
    currency: record.currency,
    senderName: record.senderName.slice(0, 200),
    reference: record.description.slice(0, 500),
    bankTransactionId: record.bankTransactionId,
    valueDate: record.valueDate,
    senderIban: record.senderIban,
    ...(record.formerIds ? { formerIds: record.formerIds } : {}),
    source,
    reportedBy,
  };
}

function skippedLine(entry: SkippedEntry): string {
  return `${entry.entry}${entry.line ? ` (line ${entry.line})` : ""}: ${entry.reason}`;
}

/**
 * Every statement of the file must be of one of our receiving accounts (active or not: a
 * statement can arrive after an account was switched off). Money on an account we do not own
 * is not ours to record, let alone to credit: the whole file is refused, naming each such
 * account, and nothing is recorded. Asked once per file, before the transaction.
 */
async function requireOurAccounts(ctx: DepositContext, parsed: ParseResult, fileName: string): Promise<void> {
  if (parsed.statements.length === 0) return;
  const ours = new Set((await ctx.bankCatalog.listReceivingAccounts({})).accounts.map((a) => a.iban));
  const foreign = parsed.statements.filter((s) => !s.receivingIban || !ours.has(s.receivingIban));
  if (foreign.length === 0) return;
  const named = foreign.map((s) => `${s.label}${s.line ? ` (line ${s.line})` : ""}: account ${JSON.stringify(s.account)} is ${s.receivingIban ? "not one of our receiving accounts" : "not a Turkish IBAN"}`);
  throw serviceError(Code.InvalidArgument, "STATEMENT_INVALID", `${fileName || "the statement"}: ${named.join("; ")}; nothing was imported`, {
    details: { accounts: foreign.map((s) => s.receivingIban ?? s.account).join(",") },
  });
}

/**
 * Imports a whole statement file, all or nothing: it is parsed whole (a malformed one is
 * refused before anything is recorded), every statement's account must be ours, then every
 * credit is recorded in ONE transaction through recordTransfers, the path every transfer takes.
 * A bank transaction id already recorded on that account counts as a duplicate and changes
 * nothing, so importing the same file twice, or the two files of a split statement, has each
 * transaction's effect once, and a file whose import failed half-way is simply imported again.
 */
export async function importStatement(ctx: DepositContext, format: string, content: Uint8Array, fileName = "", importedBy = "deposit"): Promise<ImportCounts> {
  const adapter = STATEMENT_FORMATS[format.toLowerCase()];
  if (!adapter) throw validationError("format", `format: must be one of ${Object.keys(STATEMENT_FORMATS).join(", ")}`);
  if (content.length === 0) throw validationError("content", "content: the statement is empty");
  let parsed: ParseResult;
  try {
    parsed = adapter.parse(content);
  } catch (err) {
    if (err instanceof BankFeedError) throw serviceError(Code.InvalidArgument, "STATEMENT_INVALID", `${fileName || "the statement"}: ${err.issues.join("; ")}`);
    throw err;
  }
  await requireOurAccounts(ctx, parsed, fileName);
  const started = performance.now();
  const outcomes = await recordTransfers(
    ctx,
    parsed.records.map((record) => reportOf(record, adapter.name, fileName ? `${importedBy}, statement ${fileName}` : importedBy)),
  );
  const counts: ImportCounts = { imported: 0, matched: 0, unmatched: 0, review: 0, returned: 0, duplicates: 0, skipped: parsed.skipped.map(skippedLine) };
  for (const outcome of outcomes) countTransfer(counts, outcome);
  ctx.logger.info({ fileName, format, ...counts, skipped: counts.skipped.length, ms: Math.round(performance.now() - started) }, "statement imported");
  return counts;
}
