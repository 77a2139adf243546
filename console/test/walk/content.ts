import type { Page } from "playwright-core";
import type { Visit, WalkCheck } from "./checks.js";
import { codeTokensOf, vocabulary, wordsOf } from "./vocabulary.js";

/*
 * The walk's checks of what a page says (issue 33's "Done when"), beside the layout's: a Turkish
 * page has no English word outside names and ids, every amount is in the locale's form, and every
 * merchant id shown stands beside its merchant's name. Each reads the page's visible text once, at
 * the desktop width (the text does not change with the width).
 */

/** One visible text node: its text, whether it sits in a `<code>` or `<pre>`, and the element it sits in, described. */
interface Piece {
  text: string;
  code: boolean;
  /** In a form field's hint (`#…-hint`): examples of what may be typed, not amounts. */
  hint: boolean;
  where: string;
}

/**
 * Every visible text node of the body (scripts, styles, selects and text areas aside, and what a
 * closed `<details>` or `hidden` keeps out of sight), with its element described: tag, id, class,
 * a table cell's label or the table's caption, and the start of the element's own text.
 */
const VISIBLE_TEXT = `(() => {
  const out = [];
  const skip = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SELECT", "OPTION", "TEXTAREA"]);
  const describe = (el) => {
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\\s+/).join(".") : "";
    const cell = el.closest("td, th");
    const caption = el.closest("table") && el.closest("table").querySelector("caption");
    const label = cell && cell.getAttribute("data-label") ? ' [' + cell.getAttribute("data-label") + ']' : "";
    const table = caption ? ' in table "' + caption.textContent.trim().slice(0, 60) + '"' : "";
    const own = (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 80);
    return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + label + table + ' "' + own + '"';
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    const text = node.textContent || "";
    if (!el || !text.trim() || el.closest("script, style, noscript, template, select, textarea")) continue;
    if (skip.has(el.tagName) || !el.checkVisibility({ checkVisibilityCSS: true })) continue;
    out.push({ text, code: !!el.closest("code, pre, kbd, samp"), hint: !!el.closest('[id$="-hint"]'), where: describe(el) });
  }
  return out;
})()`;

async function piecesOf(page: Page): Promise<Piece[]> {
  return page.evaluate<Piece[]>(VISIBLE_TEXT);
}

/** Data, not words: ids, emails, URLs, IBANs, numbers, paths, and anything else with a digit, `_`, `@`, `/` or `:` in it. */
const DATA_TOKEN = /^\S*[\d_@/:\\]\S*$/;

/**
 * What the walk seeded, by name, so the checks can tell data from words: the merchants by id, and
 * the people's, references' and reasons' texts (Turkish or not, they are the data's).
 */
export interface SeededNames {
  merchants: Readonly<Record<string, string>>;
  names: readonly string[];
}

/** A Turkish page shows no English-only word and no raw code outside `<code>`, ids, emails, IBANs, URLs and the seeded names. */
export function noEnglishInTurkish(seeded: SeededNames): WalkCheck {
  const names = [...Object.values(seeded.merchants), ...seeded.names].sort((a, b) => b.length - a.length);
  return {
    name: "no English word on a Turkish page",
    width: "desktop",
    async run(page, visit) {
      if (visit.lang !== "tr") return [];
      const { englishOnly, codes } = vocabulary();
      const found = new Map<string, string>();
      for (const piece of await piecesOf(page)) {
        if (piece.code) continue;
        let text = piece.text;
        for (const name of names) text = text.split(name).join(" ");
        const tokens = text.split(/\s+/).filter((t) => t && !DATA_TOKEN.test(t));
        for (const token of codeTokensOf(text)) if (codes.has(token) && !found.has(token)) found.set(token, `the raw code "${token}" in ${piece.where}`);
        for (const word of tokens.flatMap(wordsOf)) if (englishOnly.has(word) && !found.has(word)) found.set(word, `"${word}" in ${piece.where}`);
      }
      return [...found.values()];
    },
  };
}

/** Money-looking strings in the wrong form for the page's language, each with why. */
const WRONG_MONEY: Record<Visit["lang"], ReadonlyArray<[RegExp, string]>> = {
  tr: [
    [/TRY\s?[-−]?\d[\d.,]*/g, "the currency's code before the amount (Turkish: ₺1.234,56)"],
    [/\d[\d.,]*\s?(?:TRY|TL)\b/g, "the currency's code after the amount (Turkish: ₺1.234,56)"],
    [/(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?(?![\d,]|\.\d)/g, "English digit grouping (Turkish: 1.234,56)"],
    [/(?<![\d.,])\d+\.\d{2}(?![\d,]|\.\d)/g, "a decimal point (Turkish: a decimal comma, ₺123,45)"],
  ],
  en: [
    [/₺\s?[-−]?\d[\d.,]*/g, "the lira sign (English: TRY 1,234.56)"],
    [/\d[\d.,]*\s?(?:TRY|TL)\b/g, "the currency's code after the amount (English: TRY 1,234.56)"],
    [/(?<![\d.,])\d{1,3}(?:\.\d{3})*,\d{2}(?![\d.]|,\d)/g, "a decimal comma (English: TRY 1,234.56)"],
  ],
};

/** Every amount in the page's locale's form: `₺1.234,56` in Turkish, `TRY 1,234.56` in English. */
export const amountsInLocale: WalkCheck = {
  name: "amounts in the locale's form",
  width: "desktop",
  async run(page, visit) {
    const problems = new Set<string>();
    for (const piece of await piecesOf(page)) {
      if (piece.code || piece.hint) continue;
      for (const [pattern, why] of WRONG_MONEY[visit.lang]) {
        for (const m of piece.text.matchAll(pattern)) problems.add(`"${m[0]}": ${why}, in ${piece.where}`);
      }
    }
    return [...problems];
  },
};

/**
 * For every merchant id shown as visible text, the text of its table row, list item or
 * definition (else its paragraph or block) and where the id stands in it.
 */
const MERCHANT_IDS = `(() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest("script, style, select, textarea") || !el.checkVisibility({ checkVisibilityCSS: true })) continue;
    for (const m of (node.textContent || "").matchAll(/\\bmer_[A-Za-z0-9_-]{6,}/g)) {
      const box = el.closest("tr, li, dd") || el.closest("p, h1, h2, h3, h4, td, th, div, section") || el;
      const before = document.createRange();
      before.setStart(box, 0);
      before.setEnd(node, m.index);
      const cls = typeof box.className === "string" && box.className.trim() ? "." + box.className.trim().split(/\\s+/).join(".") : "";
      out.push({ id: m[0], text: box.innerText || box.textContent || "", before: before.toString(), where: box.tagName.toLowerCase() + cls });
    }
  }
  return out;
})()`;

/** Wherever a merchant id is shown, the merchant's name is in the same row, item or definition, before it. */
export function everyMerchantNamed(seeded: SeededNames): WalkCheck {
  return {
    name: "every merchant named",
    width: "desktop",
    async run(page) {
      const problems = new Set<string>();
      for (const shown of await page.evaluate<Array<{ id: string; text: string; before: string; where: string }>>(MERCHANT_IDS)) {
        const name = seeded.merchants[shown.id];
        const snippet = shown.text.trim().replace(/\s+/g, " ").slice(0, 120);
        if (!name) problems.add(`${shown.id} is no merchant the walk seeded, in ${shown.where} "${snippet}"`);
        else if (!shown.text.includes(name)) problems.add(`${shown.id} is shown without its name (${name}) in ${shown.where} "${snippet}"`);
        else if (!shown.before.includes(name)) problems.add(`${shown.id} comes before its name (${name}) in ${shown.where} "${snippet}"`);
      }
      return [...problems];
    },
  };
}

/** The checks of what the pages say, for the walk's seeded day. */
export function contentChecks(seeded: SeededNames): WalkCheck[] {
  return [noEnglishInTurkish(seeded), amountsInLocale, everyMerchantNamed(seeded)];
}
