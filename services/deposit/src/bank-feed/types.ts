/**
 * What every bank feed turns into: one record per incoming transfer, in the shape the
 * deposit service records (see TransferReport in ../transfers.ts). Adapters are pure: they
 * read a file or a request body and say what it holds; recording, matching and
 * de-duplication by (receivingIban, bankTransactionId) happen later, in recordTransfer.
 */
export interface IncomingTransferRecord {
  /** The account the money arrived in: a Turkish IBAN in electronic form (TR + 24 digits, no spaces). */
  receivingIban: string;
  /** A positive integer in the currency's smallest unit (kuruş for TRY); never a float. */
  amount: number;
  /** ISO 4217 code, upper case (TRY, EUR, …). */
  currency: string;
  /** YYYY-MM-DD, the value date the bank gave. */
  valueDate: string;
  /** Who sent the money, as well as the feed tells it; "" when a statement line names no one. */
  senderName: string;
  /** The sender's IBAN in electronic form, when the feed gives (or reveals) one. */
  senderIban?: string;
  /** The transfer's free text as the bank gave it, lines joined; carries the payment reference. */
  description: string;
  /** The bank's id of this transaction, unique per receiving account; the de-duplication key. */
  bankTransactionId: string;
}

/** An entry the adapter read and deliberately did not turn into a record (a debit, an account not ours, …). */
export interface SkippedEntry {
  /** Which entry, in words an operator can find in the file: "statement STMT1 (28C 00042/001), :61: #2". */
  entry: string;
  /** 1-based line in the input where the entry starts, when the format has lines. */
  line?: number;
  reason: string;
}

export interface ParseResult {
  records: IncomingTransferRecord[];
  skipped: SkippedEntry[];
}

/**
 * One feed format. `parse` either reads the whole input (records and, for entries it chose
 * not to import, `skipped` with a reason) or throws BankFeedError: an input that is not
 * well-formed is refused as a whole, never half-imported.
 */
export interface BankFeedAdapter<Input = string | Uint8Array> {
  /** Short, stable name: the transfer's `source` is derived from it (mt940, feed:…). */
  readonly name: string;
  parse(input: Input): ParseResult;
}

/**
 * The input as a whole is refused (malformed file, invalid body). `issues` lists every
 * problem found, each a self-contained sentence naming where it is ("transfers[3].amount: …",
 * "line 12: …"); `message` is the first of them, or a summary.
 */
export class BankFeedError extends Error {
  override readonly name = "BankFeedError";
  readonly issues: readonly string[];

  constructor(message: string, issues: readonly string[] = [message]) {
    super(message);
    this.issues = issues;
  }
}
