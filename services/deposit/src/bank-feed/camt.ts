import { createHash } from "node:crypto";
import { TextDecoder } from "node:util";
import { formatMajor } from "@payments/kit";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { BANK_TRANSACTION_ID_MAX, cleanText, decimalToMinorUnits, DESCRIPTION_MAX, hasUnsafeCharacters, isCalendarDate, isValidIban, minorUnitDigits, normalizeIban, SENDER_NAME_MAX, turkishIbanIn } from "./text.js";
import { BankFeedError, type BankFeedAdapter, type Completeness, type IncomingTransferRecord, type ParseResult, type SkippedEntry, type StatementInfo } from "./types.js";

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

/** The largest document read: a year of a busy account's statements is far less; a bound on what one upload can make us hold in memory. */
export const CAMT_MAX_BYTES = 32 * 1024 * 1024;

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

// ---------------------------------------------------------------------------------------------
// The document: bytes → text → a small element tree (local names, text with entities decoded).

interface XmlElement {
  /** Local name: the prefix, if any, removed (the reader is namespace-agnostic below the root). */
  readonly name: string;
  readonly qname: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  /** The element's own text, entities decoded, trimmed; "" when it has none. */
  readonly text: string;
  /** 1-based line of the start tag. */
  readonly line: number | undefined;
}

const PARSER = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  removeNSPrefix: false,
  // Values stay text: "0012" is a reference, "1500.10" an amount read exactly, never a float.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // No entity expansion by the parser at all (a DOCTYPE is refused before it runs); the five
  // predefined entities and character references are decoded here, in decodeEntities.
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: "#cdata",
  commentPropName: false,
  captureMetaData: true,
});

const METADATA = XMLParser.getMetaDataSymbol() as unknown as symbol;

function fail(prefix: string, issues: readonly string[]): never {
  const listed = issues.map((issue) => `${prefix}: ${issue}`);
  throw new BankFeedError(listed.length === 1 ? listed[0]! : `${listed.length} problems; the first: ${listed[0]}`, listed);
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

/** The document's text: from its BOM, else its XML declaration's encoding, else UTF-8; a byte sequence that is not valid in that encoding is refused. */
function decodeXml(input: string | Uint8Array, prefix: string): string {
  if (input.length > CAMT_MAX_BYTES) fail(prefix, [`the document is larger than ${CAMT_MAX_BYTES} bytes`]);
  if (typeof input === "string") return input.replace(/^\uFEFF/, "");
  if (input.length === 0) fail(prefix, ["the document is empty"]);
  const { label, skip } = encodingOf(input);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: true, ignoreBOM: true });
  } catch {
    fail(prefix, [`the XML declaration names the encoding "${label}", which this reader does not know`]);
  }
  try {
    return decoder.decode(input.subarray(skip));
  } catch {
    fail(prefix, [`the document is not valid ${label} text`]);
  }
}

function encodingOf(input: Uint8Array): { label: string; skip: number } {
  if (input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf) return { label: "utf-8", skip: 3 };
  if (input[0] === 0xff && input[1] === 0xfe) return { label: "utf-16le", skip: 2 };
  if (input[0] === 0xfe && input[1] === 0xff) return { label: "utf-16be", skip: 2 };
  const head = new TextDecoder("latin1").decode(input.subarray(0, 256));
  const declared = /^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1];
  return { label: (declared ?? "utf-8").toLowerCase(), skip: 0 };
}

/** Text for sniffing tags only (completeness, format): never fails on a bad byte. */
function sniffText(input: Uint8Array): string {
  const { label, skip } = encodingOf(input);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { ignoreBOM: true });
  } catch {
    decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  }
  return decoder.decode(input.subarray(skip));
}

/** Checks well-formedness and builds the tree of the one root element. */
function readDocument(text: string, prefix: string): XmlElement {
  // Refused before any parser sees it: a DOCTYPE is how entities get declared.
  const doctype = /<!(?:DOCTYPE|ENTITY)/i.exec(text);
  if (doctype) fail(prefix, [`line ${lineAt(text, doctype.index)}: the document has a DOCTYPE (or ENTITY) declaration; camt documents have none, and it is refused for safety`]);

  const valid = XMLValidator.validate(text);
  if (valid !== true) fail(prefix, [`line ${valid.err.line}${valid.err.col ? `, column ${valid.err.col}` : ""}: not well-formed XML: ${valid.err.msg}`]);

  let nodes: unknown;
  try {
    nodes = PARSER.parse(text);
  } catch (err) {
    fail(prefix, [`not well-formed XML: ${err instanceof Error ? err.message : String(err)}`]);
  }
  const lines = lineStarts(text);
  const issues: string[] = [];
  const elements = (Array.isArray(nodes) ? nodes : []).flatMap((node) => {
    const element = toElement(node, lines, issues);
    return element ? [element] : [];
  });
  if (issues.length > 0) fail(prefix, issues);
  if (elements.length !== 1) fail(prefix, [elements.length === 0 ? "the document has no root element" : `the document has ${elements.length} root elements; XML allows one`]);
  return elements[0]!;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One node of fast-xml-parser's preserveOrder output to an XmlElement; undefined for a text node. */
function toElement(node: unknown, lines: readonly number[], issues: string[]): XmlElement | undefined {
  if (!isRecord(node)) return undefined;
  const qname = Object.keys(node).find((key) => key !== ":@" && key !== "#text" && key !== "#cdata");
  if (qname === undefined) return undefined;
  const meta = (node as Record<symbol, unknown>)[METADATA];
  const offset = isRecord(meta) && typeof meta["startIndex"] === "number" ? meta["startIndex"] : undefined;
  const line = offset === undefined ? undefined : lineOf(lines, offset);
  const where = `line ${line ?? "?"}: <${qname}>`;

  const attributes: Record<string, string> = {};
  const rawAttributes = node[":@"];
  if (isRecord(rawAttributes)) {
    for (const [key, value] of Object.entries(rawAttributes)) if (typeof value === "string") attributes[key] = decodeEntities(value, (entity) => issues.push(`${where}: attribute ${key} uses the undefined entity ${entity}`));
  }

  const children: XmlElement[] = [];
  const texts: string[] = [];
  const content = node[qname];
  for (const item of Array.isArray(content) ? content : []) {
    if (!isRecord(item)) continue;
    if ("#text" in item) {
      texts.push(decodeEntities(String(item["#text"]), (entity) => issues.push(`${where}: uses the undefined entity ${entity}`)));
    } else if ("#cdata" in item) {
      // CDATA is literal: no entity in it is decoded.
      const inner = item["#cdata"];
      for (const part of Array.isArray(inner) ? inner : []) if (isRecord(part) && "#text" in part) texts.push(String(part["#text"]));
    } else {
      const child = toElement(item, lines, issues);
      if (child) children.push(child);
    }
  }
  const colon = qname.indexOf(":");
  return { name: colon === -1 ? qname : qname.slice(colon + 1), qname, attributes, children, text: texts.join(" ").trim(), line };
}

const PREDEFINED_ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** XML's five predefined entities and character references; anything else is undefined in a document without a DTD. */
function decodeEntities(value: string, onUndefined: (entity: string) => void): string {
  if (!value.includes("&")) return value;
  return value.replace(/&(?:#(\d{1,7})|#x([0-9A-Fa-f]{1,6})|([A-Za-z_][\w.-]*));/g, (whole, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) {
      const replacement = PREDEFINED_ENTITIES[name];
      if (replacement === undefined) onUndefined(whole);
      return replacement ?? whole;
    }
    const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? "", 16);
    const isXmlChar = code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
    if (!isXmlChar) {
      onUndefined(whole);
      return whole;
    }
    return String.fromCodePoint(code);
  });
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

function lineAt(text: string, offset: number): number {
  return lineOf(lineStarts(text.slice(0, offset + 1)), offset);
}

function namespaceOf(qname: string, attributes: Readonly<Record<string, string>>): string | undefined {
  const colon = qname.indexOf(":");
  return attributes[colon === -1 ? "xmlns" : `xmlns:${qname.slice(0, colon)}`]?.trim();
}

function childrenNamed(element: XmlElement | undefined, name: string): XmlElement[] {
  return element ? element.children.filter((child) => child.name === name) : [];
}

/** Every element at the end of a path of child names. */
function all(element: XmlElement | undefined, ...path: string[]): XmlElement[] {
  let current = element ? [element] : [];
  for (const name of path) current = current.flatMap((e) => childrenNamed(e, name));
  return current;
}

function first(element: XmlElement | undefined, ...path: string[]): XmlElement | undefined {
  return all(element, ...path)[0];
}

/** The text at a path; undefined when the element is absent or empty. */
function textAt(element: XmlElement | undefined, ...path: string[]): string | undefined {
  const text = first(element, ...path)?.text;
  return text ? text : undefined;
}

type RootStart =
  | { kind: "empty" }
  | { kind: "partial" }
  | { kind: "other" }
  | { kind: "root"; qname: string; attributes: Record<string, string>; selfClosing: boolean; end: number };

/** The root element's start tag, found past the prolog (declaration, comments, processing instructions) without parsing the rest. */
function rootStartTag(text: string): RootStart {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) return text.trim().replace(/^\uFEFF/, "") === "" ? { kind: "empty" } : { kind: "partial" };
    const rest = text.length - i;
    if (text.startsWith("<?", i)) {
      const close = text.indexOf("?>", i + 2);
      if (close === -1) return { kind: "partial" };
      i = close + 2;
    } else if (text.startsWith("<!--", i)) {
      const close = text.indexOf("-->", i + 4);
      if (close === -1) return { kind: "partial" };
      i = close + 3;
    } else if ((rest < 4 && "<!--".startsWith(text.slice(i))) || (rest < 9 && "<!DOCTYPE".startsWith(text.slice(i)))) {
      return { kind: "partial" };
    } else if (text.startsWith("<!", i)) {
      return { kind: "other" };
    } else if (text[i] === "<") {
      const name = /[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?/y;
      name.lastIndex = i + 1;
      const match = name.exec(text);
      if (!match) return i + 1 >= text.length ? { kind: "partial" } : { kind: "other" };
      let quote: string | undefined;
      for (let j = name.lastIndex; j < text.length; j++) {
        const c = text[j]!;
        if (quote) {
          if (c === quote) quote = undefined;
        } else if (c === '"' || c === "'") {
          quote = c;
        } else if (c === ">") {
          const tag = text.slice(i, j + 1);
          const attributes: Record<string, string> = {};
          for (const a of tag.matchAll(/\s([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attributes[a[1]!] = a[2] ?? a[3] ?? "";
          return { kind: "root", qname: match[0], attributes, selfClosing: text[j - 1] === "/", end: j + 1 };
        }
      }
      return { kind: "partial" };
    } else {
      return { kind: "other" };
    }
  }
}

/** The text without trailing whitespace, comments and processing instructions, which XML allows after the root element. */
function withoutTrailingMisc(text: string): string {
  let end = text.trimEnd();
  for (;;) {
    if (end.endsWith("-->")) {
      const open = end.lastIndexOf("<!--");
      if (open === -1) return end;
      end = end.slice(0, open).trimEnd();
    } else if (end.endsWith("?>")) {
      const open = end.lastIndexOf("<?");
      if (open === -1) return end;
      end = end.slice(0, open).trimEnd();
    } else {
      return end;
    }
  }
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// ---------------------------------------------------------------------------------------------
// The message: statements, entries, details → records.

const SKIP_REASONS = {
  debit: "debit (money out of the account): only credits are imported",
  creditReversal: "reversal of an earlier credit (money taken back): not imported; an operator should check the credit it reverses",
  debitReversal: "reversal of a debit (a payment of ours returned): not a customer's transfer, not imported",
  zero: "zero amount: nothing was paid",
} as const;

interface Amount {
  units: number;
  currency: string;
}

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

interface EntryTransfer {
  amount: Amount;
  senderName: string;
  senderIban?: string;
  description: string;
  references: ReadonlyArray<string | undefined>;
  /** 1-based position of its TxDtls in the entry; 0 for an entry without details. */
  detail: number;
}

interface ReadEntry {
  valueDate: string | undefined;
  transfers: EntryTransfer[];
  skipped: Array<{ where: string; line: number | undefined; reason: string }>;
}

/** One Ntry: its transfers when it is a booked credit, else why it is skipped; undefined when it has problems (reported). */
function readEntry(entry: XmlElement, where: string, problem: (element: XmlElement | undefined, text: string) => void): ReadEntry | undefined {
  let ok = true;
  const report = (element: XmlElement | undefined, text: string) => {
    ok = false;
    problem(element, text);
  };

  const amount = readAmount(first(entry, "Amt"), "Amt", entry, report);
  const indicator = readIndicator(first(entry, "CdtDbtInd"), entry, report);
  const reversal = readReversal(first(entry, "RvslInd"), report);
  const details = all(entry, "NtryDtls", "TxDtls");
  const detailAmounts = details.map((detail, k) => {
    const amountElement = first(detail, "AmtDtls", "TxAmt", "Amt") ?? first(detail, "Amt");
    const detailIndicator = first(detail, "CdtDbtInd");
    return {
      amount: amountElement ? readAmount(amountElement, `TxDtls #${k + 1} amount`, detail, report) : undefined,
      indicator: detailIndicator ? readIndicator(detailIndicator, detail, report) : undefined,
    };
  });
  if (!ok || !amount || !indicator || reversal === "invalid") return undefined;

  const skip = (reason: string): ReadEntry => ({ valueDate: undefined, transfers: [], skipped: [{ where, line: entry.line, reason }] });
  if (indicator === "DBIT") return skip(reversal ? SKIP_REASONS.creditReversal : SKIP_REASONS.debit);
  if (reversal) return skip(SKIP_REASONS.debitReversal);
  const status = statusOf(entry);
  if (status !== "BOOK") {
    if (status === "PDNG") return skip("pending (Sts PDNG): not booked yet; imported from the statement that shows it booked");
    if (status === "INFO") return skip("information only (Sts INFO): not a booking");
    return skip(status === undefined ? "no status (Sts): not known to be booked, not imported" : `status ${status}: only booked (BOOK) entries are imported`);
  }

  const valueDate = readValueDate(entry, report);
  if (!ok || valueDate === undefined) return undefined;
  const entryReference = usableReference(textAt(entry, "AcctSvcrRef"));
  const entryInfo = textAt(entry, "AddtlNtryInf");

  if (details.length === 0) {
    if (amount.units === 0) return skip(SKIP_REASONS.zero);
    return { valueDate, skipped: [], transfers: [{ amount, senderName: "", description: cleanText(entryInfo ?? "", DESCRIPTION_MAX), references: [undefined, entryReference], detail: 0 }] };
  }

  // The details must account for the entry exactly: credits add, a debit detail inside a credit entry (a charge) subtracts.
  if (details.length > 1 || detailAmounts[0]?.amount) {
    let sum = 0n;
    detailAmounts.forEach((d, k) => {
      if (!d.amount) return report(details[k], `TxDtls #${k + 1} has no amount, so the entry's ${details.length} transfers cannot be told apart`);
      if (d.amount.currency !== amount.currency) return report(details[k], `TxDtls #${k + 1} is in ${d.amount.currency}, the entry in ${amount.currency}`);
      sum += (d.indicator === "DBIT" ? -1n : 1n) * BigInt(d.amount.units);
    });
    if (ok && sum !== BigInt(amount.units)) {
      report(entry, `the amounts of its ${details.length} TxDtls add up to ${formatMajor(sum, amount.currency)}, not the entry's ${formatMajor(amount.units, amount.currency)}`);
    }
    if (!ok) return undefined;
  }

  const result: ReadEntry = { valueDate, transfers: [], skipped: [] };
  details.forEach((detail, k) => {
    const detailWhere = details.length > 1 ? `${where}, TxDtls #${k + 1}` : where;
    const detailAmount = detailAmounts[k]?.amount ?? amount;
    if (detailAmounts[k]?.indicator === "DBIT") {
      result.skipped.push({ where: detailWhere, line: detail.line, reason: `${SKIP_REASONS.debit} (a debit inside a credit entry)` });
      return;
    }
    if (detailAmount.units === 0) {
      result.skipped.push({ where: detailWhere, line: detail.line, reason: SKIP_REASONS.zero });
      return;
    }
    const sender = senderOf(detail);
    result.transfers.push({
      amount: detailAmount,
      senderName: sender.name,
      ...(sender.iban ? { senderIban: sender.iban } : {}),
      description: descriptionOf(detail, entryInfo),
      references: [usableReference(textAt(detail, "Refs", "AcctSvcrRef")), entryReference && details.length > 1 ? usableReference(`${entryReference}/${k + 1}`) : entryReference, usableReference(textAt(detail, "Refs", "TxId")), usableReference(textAt(detail, "Refs", "EndToEndId"))],
      detail: k + 1,
    });
  });
  return result;
}

function readAmount(element: XmlElement | undefined, what: string, parent: XmlElement, report: (element: XmlElement | undefined, text: string) => void): Amount | undefined {
  if (!element) {
    report(parent, `${what} is missing`);
    return undefined;
  }
  const currency = element.attributes["Ccy"]?.trim() ?? "";
  if (!/^[A-Z]{3}$/.test(currency)) {
    report(element, `${what} has no currency (a Ccy attribute such as "TRY")${currency ? `: "${currency}"` : ""}`);
    return undefined;
  }
  const units = /^\d+(?:\.\d+)?$/.test(element.text) ? decimalToMinorUnits(element.text, minorUnitDigits(currency)) : undefined;
  if (units === undefined) {
    report(element, `${what} "${element.text}" is not an amount in ${currency} (digits, a point, at most ${minorUnitDigits(currency)} decimals)`);
    return undefined;
  }
  return { units, currency };
}

function readIndicator(element: XmlElement | undefined, parent: XmlElement, report: (element: XmlElement | undefined, text: string) => void): "CRDT" | "DBIT" | undefined {
  if (!element) {
    report(parent, "CdtDbtInd is missing");
    return undefined;
  }
  if (element.text === "CRDT" || element.text === "DBIT") return element.text;
  report(element, `CdtDbtInd "${element.text}" is neither CRDT nor DBIT`);
  return undefined;
}

function readReversal(element: XmlElement | undefined, report: (element: XmlElement | undefined, text: string) => void): boolean | "invalid" {
  if (!element) return false;
  if (element.text === "true" || element.text === "1") return true;
  if (element.text === "false" || element.text === "0") return false;
  report(element, `RvslInd "${element.text}" is not a boolean`);
  return "invalid";
}

/** `<Sts>BOOK</Sts>` (.02) or `<Sts><Cd>BOOK</Cd></Sts>` (.08; or Prtry). */
function statusOf(entry: XmlElement): string | undefined {
  const status = first(entry, "Sts");
  if (!status) return undefined;
  return (textAt(status, "Cd") ?? textAt(status, "Prtry") ?? status.text) || undefined;
}

/** ValDt (its Dt, or the date part of DtTm as the bank wrote it, never shifted to another zone), else BookgDt. */
function readValueDate(entry: XmlElement, report: (element: XmlElement | undefined, text: string) => void): string | undefined {
  for (const name of ["ValDt", "BookgDt"]) {
    const element = first(entry, name);
    if (!element) continue;
    const date = textAt(element, "Dt");
    const dateTime = textAt(element, "DtTm");
    const value = date ?? (dateTime && /^\d{4}-\d{2}-\d{2}T/.test(dateTime) ? dateTime.slice(0, 10) : dateTime);
    if (value === undefined) continue;
    if (!isCalendarDate(value)) {
      report(element, `${name} "${date ?? dateTime}" is not a date (YYYY-MM-DD, or a date and time)`);
      return undefined;
    }
    return value;
  }
  report(entry, "neither ValDt nor BookgDt gives a date");
  return undefined;
}

/** A reference that can be a bank transaction id: present, not NOTPROVIDED, fits the column, nothing unsafe in it. */
function usableReference(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed || trimmed.toUpperCase() === "NOTPROVIDED" || trimmed.length > BANK_TRANSACTION_ID_MAX || hasUnsafeCharacters(trimmed)) return undefined;
  return trimmed;
}

/** The payer: Dbtr (.02 Nm, .08 Pty/Nm), else the ultimate debtor; the IBAN of DbtrAcct when it is a valid one. */
function senderOf(detail: XmlElement): { name: string; iban?: string } {
  const parties = first(detail, "RltdPties");
  const name = textAt(parties, "Dbtr", "Nm") ?? textAt(parties, "Dbtr", "Pty", "Nm") ?? textAt(parties, "UltmtDbtr", "Nm") ?? textAt(parties, "UltmtDbtr", "Pty", "Nm") ?? "";
  const iban = normalizeIban(textAt(parties, "DbtrAcct", "Id", "IBAN") ?? "");
  return { name: cleanText(name, SENDER_NAME_MAX), ...(iban && isValidIban(iban) ? { iban } : {}) };
}

/**
 * What the payer wrote, where the payment reference is: the unstructured remittance lines, then
 * the structured creditor references and additional remittance text; only when there is no
 * remittance information at all, the bank's additional transaction and entry information
 * (Turkish banks often put the payer's description there).
 */
function descriptionOf(detail: XmlElement, entryInfo: string | undefined): string {
  const remittance = first(detail, "RmtInf");
  const parts: string[] = [];
  const add = (value: string | undefined) => {
    if (value && !parts.includes(value)) parts.push(value);
  };
  for (const line of all(remittance, "Ustrd")) add(line.text);
  for (const structured of all(remittance, "Strd")) {
    for (const ref of all(structured, "CdtrRefInf", "Ref")) add(ref.text);
    for (const info of all(structured, "AddtlRmtInf")) add(info.text);
  }
  if (parts.length === 0) {
    add(textAt(detail, "AddtlTxInf"));
    add(entryInfo);
  }
  return cleanText(parts.join(" "), DESCRIPTION_MAX);
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

