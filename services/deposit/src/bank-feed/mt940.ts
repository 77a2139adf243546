import { createHash } from "node:crypto";
import mt940js from "mt940js";
import { cleanText, decimalToMinorUnits, DESCRIPTION_MAX, ibansInText, isCalendarDate, minorUnitDigits, normalizeIban, SENDER_NAME_MAX, turkishIbanIn } from "./text.js";
import { BankFeedError, type BankFeedAdapter, type IncomingTransferRecord, type ParseResult, type SkippedEntry, type StatementInfo } from "./types.js";

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
 * - :25: must name a Turkish IBAN (plain, grouped, or with a prefix/suffix such as a
 *   currency). A statement of any other account is skipped as a whole, with a reason, while
 *   the file's other statements are imported: the file is well-formed, that account is just
 *   not one deposits are paid into, and refusing the file would block the accounts that are.
 * - A file that is not well-formed MT940 (a tag that does not parse, a missing mandatory
 *   tag, balances that do not add up, a date or amount that is not one) is refused as a whole
 *   with BankFeedError: importing half of a damaged statement would look complete.
 * - Currency: the statement's, from :60F:/:60M: (MT940 lines carry none of their own).
 *   Amounts are converted by string arithmetic to the currency's smallest unit.
 * - bankTransactionId: the bank reference (after // in :61:) when present; else the
 *   account owner's reference, unless it is NONREF or repeats within the statement; else a
 *   derived id (see derivedTransactionId).
 * - description: :86: with its lines joined (see joinWrapped); sender name and IBAN from
 *   structured subfields when the bank uses them, else by heuristics (see senderOf).
 */

/** A :61: line's subfields, the same grammar mt940js applies (SWIFT: 6!n[4!n]2a[1!a]15d1!a3!c16x[//16x][34x]). */
const STATEMENT_LINE = /^(\d{2})(\d{2})(\d{2})(?:\d{4})?(R?[DC])([A-Z])?([0-9,]{0,16})([A-Z][A-Z0-9]{3})([^/\n]{0,16})(?:\/\/(.{0,16}))?(?:\n(.{0,34}))?/;

/** SWIFT's line width for :86: text: a line this long was cut by the bank, not ended by the writer. */
export const MT940_LINE_WIDTH = 65;

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
    if (!receivingIban) {
      skipped.push({
        entry: label,
        line: referenceLineNumbers[s],
        reason: `:25: "${statement.accountIdentification.trim()}" is not a Turkish IBAN: this account's ${tags61.length} ${tags61.length === 1 ? "entry was" : "entries were"} not imported`,
      });
      return;
    }
    const currency = statement.currency;
    const digits = minorUnitDigits(currency);

    const lines61 = tags61.map((tag, i) => readStatementLine(tag.data, statementLineNumbers[firstLine + i]));
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
        (line.customerReference && customerRefCounts.get(line.customerReference) === 1 ? line.customerReference : undefined) ||
        derivedTransactionId({ statementReference: statement.transactionReference, receivingIban, statementNumber: number, valueDate: line.valueDate, amount, currency, index: i });

      const details = transaction.details || line.supplementary;
      const sender = senderOf(details, transaction.structuredDetails, receivingIban);
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
    supplementary: (match[10] ?? "").trim(),
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
 * The id of a statement line that carries no reference of its own: a hash of the statement
 * reference (:20:), the account, the statement/page number (:28C:), value date, amount,
 * currency and the line's position in its page. Stable across re-imports of the same file
 * (same fields, same positions), so recordTransfer's (iban, id) key makes a second import a
 * no-op. :28C: keeps a statement split over two files apart: each page numbers its lines
 * from 1, and two pages never share a :28C:. The limit: the same transactions delivered
 * paginated differently (or an intraday statement later re-sent with lines inserted before
 * them) get different ids; banks that give references (after //) never reach this.
 */
export function derivedTransactionId(input: { statementReference: string; receivingIban: string; statementNumber: string; valueDate: string; amount: number; currency: string; index: number }): string {
  const key = ["mt940", input.statementReference.trim(), input.receivingIban, input.statementNumber, input.valueDate, String(input.amount), input.currency, String(input.index)].join("\u001F");
  return DERIVED_ID_PREFIX + createHash("sha256").update(key).digest("hex").slice(0, 32);
}

/**
 * :86: lines as the writer meant them: a line exactly `width` long was cut by the bank's
 * line limit (possibly inside a word, or inside a reference such as "AB-CD 2345"), so the
 * next line continues it with nothing in between; a shorter line ended where the writer
 * ended it, so a space goes in between. Returns the logical lines.
 */
export function joinWrapped(lines: readonly string[], width = MT940_LINE_WIDTH): string[] {
  const logical: string[] = [];
  let previous: string | undefined;
  for (const line of lines) {
    if (previous !== undefined && previous.length === width && !/\s$/.test(previous) && !/^\s/.test(line) && logical.length > 0) {
      logical[logical.length - 1] += line;
    } else {
      logical.push(line);
    }
    previous = line;
  }
  return logical.map((line) => line.trim()).filter((line) => line !== "");
}

/** Transfer-type labels Turkish banks put before the sender's name in :86: ("GELEN EFT", "FAST", "GÖNDEREN:"). */
const LEADING_LABEL = /^(?:(?:GELEN\s+)?(?:EFT|HAVALE|FAST)(?:\s+GELEN)?|GELEN|GÖNDEREN|GONDEREN)\b[\s\-:/]*/iu;

/**
 * Who sent a transfer, and its description, from :86:.
 * - Structured `?20…`/`>20…` (the German-style layout some banks use): description from the
 *   purpose subfields ?20–?29 and ?60–?63, name from ?32+?33, IBAN from ?31.
 * - Structured `/TAG/…`: name from /NAME/ or /ORDP/, IBAN from /IBAN/ or /ACCW/; description
 *   is the whole text (the reference may sit in any tag).
 * - Free text (what Turkish banks mostly send): description is the whole text; the sender
 *   IBAN is the first IBAN in it that is not the receiving account; the sender name is the
 *   first logical line with IBANs and a leading transfer-type label removed. A bank that
 *   writes the reference first gets a wrong name here; matching tries the reference first,
 *   so a wrong name costs only the name-based fallback.
 */
export function senderOf(details: string, structured: Record<string, string> | undefined, receivingIban: string): { name: string; iban?: string; description: string } {
  const logical = joinWrapped(details.split("\n"));
  const fullText = logical.join(" ");
  const otherIban = (candidates: readonly string[]) => candidates.map(normalizeIban).find((iban) => iban !== receivingIban && ibansInText(iban).includes(iban));

  if (structured && Object.keys(structured).some((key) => /^\d{2}$/.test(key))) {
    const pick = (keys: string[]) => joinWrapped(keys.map((key) => structured[key] ?? "").filter(Boolean), 27).join(" ");
    const purpose = pick(["20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "60", "61", "62", "63"]);
    const description = cleanText(purpose || fullText, DESCRIPTION_MAX);
    const iban = otherIban([structured["31"] ?? "", ...ibansInText(fullText)]);
    return { name: cleanText(pick(["32", "33"]), SENDER_NAME_MAX), description, ...(iban ? { iban } : {}) };
  }
  if (structured && Object.keys(structured).some((key) => /^[A-Z0-9]{2,4}$/.test(key) && /[A-Z]/.test(key))) {
    const name = [structured["NAME"], structured["ORDP"]].map((v) => (v ?? "").trim()).find(Boolean) ?? "";
    const iban = otherIban([structured["IBAN"] ?? "", structured["ACCW"] ?? "", ...ibansInText(fullText)]);
    return { name: cleanText(name, SENDER_NAME_MAX), description: cleanText(fullText, DESCRIPTION_MAX), ...(iban ? { iban } : {}) };
  }

  const iban = otherIban(ibansInText(fullText));
  return { name: cleanText(nameFromLine(logical[0] ?? ""), SENDER_NAME_MAX), description: cleanText(fullText, DESCRIPTION_MAX), ...(iban ? { iban } : {}) };
}

function nameFromLine(line: string): string {
  let name = removeIbans(line).trim();
  for (let previous = ""; previous !== name; ) {
    previous = name;
    name = name.replace(LEADING_LABEL, "").replace(/^[\s\-:/,]+|[\s\-:/,]+$/g, "");
  }
  return name;
}

/** The line with every IBAN in it (printed in groups or electronic) taken out. */
function removeIbans(line: string): string {
  let result = line;
  for (const iban of ibansInText(line)) {
    // The IBAN's characters with optional spaces between them, as it may be printed.
    const printed = new RegExp(iban.split("").join("\\s?"), "i");
    result = result.replace(printed, " ");
  }
  return result;
}
