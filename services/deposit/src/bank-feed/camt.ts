import { createHash } from "node:crypto";
import { turkishIbanIn } from "./text.js";
import type { BankFeedAdapter, Completeness, IncomingTransferRecord, ParseResult, SkippedEntry, StatementInfo } from "./types.js";
import { readEntry } from "./camt-entry.js";
import { CAMT_MAX_BYTES, childrenNamed, decodeXml, escapeRegExp, fail, first, namespaceOf, readDocument, rootStartTag, sniffText, textAt, withoutTrailingMisc, type XmlElement } from "./camt-xml.js";

export { CAMT_MAX_BYTES } from "./camt-xml.js";

/**
 * ISO 20022 bank-to-customer cash management messages to incoming transfer records:
 * statements (camt.053.001.02 and .08, `Stmt`) and debit/credit notifications (camt.054.001.02
 * and .08, `Ntfctn`). Both carry the same entries (`Ntry`, with `TxDtls`), so one reader serves
 * both; the root element's namespace says which message and version a document is, whatever
 * prefix it is written with.
 *
 * Decisions, and why:
 * - Only booked credits become records: CdtDbtInd CRDT, not a reversal (RvslInd true), status
 *   BOOK (`<Sts>BOOK</Sts>` in .02, `<Sts><Cd>BOOK</Cd></Sts>` in .08). Debits, reversals and
 *   pending or information-only entries are listed in `skipped` with the reason: a pending entry
 *   may still be cancelled, and comes again, booked, in a later statement.
 * - An entry with several TxDtls is a batch booking (one amount on the account, several payers):
 *   one record per TxDtls, each with its own amount (AmtDtls/TxAmt/Amt, else TxDtls/Amt). The
 *   details must add up to the entry, exactly; otherwise the file is refused, since importing
 *   amounts that do not add up would credit deposits with money the account did not receive.
 * - Amounts are read from the text by string arithmetic in the currency of their Ccy attribute.
 * - Records come only from statements of a Turkish IBAN; every statement is reported in
 *   `statements` (the importer refuses a file that names an account that is not ours).
 * - bankTransactionId, the de-duplication key, is the bank's own reference when it identifies
 *   one transfer: see chooseTransactionIds. Else a derived id (derivedCamtTransactionId).
 * - A document that is not well-formed, lacks a mandatory element, or has an amount or date that
 *   is not one is refused as a whole (BankFeedError listing every problem with its place), never
 *   half-imported. A DOCTYPE is refused outright (no entity of the document's own is ever
 *   expanded: the billion-laughs and external-entity attacks need one), and so is a document
 *   over CAMT_MAX_BYTES.
 */

/** The deterministic ids this adapter makes, so they are told apart from a bank's own references (compare mt940's DERIVED_ID_PREFIX). */
export const CAMT_DERIVED_ID_PREFIX = "CAMT-";

export type CamtFormat = "camt053" | "camt054";

interface CamtMessage {
  /** The adapter (and STATEMENT_FORMATS key) that reads it. */
  format: CamtFormat;
  /** "camt.053.001.02": how issues name the message. */
  id: string;
  /** The element under Document that holds the reports, and the report element itself. */
  container: string;
  report: string;
  /** How a report is named to an operator. */
  word: "statement" | "notification";
}

const NAMESPACE_PREFIX = "urn:iso:std:iso:20022:tech:xsd:";

/** The messages and versions read, by their namespace. .03–.07 differ in places this reader does not check: refused rather than half-understood. */
const MESSAGES: ReadonlyMap<string, CamtMessage> = new Map(
  (
    [
      ["camt.053.001.02", "camt053"],
      ["camt.053.001.08", "camt053"],
      ["camt.054.001.02", "camt054"],
      ["camt.054.001.08", "camt054"],
    ] as const
  ).map(([id, format]): [string, CamtMessage] => [
    NAMESPACE_PREFIX + id,
    format === "camt053"
      ? { format, id, container: "BkToCstmrStmt", report: "Stmt", word: "statement" }
      : { format, id, container: "BkToCstmrDbtCdtNtfctn", report: "Ntfctn", word: "notification" },
  ]),
);

/** The message ids this module reads, for messages that name what is accepted. */
export const CAMT_MESSAGE_IDS: readonly string[] = [...MESSAGES.values()].map((m) => m.id);

export const camt053Adapter: BankFeedAdapter<string | Uint8Array> = {
  name: "camt053",
  parse: parseCamt053,
  completeness: camtCompleteness,
};

export const camt054Adapter: BankFeedAdapter<string | Uint8Array> = {
  name: "camt054",
  parse: parseCamt054,
  completeness: camtCompleteness,
};

/** Reads a camt.053 statement document (.02 or .08). Throws BankFeedError when it is not one, or not well-formed. */
export function parseCamt053(input: string | Uint8Array): ParseResult {
  return parseCamt(input, "camt053");
}

/** Reads a camt.054 debit/credit notification document (.02 or .08). Throws BankFeedError when it is not one, or not well-formed. */
export function parseCamt054(input: string | Uint8Array): ParseResult {
  return parseCamt(input, "camt054");
}

/**
 * Which adapter reads this document, by its root element's namespace (any prefix), without
 * parsing it: for a directory whose `.xml` files may be either message. Undefined when the
 * start of the document names no supported camt message. Never throws.
 */
export function camtFormatOf(input: string | Uint8Array): CamtFormat | undefined {
  try {
    const start = rootStartTag(typeof input === "string" ? input : sniffText(input));
    if (start.kind !== "root") return undefined;
    return MESSAGES.get(namespaceOf(start.qname, start.attributes) ?? "")?.format;
  } catch {
    return undefined;
  }
}

/**
 * Whether a camt document has been written to its end: the root element's closing tag
 * (`</Document>`, `</ns2:Document>`: whatever the opening tag says) is the last thing in it,
 * after whitespace and any trailing comments. A file that does not begin like XML at all, has a
 * DOCTYPE or is over CAMT_MAX_BYTES is reported complete, so the importer refuses it with its
 * reason instead of leaving it to wait forever. Never throws.
 */
export function camtCompleteness(input: Uint8Array): Completeness {
  try {
    if (input.length > CAMT_MAX_BYTES) return { complete: true };
    const text = sniffText(input);
    const start = rootStartTag(text);
    switch (start.kind) {
      case "empty":
        return { complete: false, reason: "the file is empty" };
      case "partial":
        return { complete: false, reason: "the document's root element has not been written yet" };
      case "other":
        return { complete: true };
      case "root": {
        const end = withoutTrailingMisc(text);
        if (start.selfClosing) return end.length <= start.end ? { complete: true } : { complete: false, reason: `content follows the empty root element <${start.qname}/>` };
        if (new RegExp(`</${escapeRegExp(start.qname)}\\s*>$`).test(end)) return { complete: true };
        return { complete: false, reason: `the document does not end with </${start.qname}> (its root element's closing tag): it is still being written, or was cut short` };
      }
    }
  } catch (err) {
    return { complete: false, reason: `could not be read: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * The id of a transfer whose bank gave no reference that identifies it: a hash of the statement
 * (Id, sequence numbers), the account, value date, amount, currency and the transfer's position
 * (entry, and detail within a batch). Stable across re-imports of the same file, so
 * recordTransfer's (iban, id) key makes a second import a no-op; different for two transfers of
 * one file unless the file repeats a whole statement under the same Id and numbers (then the
 * repeat is the same transfer, recorded once). The limit: the same transfer reported in another
 * document (a camt.054 first, the camt.053 later) gets another id; banks that give AcctSvcrRef
 * never reach this.
 */
export function derivedCamtTransactionId(input: {
  statementId: string;
  sequence: string;
  receivingIban: string;
  valueDate: string;
  amount: number;
  currency: string;
  entry: number;
  detail: number;
}): string {
  const key = ["camt", input.statementId, input.sequence, input.receivingIban, input.valueDate, String(input.amount), input.currency, String(input.entry), String(input.detail)].join("\u001F");
  return CAMT_DERIVED_ID_PREFIX + createHash("sha256").update(key).digest("hex").slice(0, 32);
}

function parseCamt(input: string | Uint8Array, expected: CamtFormat): ParseResult {
  const expectedName = expected === "camt053" ? "camt.053" : "camt.054";
  const text = decodeXml(input, expectedName);
  const root = readDocument(text, expectedName);

  const namespace = namespaceOf(root.qname, root.attributes);
  const message = MESSAGES.get(namespace ?? "");
  if (root.name !== "Document") fail(expectedName, [`the root element is <${root.qname}>, not an ISO 20022 <Document>`]);
  if (!message) {
    fail(expectedName, [
      namespace === undefined
        ? `the root element <${root.qname}> has no namespace: expected one of ${CAMT_MESSAGE_IDS.map((id) => NAMESPACE_PREFIX + id).join(", ")}`
        : `the document's namespace "${namespace}" is not a message this reader knows (it reads ${CAMT_MESSAGE_IDS.join(", ")})`,
    ]);
  }
  if (message.format !== expected) {
    fail(expectedName, [`the document is a ${message.id} ${message.word} message: import it as ${message.format}, not ${expected}`]);
  }
  return readMessage(root, message);
}

// ---------------------------------------------------------------------------------------------
// The message: statements, entries, details → records (one entry's transfers: camt-entry.ts).

/** A record before its bankTransactionId is chosen (that needs the whole file). */
interface PendingRecord {
  record: Omit<IncomingTransferRecord, "bankTransactionId">;
  /** The bank's references, best first: TxDtls AcctSvcrRef, the entry's AcctSvcrRef, TxId, EndToEndId. */
  references: ReadonlyArray<string | undefined>;
  derived: string;
}

function readMessage(root: XmlElement, message: CamtMessage): ParseResult {
  const issues: string[] = [];
  const problem = (element: XmlElement | undefined, where: string, text: string) => issues.push(`line ${element?.line ?? "?"}: ${where}: ${text}`);

  const container = first(root, message.container);
  if (!container) fail(message.id, [`line ${root.line ?? "?"}: <${root.qname}> holds no ${message.container}`]);
  const reports = childrenNamed(container, message.report);
  if (reports.length === 0) fail(message.id, [`line ${container.line ?? "?"}: ${message.container} holds no ${message.report}`]);

  const statements: StatementInfo[] = [];
  const skipped: SkippedEntry[] = [];
  const pending: PendingRecord[] = [];

  reports.forEach((report, r) => {
    const id = textAt(report, "Id");
    const electronic = textAt(report, "ElctrncSeqNb");
    const legal = textAt(report, "LglSeqNb");
    const label = `${message.word} ${r + 1} (Id ${id ?? "missing"}${electronic ? `, ElctrncSeqNb ${electronic}` : ""}${legal ? `, LglSeqNb ${legal}` : ""})`;
    if (!id) problem(report, label, `${message.report}/Id is missing`);
    const acct = first(report, "Acct");
    const account = textAt(acct, "Id", "IBAN") ?? textAt(acct, "Id", "Othr", "Id");
    if (!acct) problem(report, label, `${message.report}/Acct is missing`);
    else if (!account) problem(acct, label, "Acct/Id names no account (IBAN or Othr/Id)");
    const receivingIban = account ? turkishIbanIn(account) : undefined;
    statements.push({ label, account: account ?? "", line: report.line, ...(receivingIban ? { receivingIban } : {}) });

    const entries = childrenNamed(report, "Ntry");
    const mine: PendingRecord[] = [];
    const mineSkipped: SkippedEntry[] = [];
    entries.forEach((entry, n) => {
      const where = `${label}, Ntry #${n + 1}`;
      const read = readEntry(entry, where, (element, text) => problem(element, where, text));
      if (!read) return;
      for (const skip of read.skipped) mineSkipped.push({ entry: skip.where, line: skip.line, reason: skip.reason });
      for (const transfer of read.transfers) {
        const valueDate = read.valueDate;
        if (valueDate === undefined) continue;
        mine.push({
          record: { receivingIban: receivingIban ?? "", amount: transfer.amount.units, currency: transfer.amount.currency, valueDate, senderName: transfer.senderName, description: transfer.description, ...(transfer.senderIban && transfer.senderIban !== receivingIban ? { senderIban: transfer.senderIban } : {}) },
          references: transfer.references,
          derived: derivedCamtTransactionId({
            statementId: id ?? "",
            sequence: `${electronic ?? ""}/${legal ?? ""}`,
            receivingIban: receivingIban ?? account ?? "",
            valueDate,
            amount: transfer.amount.units,
            currency: transfer.amount.currency,
            entry: n + 1,
            detail: transfer.detail,
          }),
        });
      }
    });

    if (receivingIban) {
      pending.push(...mine);
      skipped.push(...mineSkipped);
    } else if (account) {
      // One line for the whole statement, as for MT940: its entries are not ours to judge.
      skipped.push({
        entry: label,
        line: report.line,
        reason: `Acct "${account}" is not a Turkish IBAN: this account's ${entries.length} ${entries.length === 1 ? "entry was" : "entries were"} not imported`,
      });
    }
  });

  if (issues.length > 0) fail(message.id, issues);
  return { records: chooseTransactionIds(pending), skipped, statements };
}

/**
 * Each record's bankTransactionId: the first of its references (see PendingRecord) that no other
 * record of the file on the same account also has at that rank (a payer's EndToEndId such as
 * "1" or a shared batch reference is not an id of one transfer), else the derived id. Should two
 * chosen ids still meet, both take their derived ids: a transfer recorded twice is visible in
 * suspense, one taken for a duplicate would be lost without a trace.
 */
function chooseTransactionIds(pending: readonly PendingRecord[]): IncomingTransferRecord[] {
  const key = (iban: string, value: string) => `${iban}\u001F${value}`;
  const countsByRank = [0, 1, 2, 3].map((rank) => {
    const counts = new Map<string, number>();
    for (const p of pending) {
      const value = p.references[rank];
      if (value !== undefined) counts.set(key(p.record.receivingIban, value), (counts.get(key(p.record.receivingIban, value)) ?? 0) + 1);
    }
    return counts;
  });
  const chosen = pending.map((p) => {
    for (let rank = 0; rank < countsByRank.length; rank++) {
      const value = p.references[rank];
      if (value !== undefined && countsByRank[rank]!.get(key(p.record.receivingIban, value)) === 1) return value;
    }
    return p.derived;
  });
  const chosenCounts = new Map<string, number>();
  pending.forEach((p, i) => chosenCounts.set(key(p.record.receivingIban, chosen[i]!), (chosenCounts.get(key(p.record.receivingIban, chosen[i]!)) ?? 0) + 1));
  return pending.map((p, i) => ({ ...p.record, bankTransactionId: chosenCounts.get(key(p.record.receivingIban, chosen[i]!))! > 1 ? p.derived : chosen[i]! }));
}
