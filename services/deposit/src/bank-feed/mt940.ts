import { createHash } from "node:crypto";
import mt940js from "mt940js";
import { senderOf } from "./sender.js";
import { decimalToMinorUnits, isCalendarDate, minorUnitDigits, turkishIbanIn } from "./text.js";
import { BankFeedError, type BankFeedAdapter, type IncomingTransferRecord, type ParseResult, type SkippedEntry, type StatementInfo } from "./types.js";

export { joinWrapped, MT940_LINE_WIDTH, senderOf } from "./sender.js";

/**
 * MT940 customer statements, as Turkish banks deliver them under a corporate agreement, to
 * incoming transfer records. mt940js tokenises the file, groups statements and checks them
 * (mandatory :20: :25: :28C: :60a: :62a:, one currency, opening + lines = closing); this
 * module then re-reads each :61: from its raw text, so amounts are exact integers and value
 * dates plain strings, never floats or time-zone-shifted Dates.
 *
 * Decisions, and why:
 * - Only plain credits (C) become records. Debits (D), reversals of credits (RC: money taken
 *   back) and reversals of debits (RD: our own payment returned) are listed in `skipped` with
 *   the reason: none of them is a customer paying a deposit, and an RC deserves an operator's
 *   look at the credit it reverses.
 * - Every statement is reported in `statements`, with `receivingIban` when :25: names a
 *   Turkish IBAN (plain, grouped, or with a prefix/suffix such as a currency). A statement of
 *   any other account yields neither records nor skipped entries: whether a file naming an
 *   account that is not ours may be imported at all is the importer's decision (it refuses
 *   the whole file, naming that account), not something to bury in a list of skipped lines.
 * - A file that is not well-formed MT940 (a tag that does not parse, a missing mandatory
 *   tag, balances that do not add up, a date or amount that is not one) is refused as a whole
 *   with BankFeedError: importing half of a damaged statement would look complete.
 * - Currency: the statement's, from :60F:/:60M: (MT940 lines carry none of their own).
 *   Amounts are converted by string arithmetic to the currency's smallest unit.
 * - bankTransactionId: the bank reference (after // in :61:) when there is one, unchanged.
 *   Otherwise a derived id (derivedTransactionId) from the statement (:20:, :28C:), the
 *   account, value date, amount, currency, the line's position and its customer reference.
 *   A customer reference is never the id on its own: it is the account owner's (or the
 *   payer's) text, not the bank's, and banks repeat it across days ("00000000", an invoice
 *   number), so a second day's transfer would be taken for a duplicate and never recorded.
 * - description: :86: with its lines joined (see joinWrapped); sender name and IBAN from
 *   structured subfields when the bank uses them, else from the sender's fields, the :61:
 *   supplementary details or the first :86: line (see senderOf in sender.ts).
 */

/**
 * A :61: line's subfields, the same grammar mt940js applies (SWIFT: 6!n[4!n]2a[1!a]15d1!a3!c16x[//16x][34x]).
 * The supplementary details are taken whole, every line of them: banks that put the sender's
 * name there do not all keep to 34 characters.
 */
const STATEMENT_LINE = /^(\d{2})(\d{2})(\d{2})(?:\d{4})?(R?[DC])([A-Z])?([0-9,]{0,16})([A-Z][A-Z0-9]{3})([^/\n]{0,16})(?:\/\/(.{0,16}))?(?:\n([\s\S]*))?/;

/** The deterministic ids this adapter makes, so they are told apart from a bank's own references. */
export const DERIVED_ID_PREFIX = "MT940-";

export const mt940Adapter: BankFeedAdapter<string | Uint8Array> = {
  name: "mt940",
  parse: parseMt940,
};

/**
 * Statement text from the bytes a bank delivered: UTF-8 when the bytes are valid UTF-8
 * (with or without BOM), else Windows-1254 (Turkish; a superset of ISO-8859-9 for text).
 * A Windows-1254 file with Turkish letters is practically never valid UTF-8 (Ş is 0xDE, a
 * lead byte that needs a continuation byte no Turkish letter supplies), so the check decides.
 */
export function decodeStatement(input: string | Uint8Array): string {
  if (typeof input === "string") return input.replace(/^\uFEFF/, "");
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(input);
  } catch {
    return new TextDecoder("windows-1254").decode(input);
  }
}

/** Parses one MT940 file (one or more statements). Throws BankFeedError when it is not well-formed MT940. */
export function parseMt940(input: string | Uint8Array): ParseResult {
  const text = decodeStatement(input).replace(/\r\n?/g, "\n");
  const lines = text.split("\n");
  checkStart(lines);

  let statements: ReturnType<InstanceType<typeof mt940js.Parser>["parse"]>;
  try {
    statements = new mt940js.Parser().parse(text, true);
  } catch (err) {
    throw new BankFeedError(`MT940: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (statements.length === 0) throw new BankFeedError("MT940: no statement found (expected :20:, :25:, :28C:, :60F:, :61:…, :62F:)");

  // Line numbers for messages: mt940js keeps tags in file order, and a line starting ":61:" is always a :61: tag.
  const statementLineNumbers = lines.flatMap((line, i) => (line.startsWith(":61:") ? [i + 1] : []));
  const referenceLineNumbers = lines.flatMap((line, i) => (line.startsWith(":20:") ? [i + 1] : []));
  let lineCursor = 0;

  const records: IncomingTransferRecord[] = [];
  const skipped: SkippedEntry[] = [];
  const infos: StatementInfo[] = [];
  statements.forEach((statement, s) => {
    const tags61 = (statement.tags ?? []).filter((tag) => tag.id === 61);
    if (tags61.length !== statement.transactions.length) throw new BankFeedError(`MT940: statement ${s + 1}: could not pair :61: lines with transactions`);
    const number = [statement.number.statement, statement.number.sequence, statement.number.section].filter(Boolean).join("/");
    const label = `statement ${s + 1} (:20: ${statement.transactionReference.trim()}, :28C: ${number})`;
    const firstLine = lineCursor;
    lineCursor += tags61.length;

    const receivingIban = turkishIbanIn(statement.accountIdentification);
    infos.push({ label, account: statement.accountIdentification.trim(), line: referenceLineNumbers[s], ...(receivingIban ? { receivingIban } : {}) });
    // Reported in `statements` without receivingIban; the importer refuses the file for it.
    if (!receivingIban) return;
    const currency = statement.currency;
    const digits = minorUnitDigits(currency);

    const lines61 = tags61.map((tag, i) => readStatementLine(tag.data, statementLineNumbers[firstLine + i]));

    lines61.forEach((line, i) => {
      const where = { entry: `${label}, :61: #${i + 1}`, line: line.lineNumber };
      const transaction = statement.transactions[i]!;
      const amount = decimalToMinorUnits(line.amountText, digits);
      if (amount === undefined) throw new BankFeedError(`MT940: line ${line.lineNumber ?? "?"}: :61: amount "${line.amountText}" is not an amount in ${currency}`);

      if (line.mark !== "C") {
        skipped.push({ ...where, reason: SKIP_REASONS[line.mark] });
        return;
      }
      if (amount === 0) {
        skipped.push({ ...where, reason: "zero amount: nothing was paid" });
        return;
      }

      const bankTransactionId =
        line.bankReference ||
        derivedTransactionId({
          statementReference: statement.transactionReference,
          receivingIban,
          statementNumber: number,
          valueDate: line.valueDate,
          amount,
          currency,
          index: i,
          customerReference: line.customerReference,
        });

      const details = transaction.details || line.supplementary;
      const sender = senderOf(details, transaction.structuredDetails, receivingIban, line.supplementary);
      const record: IncomingTransferRecord = {
        receivingIban,
        amount,
        currency,
        valueDate: line.valueDate,
        senderName: sender.name,
        description: sender.description,
        bankTransactionId,
      };
      if (sender.iban) record.senderIban = sender.iban;
      records.push(record);
    });
  });
  return { records, skipped, statements: infos };
}

const SKIP_REASONS: Record<Exclude<StatementLine["mark"], "C">, string> = {
  D: "debit (money out of the account): only credits are imported",
  RC: "reversal of an earlier credit (money taken back): not imported; an operator should check the credit it reverses",
  RD: "reversal of a debit (a payment of ours returned): not a customer's transfer, not imported",
};

interface StatementLine {
  lineNumber: number | undefined;
  valueDate: string;
  mark: "C" | "D" | "RC" | "RD";
  amountText: string;
  customerReference: string;
  bankReference: string;
  supplementary: string;
}

function readStatementLine(data: string, lineNumber: number | undefined): StatementLine {
  const at = `MT940: line ${lineNumber ?? "?"}: :61:`;
  const match = STATEMENT_LINE.exec(data);
  if (!match) throw new BankFeedError(`${at} "${data.split("\n")[0]}" does not parse`);
  const valueDate = `20${match[1]}-${match[2]}-${match[3]}`;
  if (!isCalendarDate(valueDate)) throw new BankFeedError(`${at} value date ${match[1]}${match[2]}${match[3]} is not a date (YYMMDD)`);
  const customerReference = (match[8] ?? "").trim();
  return {
    lineNumber,
    valueDate,
    mark: match[4] as StatementLine["mark"],
    amountText: match[6] ?? "",
    customerReference: customerReference.toUpperCase() === "NONREF" ? "" : customerReference,
    bankReference: (match[9] ?? "").trim(),
    supplementary: (match[10] ?? "").split("\n").map((part) => part.trim()).filter(Boolean).join(" "),
  };
}

/**
 * The first tag must open a statement: :20:, or a SWIFT header block ({1:…}). mt940js would
 * otherwise fail on a null group with a TypeError nobody can act on.
 */
function checkStart(lines: readonly string[]): void {
  const index = lines.findIndex((line) => line.trim() !== "");
  if (index === -1) throw new BankFeedError("MT940: the file is empty");
  const first = lines[index]!;
  if (!first.startsWith(":20:") && !first.startsWith("{")) {
    throw new BankFeedError(`MT940: line ${index + 1}: a statement must start with :20: (or a {1:…} header block), found "${first.slice(0, 40)}"`);
  }
}

/**
 * The id of a statement line that carries no bank reference: a hash of the statement
 * reference (:20:), the account, the statement/page number (:28C:), value date, amount,
 * currency, the line's position in its page and the line's customer reference (when it has
 * one). Only the very same line of the very same statement gets the same id: a re-import of
 * the file is a no-op through recordTransfer's (iban, id) key, while the same customer
 * reference on another day's statement, or on the other half of a split statement (another
 * :28C:, lines numbered from 1 again), gives another id. A line without a customer reference
 * hashes exactly as before customer references were part of the key, so ids already
 * recorded for such lines stay valid. The limit: the same transactions delivered paginated
 * differently (or an intraday statement later re-sent with lines inserted before them) get
 * different ids; banks that give references (after //) never reach this.
 */
export function derivedTransactionId(input: {
  statementReference: string;
  receivingIban: string;
  statementNumber: string;
  valueDate: string;
  amount: number;
  currency: string;
  index: number;
  customerReference?: string;
}): string {
  const parts = ["mt940", input.statementReference.trim(), input.receivingIban, input.statementNumber, input.valueDate, String(input.amount), input.currency, String(input.index)];
  const customerReference = input.customerReference?.trim() ?? "";
  if (customerReference) parts.push(customerReference);
  return DERIVED_ID_PREFIX + createHash("sha256").update(parts.join("\u001F")).digest("hex").slice(0, 32);
}
