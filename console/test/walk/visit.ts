import type { ConsoleMessage, Page } from "playwright-core";
import { DESKTOP, PHONE, withLang } from "./browser.js";
import { runChecks, type Visit, type WalkCheck } from "./checks.js";

/** The areas a signed-in page's navigation links to (`header nav.areas`), in order: the walk finds new areas by itself. */
export async function areasOf(page: Page): Promise<string[]> {
  const hrefs = await page.evaluate<string[]>(`Array.from(document.querySelectorAll("header nav.areas a"), (a) => a.getAttribute("href") || "")`);
  return [...new Set(hrefs.filter((h) => h.startsWith("/")))];
}

/**
 * Visits every path in each language with one page, at the desktop width and then, resized
 * without reloading, at the phone's, running `checks` at each; also a status other than 200 and
 * anything the browser's console reports as an error (a refused stylesheet or script, a CSP
 * violation) are problems. Returns every problem found, each naming page, language and width.
 */
export async function walk(page: Page, base: string, paths: readonly string[], checks: readonly WalkCheck[], langs: ReadonlyArray<Visit["lang"]> = ["tr", "en"]): Promise<string[]> {
  const problems: string[] = [];
  let errors: string[] = [];
  const onConsole = (message: ConsoleMessage) => {
    if (message.type() === "error") errors.push(message.text());
  };
  const onPageError = (err: Error) => errors.push(err.message);
  page.on("console", onConsole);
  page.on("pageerror", onPageError);
  try {
    for (const lang of langs) {
      for (const path of paths) {
        errors = [];
        await page.setViewportSize(DESKTOP);
        const res = await page.goto(withLang(base, path, lang));
        if (res?.status() !== 200) problems.push(`${path} [${lang}] answered ${res?.status() ?? "nothing"}`);
        problems.push(...(await runChecks(page, { path, lang, width: "desktop" }, checks)));
        await page.setViewportSize(PHONE);
        problems.push(...(await runChecks(page, { path, lang, width: "phone" }, checks)));
        for (const error of errors) problems.push(`${path} [${lang}] the browser reported: ${error}`);
      }
    }
  } finally {
    page.off("console", onConsole);
    page.off("pageerror", onPageError);
  }
  return problems;
}
