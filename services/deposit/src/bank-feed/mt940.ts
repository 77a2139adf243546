import { createHash } from "node:crypto";
import mt940js from "mt940js";
import { senderOf } from "./sender.js";
import { decimalToMinorUnits, isCalendarDate, minorUnitDigits, turkishIbanIn } from "./text.js";
import { BankFeedError, type BankFeedAdapter, type Completeness, type IncomingTransferRecord, type ParseResult, type SkippedEntry, type StatementInfo } from "./types.js";

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
 * - completeness (for the drop directory): see mt940Completeness.
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
  completeness: mt940Completeness,
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
    // The id rule before issue 18 took a customer reference that was unique in its statement as
    // the id itself: kept as a former id, so a file imported then is still a duplicate now.
    const customerRefCounts = new Map<string, number>();
    for (const line of lines61) if (line.customerReference) customerRefCounts.set(line.customerReference, (customerRefCounts.get(line.customerReference) ?? 0) + 1);

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
      if (!line.bankReference && line.customerReference && customerRefCounts.get(line.customerReference) === 1) record.formerIds = [line.customerReference];
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

/** A tag line: ":20:", ":28C:", ":62F:", ":NS:". Other lines continue the tag above them. */
const TAG_LINE = /^:(\d{2}[A-Z]?|NS):/;

/** A whole balance, :60a:/:62a:/:64:/:65: (1!a6!n3!a15d): mark, date, currency, an amount with its decimal comma. */
const BALANCE = /^([CD])(\d{6})([A-Z]{3})(\d{1,14},\d{0,14})$/;

/** The line that ends a message: "-", or "-}" closing the SWIFT text block (a {5:…} trailer may follow on the line). */
const MESSAGE_END = /^-(?:\}(.*))?$/;

/**
 * Whether a dropped MT940 file has been written to its end, for the drop directory, which
 * imports a file only once it is complete (an incomplete one waits for a later pass). Reads the
 * end of the file only; whether the statements are well-formed is parse's business.
 *
 * Complete when the file's last statement (from its last :20:) is closed:
 * - it ends with the message-ending `-` (`-}` when the message is in a SWIFT envelope
 *   `{1:…}{2:…}{4:`), followed by nothing but blank lines and SWIFT trailer blocks `{5:…}` with
 *   their braces closed; CRLF or LF. Once the writer has put the `-`, the message is finished: a
 *   closing balance missing before it makes a malformed file, which parse refuses with its own
 *   reason. Calling it incomplete would leave it waiting in the directory for ever instead;
 * - or, when no statement of the file ends with `-` (a bank that never writes it), its closing
 *   balance :62F:/:62M: comes after its last :61: (and that line's :86:), followed by nothing
 *   but :64:/:65: balances, and each of these is whole: mark, date, currency, an amount with its
 *   decimal comma. Without a `-` that line is the only sign of the end, so a file ending in
 *   statement-level :86: text after the balance is taken for one still being written (it would
 *   wait for ever: such a bank must write the `-`). The limits of this rule: a one-statement file
 *   whose writer has not yet put its `-` reads as complete once its closing balance is whole,
 *   and a balance cut inside its decimals ("1500,0" of "1500,00") reads as whole. Both are
 *   harmless for the money: every entry line is written by then, and a cut that changes the
 *   amount fails parse's balance check, so the file is refused, never half-imported.
 * Incomplete, with the reason in words: an empty file; a header with no statement yet; a last
 * statement cut before or inside its closing balance; a closing balance without `-` when the
 * file's earlier statements end with `-`; an envelope `{4:` not yet closed by `-}`; text after
 * the last `-` with no :20: yet; a trailer block not yet closed.
 * Never throws. Text that is not MT940 at all cannot become a statement by growing, so it is
 * reported complete and parse refuses it. A file cut exactly after one of several statements'
 * `-` looks complete: only a writer that renames the file in when done (as BANK_FEED_DIR asks)
 * avoids that.
 */
export function mt940Completeness(input: Uint8Array): Completeness {
  try {
    return completenessOf(decodeStatement(input));
  } catch {
    return { complete: true };
  }
}

function completenessOf(text: string): Completeness {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === "") end--;
  if (end === 0) return { complete: false, reason: "the file is empty: nothing has been written yet" };

  const starts = lines.flatMap((line, i) => (i < end && line.startsWith(":20:") ? [i] : []));
  const lastStart = starts.at(-1);
  if (lastStart === undefined) {
    const first = lines.find((line) => line.trim() !== "")!.trim();
    return first.startsWith("{") || first.startsWith(":")
      ? { complete: false, reason: "no statement yet: the file holds a SWIFT header or the start of a tag, but no :20:" }
      : { complete: true };
  }
  const label = `statement ${starts.length} (:20: ${lines[lastStart]!.slice(4).trim()}, line ${lastStart + 1})`;

  // SWIFT trailer blocks after the message, on lines of their own.
  while (end > lastStart + 1 && lines[end - 1]!.trim().startsWith("{5:")) {
    const trailer = lines[end - 1]!.trim();
    if (!bracesClosed(trailer)) return { complete: false, reason: `the SWIFT trailer block at line ${end} is not closed yet ("${trailer.slice(0, 40)}")` };
    end--;
    while (end > lastStart + 1 && lines[end - 1]!.trim() === "") end--;
  }
  const last = lines[end - 1]!.trim();
  const ending = MESSAGE_END.exec(last);
  if (ending) {
    const trailer = ending[1];
    if (trailer === undefined && envelopeOpen(lines, lastStart)) {
      return { complete: false, reason: `${label} is in a SWIFT text block {4: that is not closed yet: line ${end} is "-", not yet "-}"` };
    }
    return bracesClosed(trailer ?? "") ? { complete: true } : { complete: false, reason: `the SWIFT trailer block at line ${end} is not closed yet ("${(trailer ?? "").slice(0, 40)}")` };
  }

  const endedAt = lines.slice(lastStart, end).findLastIndex((line) => MESSAGE_END.test(line.trim()));
  if (endedAt >= 0) {
    const next = lines.slice(lastStart + endedAt + 1, end).findIndex((line) => line.trim() !== "") + lastStart + endedAt + 1;
    return { complete: false, reason: `after the "-" that ends ${label} (line ${lastStart + endedAt + 1}), the file goes on at line ${next + 1} ("${lines[next]!.trim().slice(0, 30)}") with no :20: yet: the next statement is still being written` };
  }
  if (envelopeOpen(lines, lastStart)) {
    return { complete: false, reason: `${label} is in a SWIFT text block {4: that is not closed yet: no "-}" after it` };
  }

  // The last statement's tags, each with its lines, up to the end of the file.
  const tags: { id: string; line: number; data: string }[] = [];
  for (let i = lastStart; i < end; i++) {
    const tag = TAG_LINE.exec(lines[i]!);
    if (tag) tags.push({ id: tag[1]!, line: i + 1, data: lines[i]!.slice(tag[0].length) });
    else if (tags.length > 0) tags[tags.length - 1]!.data += `\n${lines[i]}`;
  }
  // A :86: after the last :61: is that line's details; the closing balance must come after both.
  const lastLine = tags.findLastIndex((tag) => tag.id === "61");
  const closing = tags.findLastIndex((tag) => /^62[FM]$/.test(tag.id));
  const earlierEnds = lines.slice(0, lastStart).some((line) => MESSAGE_END.test(line.trim()));

  if (closing === -1 || closing < lastLine) {
    const lastTag = tags.at(-1)!;
    return { complete: false, reason: `${label} is cut: it ends in its :${lastTag.id}: at line ${lastTag.line}, with no closing balance (:62F:/:62M:) after its last entry yet` };
  }
  const closingTag = tags[closing]!;
  if (!isWholeBalance(closingTag.data)) {
    return { complete: false, reason: `${label} is cut inside its closing balance at line ${closingTag.line} (":${closingTag.id}:${closingTag.data.split("\n")[0]!.slice(0, 30)}" is not yet mark, date, currency and amount)` };
  }
  if (earlierEnds) {
    return { complete: false, reason: `${label} has its closing balance (line ${closingTag.line}) but not yet the "-" that ends it, while the file's earlier statements end with "-"` };
  }
  const after = tags.slice(closing + 1);
  const notBalance = after.find((tag) => !/^6[45]$/.test(tag.id));
  if (notBalance) {
    return { complete: false, reason: `${label} ends in :${notBalance.id}: text at line ${notBalance.line} after its closing balance, with no "-": it may still be being written` };
  }
  const cut = after.find((tag) => !isWholeBalance(tag.data));
  if (cut) return { complete: false, reason: `${label} is cut inside its :${cut.id}: balance at line ${cut.line}` };
  return { complete: true };
}

/** Whether the message of the statement starting at `start` opened a SWIFT text block "{4:" (so it ends with "-}", not "-"). */
function envelopeOpen(lines: readonly string[], start: number): boolean {
  for (let i = start - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (MESSAGE_END.test(line)) return false;
    if (line.includes("{4:")) return true;
  }
  return false;
}

function isWholeBalance(data: string): boolean {
  const match = BALANCE.exec(data.trim());
  return match !== null && isCalendarDate(`20${match[2]!.slice(0, 2)}-${match[2]!.slice(2, 4)}-${match[2]!.slice(4, 6)}`);
}

/** Whether every "{" of the text has its "}" (a {5:{CHK:…}} trailer written to its end). */
function bracesClosed(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === "{") depth++;
    else if (char === "}" && --depth < 0) return false;
  }
  return depth === 0;
}
