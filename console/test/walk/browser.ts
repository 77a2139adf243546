import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Debian's Chromium (a test tool's own browser download does not work here); CHROMIUM_PATH overrides. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** Headless Chromium as the repository's browser tests run it; fails at once, naming the fix, without one. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}. Install it (apt-get install -y chromium, as .ci/run does) or point CHROMIUM_PATH at a Chromium binary.`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"], timeout: 30_000 });
}

/** A browser context at the desktop size (the walk resizes the one page it keeps). */
export function walkContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ viewport: DESKTOP, locale: "tr-TR", timezoneId: "Europe/Istanbul" });
}

/** Signs in through a sign-in form (operators' `/sign-in` or the merchant dashboard's) and waits for the page it leads to. */
export async function signInThroughForm(page: Page, base: string, form: { path: string; email: string; password: string; lands: string }): Promise<void> {
  await page.goto(`${base}${form.path}?lang=en`);
  await page.fill("#field-email", form.email);
  await page.fill("#field-password", form.password);
  await Promise.all([page.waitForURL(`${base}${form.lands}`), page.click(`form[action='${form.path}'] button[type=submit]`)]);
}

/** `path` with `lang=` added to its query. */
export function withLang(base: string, path: string, lang: string): string {
  return `${base}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`;
}
