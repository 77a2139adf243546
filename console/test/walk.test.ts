import test from "ava";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startStack, type Stack } from "./service-harness.js";
import { launchChromium, signInThroughForm, walkContext } from "./walk/browser.js";
import { LAYOUT_CHECKS, type WalkCheck } from "./walk/checks.js";
import { contentChecks } from "./walk/content.js";
import { seedDay, type SeededDay } from "./walk/seed.js";
import { areasOf, walk } from "./walk/visit.js";

/*
 * The browser walk: a realistic day seeded through the services, then every signed-in page of
 * an operator (an admin, who sees every form) and of a merchant's owner, in Turkish and English,
 * at 1280×800 and 390×844, in Debian's Chromium. On every page: the stylesheet loads under the
 * CSP, nothing scrolls sideways (neither the page nor a box in it), no word is broken inside a
 * table cell, axe-core finds no serious or critical violation, the browser reports no error; and
 * what it says (walk/content.ts): a Turkish page has no English-only word and no raw code outside
 * `<code>`, ids and the seeded names (the words learnt from the product's own dictionaries), every
 * amount is in the locale's form (₺1.234,56 / TRY 1,234.56), every merchant id shown has its
 * merchant's name before it in the same row, item or definition.
 * The areas come from each side's navigation, so a new area is walked without changing this file.
 */

let stack: Stack;
let browser: Browser;
let day: SeededDay;
let checks: WalkCheck[];

test.before(async () => {
  browser = await launchChromium();
  stack = await startStack();
  day = await seedDay(stack);
  checks = [...LAYOUT_CHECKS, ...contentChecks(day.seeded)];
});

test.after.always(async () => {
  await (browser as Browser | undefined)?.close();
  await (stack as Stack | undefined)?.stop();
});

async function signedIn(form: { path: string; email: string; password: string; lands: string }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await walkContext(browser);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await signInThroughForm(page, stack.c.url, form);
  return { context, page };
}

/** Each side walked: whose pages, how it signs in, how many areas its navigation has at least, and the detail pages the day seeded for it. */
const SIDES = [
  { whose: "operator's", signIn: () => ({ path: "/sign-in", email: day.admin.email, password: day.admin.password, lands: "/" }), areas: 10, details: () => day.operatorDetails },
  { whose: "merchant user's", signIn: () => ({ path: "/merchant/sign-in", email: day.merchantUser.email, password: day.merchantUser.password, lands: "/merchant" }), areas: 5, details: () => day.merchantDetails },
];

for (const side of SIDES) {
  for (const lang of ["tr", "en"] as const) {
    test.serial(`every ${side.whose} page in ${lang === "tr" ? "Turkish" : "English"}, at 1280 and 390 px: it fits, no word is broken in a cell, axe is clean, its words, amounts and merchants read right`, async (t) => {
      t.timeout(180_000);
      const { context, page } = await signedIn(side.signIn());
      try {
        const areas = await areasOf(page);
        t.true(areas.length >= side.areas, `the navigation lists the areas: ${areas.join(" ")}`);
        const pages = [...areas, ...side.details()];
        t.deepEqual(await walk(page, stack.c.url, pages, checks, [lang]), []);
        t.log(`${pages.length} pages`);
      } finally {
        await context.close();
      }
    });
  }
}
