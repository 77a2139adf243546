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
  /**
   * Ids an earlier version of the adapter gave this very line, so a file imported before a
   * change of the id rule is still a duplicate when imported again: an existing transfer under
   * one of them is the same line only with the same amount and value date.
   */
  formerIds?: string[];
}

/** An entry the adapter read and deliberately did not turn into a record (a debit, an account not ours, …). */
export interface SkippedEntry {
  /** Which entry, in words an operator can find in the file: "statement STMT1 (28C 00042/001), :61: #2". */
  entry: string;
  /** 1-based line in the input where the entry starts, when the format has lines. */
  line?: number;
  reason: string;
}

/**
 * One statement (one account's report) found in the input, whatever it held. The importer
 * checks every one against our receiving accounts and refuses the whole input when one is
 * not ours, naming it by `label` and `account`.
 */
export interface StatementInfo {
  /** In words an operator can find in the file: "statement 2 (:20: STMT1, :28C: 00042/001)". */
  label: string;
  /** The account as the statement names it (MT940 :25:, camt Acct/Id), trimmed. */
  account: string;
  /** That account as a valid Turkish IBAN in electronic form; undefined when it is not one. */
  receivingIban?: string;
  /** 1-based line where the statement starts, when the format has lines. */
  line?: number;
}

export interface ParseResult {
  records: IncomingTransferRecord[];
  skipped: SkippedEntry[];
  /** Every statement of the input, in order (a push feed body has none: its records name their accounts). */
  statements: StatementInfo[];
}

/**
 * Whether a file dropped in BANK_FEED_DIR has been written to its end: its last statement is
 * closed (MT940: a closing balance :62F:/:62M: and the `-` that ends the message; camt: the
 * document's closing tag). A file that is not complete is left for a later pass, not refused.
 */
export type Completeness = { complete: true } | { complete: false; reason: string };

/**
 * One feed format. `parse` either reads the whole input (records and, for entries it chose
 * not to import, `skipped` with a reason) or throws BankFeedError: an input that is not
 * well-formed is refused as a whole, never half-imported.
 */
export interface BankFeedAdapter<Input = string | Uint8Array> {
  /** Short, stable name: the transfer's `source` is derived from it (mt940, feed:…). */
  readonly name: string;
  parse(input: Input): ParseResult;
  /** For file formats: whether the input has been written to its end (see Completeness). */
  completeness?(input: Uint8Array): Completeness;
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
