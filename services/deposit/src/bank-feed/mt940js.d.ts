/**
 * The part of mt940js (1.3.5, CommonJS, no bundled types) that mt940.ts uses, through the
 * default import (module.exports). Amounts and dates mt940js computes (floats, Date objects)
 * are deliberately not declared: the adapter re-reads them from the raw tag text
 * (`tags[i].data`) so no float ever reaches a record.
 */
declare module "mt940js" {
  /** A parsed tag as kept with `parse(data, true)`: `id` is the numeric tag (61, 86, …) or "NS"/"MB"; `data` its raw text, lines joined by "\n". */
  interface Mt940Tag {
    id: number | string;
    data: string;
  }

  interface Mt940Transaction {
    /** Content of the :86: that followed this :61:, its lines joined by "\n"; "" when none. */
    details: string;
    /** Subfields when :86: is structured (`?20…`, `>20…`, `/ORDP/…`), keyed by subfield ("20", "32", "ORDP"), plus `gvc`. */
    structuredDetails?: Record<string, string>;
  }

  interface Mt940Statement {
    transactionReference: string;
    accountIdentification: string;
    number: { statement: string; sequence: string; section: string };
    /** From :60F:/:60M:. */
    currency: string;
    transactions: Mt940Transaction[];
    /** Present when parsed with `withTags`: this statement's tags in file order. */
    tags?: Mt940Tag[];
  }

  interface Mt940Parser {
    /** Throws Error on a malformed statement (missing mandatory tag, unparsable tag, balances that do not add up). */
    parse(data: string, withTags?: boolean): Mt940Statement[];
  }

  const mt940js: {
    Parser: new (options?: { no86Structure?: boolean }) => Mt940Parser;
  };
  export default mt940js;
}
