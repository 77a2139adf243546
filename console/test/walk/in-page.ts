/**
 * What the checks measure inside the page, as expressions evaluated there (through the DevTools
 * protocol, which the page's CSP does not govern). Plain JavaScript in strings: the tests are
 * compiled without the DOM's types.
 */
export const IN_PAGE = {
  /** The document's width, the window's, and the element that sticks out furthest (to name the culprit). */
  sideways: `(() => {
    const limit = window.innerWidth;
    let widest = "";
    let right = limit;
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > right + 1) {
        right = r.right;
        const cls = typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\\s+/).join(".") : "";
        widest = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + " (right edge " + Math.round(r.right) + " px)";
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: limit, widest };
  })()`,

  /** Every box of the page's content that scrolls sideways (form controls and pre dumps aside). */
  scrollingBoxes: `Array.from(document.querySelectorAll("main *"))
    .filter((el) => !["TEXTAREA", "SELECT", "INPUT", "PRE"].includes(el.tagName))
    .filter((el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX) && el.scrollWidth > el.clientWidth + 1)
    .map((el) => el.tagName.toLowerCase() + (el.getAttribute("aria-label") ? ' "' + el.getAttribute("aria-label") + '"' : "") + " scrolls: " + el.scrollWidth + " px of content in " + el.clientWidth + " px")`,

  /** Each word of a table cell's text whose Range lies on more than one line. */
  brokenWords: `(() => {
    const problems = [];
    for (const cell of document.querySelectorAll("td, th")) {
      if (cell.getClientRects().length === 0) continue;
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement && node.parentElement.closest("pre")) continue;
        const text = node.textContent || "";
        for (const m of text.matchAll(/\\S+/g)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0 && r.height > 0);
          if (rects.length < 2) continue;
          const tops = rects.map((r) => r.top);
          const lineHeight = Math.min(...rects.map((r) => r.height));
          if (Math.max(...tops) - Math.min(...tops) >= lineHeight / 2) {
            const caption = cell.closest("table") && cell.closest("table").querySelector("caption");
            const label = cell.getAttribute("data-label") || (caption ? caption.textContent.trim() : "");
            problems.push('"' + m[0] + '" is broken across lines in a ' + cell.tagName.toLowerCase() + (label ? " (" + label + ")" : ""));
          }
        }
      }
    }
    return problems;
  })()`,

  /** How many CSS rules the page's stylesheets brought. */
  cssRules: `Array.from(document.styleSheets).reduce((n, sheet) => n + sheet.cssRules.length, 0)`,
} as const;
