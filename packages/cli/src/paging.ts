import type { Command } from "commander";
import { pageLimitParser, parseRequiredText } from "./arguments.js";
import type { Output } from "./output.js";

/*
 * The operator lists (deposits, open transfers, transfer returns, withdrawals, ledger entries,
 * callback events) page by key: the service answers a page and the cursor of the next one.
 * Every such command takes the same three options and prints pages the same way, here.
 */

/** What a paged list command was given. */
export interface PagingOptions {
  limit?: number;
  cursor?: string;
  all?: boolean;
}

/** Adds --limit, --cursor and --all to a list command. `defaultLimit` is the service's own. */
export function pagingOptions(command: Command, max: number, defaultLimit: number): Command {
  return command
    .option("--limit <n>", `page size, 1 to ${max} (default: the service's, ${defaultLimit}; with --all, ${max})`, pageLimitParser(max))
    .option("--cursor <cursor>", "start at this page: the cursor a previous list printed", parseRequiredText)
    .option("--all", "every page, one after another (from --cursor when given), until the end");
}

/** The paging part of a command's help. `key` is the JSON array's name. */
export function pagingHelp(key: string): string {
  return `
One page at a time; when there is more, the last line is the --cursor that continues.
--all walks every page to the end, printing rows as each page arrives.
With --json, prints {"${key}":[…],"nextCursor":"…"}; nextCursor is "" on the last page.
With --all --json, one document holding every item ("nextCursor" is then "").`;
}

/** One paged list: how to fetch a page and how its items print. */
export interface Listing<Item> {
  /** The page starting at `cursor` ("" for the first), of `limit` items (0: the service's default). */
  fetch(cursor: string, limit: number): Promise<{ items: readonly Item[]; nextCursor: string }>;
  /** The --json document of these items (one page's, or with --all every page's). */
  json(items: readonly Item[], nextCursor: string): void;
  headers: readonly string[];
  row(item: Item): string[];
  /** Printed when there are no items at all. */
  empty: string;
  /** "More withdrawals": the hint's words before ": add --cursor C". */
  more: string;
  /** The largest page the service serves: --all's page size when --limit is not given. */
  max: number;
}

/**
 * Prints one page (from --cursor, with the "more" hint when there is more), or with --all
 * every page to the end: rows as each page arrives (a table that keeps its columns), or with
 * --json one document holding every item once the last page has arrived.
 */
export async function printListing<Item>(out: Output, options: PagingOptions, listing: Listing<Item>): Promise<void> {
  if (options.all !== true) {
    const page = await listing.fetch(options.cursor ?? "", options.limit ?? 0);
    if (out.json) return listing.json(page.items, page.nextCursor);
    out.table(listing.headers, page.items.map(listing.row), listing.empty);
    if (page.nextCursor !== "") out.line(`\n${listing.more}: add --cursor ${page.nextCursor}`);
    return;
  }

  const limit = options.limit ?? listing.max;
  const everything: Item[] = [];
  const table = new GrowingTable(out, listing.headers);
  let cursor = options.cursor ?? "";
  do {
    const page = await listing.fetch(cursor, limit);
    if (out.json) everything.push(...page.items);
    else table.rows(page.items.map(listing.row));
    // A service that answered its own cursor again would loop for ever.
    if (page.nextCursor !== "" && page.nextCursor === cursor) throw new Error(`the service answered the same cursor again (${cursor})`);
    cursor = page.nextCursor;
  } while (cursor !== "");
  if (out.json) return listing.json(everything, "");
  if (table.empty) out.line(listing.empty);
}

/**
 * A table printed a page at a time: the header once, each column as wide as the widest cell
 * seen so far (so rows of later pages line up with the first unless a cell is wider), the
 * last column unpadded, as Output.table lays out a whole table.
 */
class GrowingTable {
  private widths: number[];
  empty = true;

  constructor(
    private readonly out: Output,
    private readonly headers: readonly string[],
  ) {
    this.widths = headers.map((h) => h.length);
  }

  rows(rows: readonly (readonly string[])[]): void {
    if (rows.length === 0) return;
    this.widths = this.widths.map((width, column) => Math.max(width, ...rows.map((row) => (row[column] ?? "").length)));
    const lines = rows.map((row) => this.line(row));
    if (this.empty) lines.unshift(this.line(this.headers));
    this.empty = false;
    this.out.line(lines.join("\n"));
  }

  private line(cells: readonly string[]): string {
    return cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(this.widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  }
}
