import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { IN_PAGE } from "./in-page.js";

/**
 * What the walk checks on every page it visits, one function each, each returning the problems
 * it found (empty: none). A check gets the page as the browser shows it and where it is; the walk
 * (walk.test.ts) runs every check of the list it is given on every page, language and width, and
 * reports all problems at the end. The checks of what a page says (Turkish pages without English
 * words, amounts in the locale's form, every merchant named) are in content.ts, of the same shape.
 */
export interface Visit {
  path: string;
  lang: "tr" | "en";
  width: "desktop" | "phone";
}

export interface WalkCheck {
  name: string;
  /** Only at this width (both when unset). */
  width?: Visit["width"];
  run(page: Page, visit: Visit): Promise<string[]>;
}

/** Nothing scrolls sideways: the document is no wider than the window. */
export const noSidewaysScroll: WalkCheck = {
  name: "no sideways scroll",
  async run(page) {
    const { scrollWidth, innerWidth, widest } = await page.evaluate<{ scrollWidth: number; innerWidth: number; widest: string }>(IN_PAGE.sideways);
    return scrollWidth <= innerWidth ? [] : [`the page is ${scrollWidth} px wide in a ${innerWidth} px window${widest ? `; widest: ${widest}` : ""}`];
  },
};

/** No box of the page scrolls sideways either (a table that only fits inside a scrolling box does not fit). */
export const noScrollingBoxes: WalkCheck = {
  name: "no box scrolls sideways",
  async run(page) {
    return page.evaluate<string[]>(IN_PAGE.scrollingBoxes);
  },
};

/**
 * No word broken inside a table cell: every whitespace-separated word of every text in a
 * `<td>` or `<th>` (a `<pre>` dump aside) lies on one line — its Range's client rectangles all
 * share one line box. A word the browser split (overflow-wrap:anywhere, word-break:break-all,
 * or a break at a hyphen) has rectangles on two lines.
 */
export const noBrokenWordsInCells: WalkCheck = {
  name: "no word broken in a table cell",
  async run(page) {
    return page.evaluate<string[]>(IN_PAGE.brokenWords);
  },
};

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
}

/**
 * axe-core finds no serious or critical violation. It is evaluated through the DevTools
 * protocol, which the console's CSP does not govern (an inline `<script>` tag, addScriptTag's
 * way, is refused by the CSP, as it should be).
 */
export const axeClean: WalkCheck = {
  name: "axe: no serious or critical violation",
  async run(page) {
    if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
    const result = await page.evaluate<AxeResult>(`axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ["violations"] })`);
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 5).join(", ")}`);
  },
};

/** The console's stylesheet loaded (same origin, its integrity hash matched, the CSP allowed it) and nothing was refused. */
export const stylesheetLoaded: WalkCheck = {
  name: "the stylesheet loaded",
  width: "desktop",
  async run(page) {
    const rules = await page.evaluate<number>(IN_PAGE.cssRules);
    return rules > 100 ? [] : [`only ${rules} CSS rules applied: the stylesheet did not load`];
  },
};

/** The layout's checks: the walk's first list. */
export const LAYOUT_CHECKS: readonly WalkCheck[] = [stylesheetLoaded, noSidewaysScroll, noScrollingBoxes, noBrokenWordsInCells, axeClean];

/** Runs every check of `checks` that applies at the visit's width; each problem names where. */
export async function runChecks(page: Page, visit: Visit, checks: readonly WalkCheck[]): Promise<string[]> {
  const problems: string[] = [];
  for (const check of checks) {
    if (check.width && check.width !== visit.width) continue;
    for (const problem of await check.run(page, visit)) problems.push(`${visit.path} [${visit.lang}, ${visit.width}] ${check.name}: ${problem}`);
  }
  return problems;
}
