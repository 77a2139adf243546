import { Code } from "@connectrpc/connect";
import { serviceError, validationError } from "@payments/kit";
import type { DepositContext } from "./context.js";
import { BankFeedError, mt940Adapter, type BankFeedAdapter, type IncomingTransferRecord, type SkippedEntry } from "./bank-feed/index.js";
import { recordTransfer, type TransferOutcome } from "./transfers.js";

/** The statement formats ImportStatement reads. */
export const STATEMENT_FORMATS: Readonly<Record<string, BankFeedAdapter>> = { mt940: mt940Adapter };

/** What a batch of transfers did: recorded (matched, unmatched, in review) or already recorded. */
export interface TransferCounts {
  imported: number;
  matched: number;
  unmatched: number;
  review: number;
  duplicates: number;
}

export interface ImportCounts extends TransferCounts {
  skipped: string[];
}

/** Counts one transfer of a batch; `undefined` (or a duplicate outcome) is one already recorded. */
export function countTransfer(counts: TransferCounts, outcome: Pick<TransferOutcome, "transfer" | "duplicate"> | undefined): void {
  if (!outcome || outcome.duplicate) {
    counts.duplicates++;
    return;
  }
  counts.imported++;
  if (outcome.transfer.status === "matched") counts.matched++;
  else if (outcome.transfer.status === "review") counts.review++;
  else counts.unmatched++;
}

/** The record as the service reports a transfer: the statement's free text is the description it matches on. */
export function reportOf(record: IncomingTransferRecord, source: string) {
  return {
    iban: record.receivingIban,
    amount: record.amount,
    currency: record.currency,
    senderName: record.senderName.slice(0, 200),
    reference: record.description.slice(0, 500),
    bankTransactionId: record.bankTransactionId,
    valueDate: record.valueDate,
    senderIban: record.senderIban,
    source,
  };
}

function skippedLine(entry: SkippedEntry): string {
  return `${entry.entry}${entry.line ? ` (line ${entry.line})` : ""}: ${entry.reason}`;
}

/**
 * Parses a whole statement (a malformed one is refused before anything is recorded) and
 * reports each credit through recordTransfer, the one path every transfer takes: a bank
 * transaction id already recorded on that account counts as a duplicate and changes nothing,
 * so importing the same file twice, or two files of one split statement, has each
 * transaction's effect once.
 */
export async function importStatement(ctx: DepositContext, format: string, content: Uint8Array, fileName = ""): Promise<ImportCounts> {
  const adapter = STATEMENT_FORMATS[format.toLowerCase()];
  if (!adapter) throw validationError("format", `format: must be one of ${Object.keys(STATEMENT_FORMATS).join(", ")}`);
  if (content.length === 0) throw validationError("content", "content: the statement is empty");
  let parsed;
  try {
    parsed = adapter.parse(content);
  } catch (err) {
    if (err instanceof BankFeedError) throw serviceError(Code.InvalidArgument, "STATEMENT_INVALID", `${fileName || "the statement"}: ${err.issues.join("; ")}`);
    throw err;
  }
  const counts: ImportCounts = { imported: 0, matched: 0, unmatched: 0, review: 0, duplicates: 0, skipped: parsed.skipped.map(skippedLine) };
  for (const record of parsed.records) countTransfer(counts, await recordTransfer(ctx, reportOf(record, adapter.name)));
  ctx.logger.info({ fileName, format, ...counts, skipped: counts.skipped.length }, "statement imported");
  return counts;
}
