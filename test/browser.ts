import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { eventually } from "@payments/testing";

/** Debian's chromium (browser downloads by test tools do not work here); CHROMIUM_PATH overrides. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Fails at once, naming the fix, when there is no Chromium: call it before starting anything slow. */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}. Install it (apt-get install -y chromium, as .ci/run does) or point CHROMIUM_PATH at a Chromium binary.`);
  }
}

/** Headless Chromium as every browser test here runs it. */
export function launchChromium(): Promise<Browser> {
  assertChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    timeout: 30_000,
  });
}

/**
 * Waits until `expression` is true in the page. Playwright's waitForFunction polls by eval()
 * inside the page, which a page with a strict Content-Security-Policy (the checkout) refuses;
 * page.evaluate goes through the DevTools protocol, which CSP does not govern.
 */
export async function waitUntil(page: Page, expression: string, options: { timeout?: number } = {}): Promise<void> {
  await eventually(() => page.evaluate<boolean>(`Boolean(${expression})`), expression, options.timeout ?? 10_000, 50);
}
