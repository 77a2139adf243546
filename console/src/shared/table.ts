import { html, type HtmlValue, type SafeHtml } from "./html.js";

/**
 * Tables that hold at any width. On a wide screen a table shows its columns; under 48rem each
 * row becomes a card of "label: value" lines (styles-rules.ts), which needs every cell to carry
 * its column's name in `data-label`. `responsiveTable` writes such a table; `labelTableCells`
 * adds the labels to a table a page wrote itself (the layout runs it over every page).
 */
export interface TableColumn<Row> {
  /** The column's heading, in the page's language. */
  label: string;
  cell: (row: Row) => HtmlValue;
  /** Amounts and counts: right-aligned, tabular figures, never wrapped. */
  num?: boolean;
  /** The row's heading cell (`<th scope="row">`): its name, what the other cells describe. */
  rowHeader?: boolean;
  /**
   * Secondary data: not a column of its own on a wide screen but a smaller line under the cell
   * of the column at this index (which must not itself be stacked), so a wide table fits
   * 1280 px; on a phone it is one more "label: value" line of the card.
   */
  under?: number;
}

export interface ResponsiveTableOptions<Row> {
  caption: HtmlValue;
  columns: ReadonlyArray<TableColumn<Row>>;
  rows: readonly Row[];
  /** When given, the table sits in a labelled, focusable region (the label of `tableScroll`). */
  region?: string;
}

function stacked<Row>(columns: ReadonlyArray<TableColumn<Row>>, index: number, row: Row): SafeHtml[] {
  return columns
    .filter((c) => c.under === index)
    .map((c) => {
      const value = c.cell(row);
      return html`<span class="cell-sub"><span class="cell-sub-label">${c.label}:</span> ${value === "" || value === null || value === undefined ? "—" : value}</span>`;
    });
}

export function responsiveTable<Row>(options: ResponsiveTableOptions<Row>): SafeHtml {
  const shown = options.columns.map((column, index) => ({ column, index })).filter(({ column }) => column.under === undefined);
  const heads = shown.map(({ column }) => html`<th scope="col"${column.num ? html` class="num"` : null}>${column.label}</th>`);
  const rows = options.rows.map((row) => {
    const cells = shown.map(({ column, index }) => {
      const content = html`${column.cell(row)}${stacked(options.columns, index, row)}`;
      const cls = column.num ? html` class="num"` : null;
      return column.rowHeader
        ? html`<th scope="row" data-label="${column.label}"${cls}>${content}</th>`
        : html`<td data-label="${column.label}"${cls}>${content}</td>`;
    });
    return html`<tr>${cells}</tr>`;
  });
  const table = html`<table class="responsive"><caption>${options.caption}</caption><thead><tr>${heads}</tr></thead><tbody>${rows}</tbody></table>`;
  return options.region ? html`<div class="table-scroll" role="region" aria-label="${options.region}" tabindex="0">${table}</div>` : table;
}

/** A heading cell's text for an attribute: its tags dropped (the text is already escaped HTML). */
function labelText(cellHtml: string): string {
  return cellHtml.replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim();
}

/** The headings of a table's `<thead>` (its last row), one per column, a `colspan` repeated. */
function headings(table: string): string[] | undefined {
  const head = /<thead[^>]*>([\s\S]*?)<\/thead>/.exec(table)?.[1];
  if (!head) return undefined;
  const lastRow = head.split(/<tr[\s>]/).pop() ?? "";
  const out: string[] = [];
  for (const m of lastRow.matchAll(/<th(\s[^>]*)?>([\s\S]*?)<\/th>/g)) {
    const span = Number(/\scolspan="(\d+)"/.exec(m[1] ?? "")?.[1] ?? 1);
    for (let i = 0; i < Math.max(1, Math.min(span, 50)); i++) out.push(labelText(m[2] ?? ""));
  }
  return out;
}

function labelRows(body: string, labels: readonly string[]): string {
  return body.replace(/<tr(\s[^>]*)?>([\s\S]*?)<\/tr>/g, (row, attrs: string | undefined, cells: string) => {
    let column = 0;
    const labelled = cells.replace(/<(td|th)(\s[^>]*)?>/g, (tag, name: string, cellAttrs: string | undefined) => {
      const at = column;
      column += Number(/\scolspan="(\d+)"/.exec(cellAttrs ?? "")?.[1] ?? 1);
      if (/\sdata-label="/.test(cellAttrs ?? "") || labels[at] === undefined) return tag;
      return `<${name} data-label="${labels[at]}"${cellAttrs ?? ""}>`;
    });
    return `<tr${attrs ?? ""}>${labelled}</tr>`;
  });
}

/**
 * Every `<td>` and row heading in the `<tbody>` of each table with a `<thead>` gets its column's
 * heading as `data-label` (a cell that has one keeps it). A table holding another table is left
 * as it is. The markup is the console's own escaped HTML, so tags are found exactly.
 */
export function labelTableCells(markup: string): string {
  return markup.replace(/<table(\s[^>]*)?>([\s\S]*?)<\/table>/g, (table, _attrs: string | undefined, inner: string) => {
    if (inner.includes("<table")) return table;
    const labels = headings(inner);
    if (!labels || labels.length === 0) return table;
    return table.replace(/<tbody([^>]*)>([\s\S]*?)<\/tbody>/g, (_all, bodyAttrs: string, body: string) => `<tbody${bodyAttrs}>${labelRows(body, labels)}</tbody>`);
  });
}

/**
 * Where words are not wrapped in spans: a form control's text, a dump, `<code>` (ids, which the
 * stylesheet keeps on one line whole: `td code`) and links (done before, by `wholeLinkWords`).
 */
const LEFT_ALONE = new Set(["textarea", "option", "pre", "script", "style", "title", "select", "a", "code"]);
/** A word with a character after which a browser may break the line (a hyphen, a slash, …). */
const BREAKABLE_WORD = /[^\s<>]*[-/\u2010-\u2015?!+=|\\~%}][^\s<>]*[^\s<>]/g;

/** The words holding a break opportunity in a run of text, each wrapped in `<span class="nw">`. */
function wholeWords(text: string): string {
  return text.replace(BREAKABLE_WORD, (word) => `<span class="nw">${word}</span>`);
}

/** A link of plain text: one breakable word gets `class="nw"`, longer text its breakable words wrapped. */
function wholeLinkWords(content: string): string {
  return content.replace(/<a(\s[^>]*)?>([^<]*)<\/a>/g, (link, attrs: string | undefined, text: string) => {
    const word = text.trim();
    if (!new RegExp(BREAKABLE_WORD.source).test(word)) return link;
    return /\s/.test(word) ? `<a${attrs ?? ""}>${wholeWords(text)}</a>` : `<a${withClass(attrs ?? "", "nw")}>${text}</a>`;
  });
}

/** A cell's markup with its text's breakable words wrapped, except inside the elements left alone. */
function wrapCellText(content: string): string {
  const open: string[] = [];
  return wholeLinkWords(content).replace(/(<\/?([A-Za-z][A-Za-z0-9]*)[^>]*>)|([^<]+)/g, (part, tag: string | undefined, name: string | undefined, text: string | undefined) => {
    if (tag && name) {
      const lower = name.toLowerCase();
      if (LEFT_ALONE.has(lower) && tag.startsWith("</")) open.pop();
      else if (LEFT_ALONE.has(lower)) open.push(lower);
      return part;
    }
    return text && open.length === 0 ? wholeWords(text) : part;
  });
}

function withClass(attrs: string, cls: string): string {
  return /\sclass="/.test(attrs) ? attrs.replace(/\sclass="([^"]*)"/, (_all, list: string) => ` class="${list} ${cls}"`) : `${attrs} class="${cls}"`;
}

/**
 * A word in a table cell is never split across lines: a browser breaks after a hyphen or a slash
 * (`siparis-12`, `walk-owner@…`, `2026-01-31`). A cell that is one such word as plain text gets
 * `class="nw"` (`white-space: nowrap`); in any other cell each such word is wrapped in
 * `<span class="nw">`, and a link that is one such word gets `class="nw"`. The text itself is
 * unchanged (copying an id gives the id). Amount cells (`.num`, never wrapped) and the text of
 * form controls, `<pre>` dumps and `<code>` (kept whole by the stylesheet) are left as written.
 */
export function keepWordsWhole(markup: string): string {
  return markup.replace(/<table(\s[^>]*)?>[\s\S]*?<\/table>/g, (table) => {
    if (table.indexOf("<table", 1) !== -1) return table;
    return table.replace(/<(td|th)(\s[^>]*)?>([\s\S]*?)<\/\1>/g, (cell, name: string, attrs: string | undefined, content: string) => {
      const a = attrs ?? "";
      if (/\sclass="[^"]*\bnum\b/.test(a)) return cell;
      if (!content.includes("<")) {
        const word = content.trim();
        if (!/\s/.test(word) && new RegExp(BREAKABLE_WORD.source).test(word)) return `<${name}${withClass(a, "nw")}>${content}</${name}>`;
      }
      return `<${name}${a}>${wrapCellText(content)}</${name}>`;
    });
  });
}

/** A wide table in a region of its own that scrolls sideways inside its box, rather than widening the page. */
export function tableScroll(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}
