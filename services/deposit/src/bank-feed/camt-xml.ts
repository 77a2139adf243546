import { TextDecoder } from "node:util";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { BankFeedError } from "./types.js";

/*
 * The XML under the camt adapters (camt.ts): bytes → text (BOM, declared encoding) → a small
 * element tree (local names, text with entities decoded, the line of each start tag), the paths
 * read through it, and the sniffing of a root start tag and a document's end without parsing.
 */

/** The largest document read: a year of a busy account's statements is far less; a bound on what one upload can make us hold in memory. */
export const CAMT_MAX_BYTES = 32 * 1024 * 1024;

export interface XmlElement {
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

export function fail(prefix: string, issues: readonly string[]): never {
  const listed = issues.map((issue) => `${prefix}: ${issue}`);
  throw new BankFeedError(listed.length === 1 ? listed[0]! : `${listed.length} problems; the first: ${listed[0]}`, listed);
}

/** The document's text: from its BOM, else its XML declaration's encoding, else UTF-8; a byte sequence that is not valid in that encoding is refused. */
export function decodeXml(input: string | Uint8Array, prefix: string): string {
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
export function sniffText(input: Uint8Array): string {
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
export function readDocument(text: string, prefix: string): XmlElement {
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

export function namespaceOf(qname: string, attributes: Readonly<Record<string, string>>): string | undefined {
  const colon = qname.indexOf(":");
  return attributes[colon === -1 ? "xmlns" : `xmlns:${qname.slice(0, colon)}`]?.trim();
}

export function childrenNamed(element: XmlElement | undefined, name: string): XmlElement[] {
  return element ? element.children.filter((child) => child.name === name) : [];
}

/** Every element at the end of a path of child names. */
export function all(element: XmlElement | undefined, ...path: string[]): XmlElement[] {
  let current = element ? [element] : [];
  for (const name of path) current = current.flatMap((e) => childrenNamed(e, name));
  return current;
}

export function first(element: XmlElement | undefined, ...path: string[]): XmlElement | undefined {
  return all(element, ...path)[0];
}

/** The text at a path; undefined when the element is absent or empty. */
export function textAt(element: XmlElement | undefined, ...path: string[]): string | undefined {
  const text = first(element, ...path)?.text;
  return text ? text : undefined;
}

type RootStart =
  | { kind: "empty" }
  | { kind: "partial" }
  | { kind: "other" }
  | { kind: "root"; qname: string; attributes: Record<string, string>; selfClosing: boolean; end: number };

/** The root element's start tag, found past the prolog (declaration, comments, processing instructions) without parsing the rest. */
export function rootStartTag(text: string): RootStart {
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
export function withoutTrailingMisc(text: string): string {
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

export function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
