import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import test from "ava";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { Withdrawal } from "@payments/contracts/payout";
import { eventually } from "@payments/testing";
import { assertChromium, launchChromium } from "./browser.js";
import { api, serviceAdminToken } from "../console/test/harness.js";
import { merchantUserAccount } from "../console/test/merchant-harness.js";
import { merchantDeposit, PASSWORD, reportTo, startStack, type Stack } from "../console/test/service-harness.js";

/*
 * Every page of the merchant dashboard (issue 24) in a real Chromium, as its owner (who sees
 * every page and form): axe-core finds no serious or critical violation in Turkish or English;
 * and on a phone (390×844) no page scrolls sideways (a wide table scrolls inside its own box)
 * and the main navigation's links are visible and clickable.
 */

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const OWNER = "a11y-owner@merchant-shop.test";
const PHONE = { width: 390, height: 844 };
const AREAS = ["/merchant", "/merchant/payments", "/merchant/money", "/merchant/developers", "/merchant/team"];

let stack: Stack;
let browser: Browser;
/** The signed-in pages, and the two a visitor sees (sign-in, and set-password through a fresh link). */
let pages: string[];
let publicPages: string[];

test.before(async () => {
  assertChromium();
  stack = await startStack();
  browser = await launchChromium();
  // A live merchant with a paid deposit, a pending one, and a withdrawal.
  const paid = await merchantDeposit(stack);
  await reportTo(stack, paid, paid.requestedAmount, `odeme ${paid.reference}`);
  const merchantId = paid.merchantId;
  const { deposit: pending } = await stack.deposits.createDeposit({ merchantId, processId: "a11y-pending", amount: 25_000n, customer: { id: "c2", name: "Zeynep Kaya", username: "zeynep" } });
  await eventually(async () => (await stack.payouts.getBalances({ merchantId })).balances.some((b) => b.available > 0n), "the deposit credited");
  const created = (await stack.payouts.createWithdrawal({ merchantId, processId: "a11y-w1", amount: 10_000n, accountName: "Ayşe Yılmaz", iban: "TR330006100519786457841326", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })).withdrawal!;
  let withdrawal: Withdrawal | undefined;
  await eventually(async () => {
    withdrawal = (await stack.payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: created.id } })).withdrawal;
    return withdrawal !== undefined;
  }, "the withdrawal");
  await merchantUserAccount(stack, merchantId, OWNER, "owner");
  // A second user's link left unused: its set-password page.
  const invited = await api(stack.c, "POST", `/api/merchants/${merchantId}/users`, { token: await serviceAdminToken(stack.c, "bootstrap-bot"), body: { email: "a11y-viewer@merchant-shop.test", role: "viewer" } });
  if (invited.status !== 201) throw new Error(`invite: ${invited.status} ${JSON.stringify(invited.body)}`);
  const link = new URL((invited.body.link as { url: string }).url);
  pages = [
    "/merchant",
    "/merchant/payments",
    "/merchant/payments?kind=withdrawals",
    "/merchant/payments?kind=deposits&customerName=Zeynep",
    `/merchant/deposits/${paid.id}`,
    `/merchant/deposits/${pending!.id}`,
    `/merchant/withdrawals/${withdrawal!.id}`,
    "/merchant/money",
    "/merchant/developers",
    "/merchant/developers/events",
    // One API key's page (issue 32): the primary key, with its secrets, rotation and the owner's trust form.
    `/merchant/developers/keys/${(await stack.merchants.getMerchant({ merchantId })).merchant!.apiKey}`,
    "/merchant/team",
    "/merchant/team/audit",
    "/merchant/totp",
  ];
  publicPages = ["/merchant/sign-in", `${link.pathname}${link.search}`];
});

test.after.always(async () => {
  await (browser as Browser | undefined)?.close();
  await (stack as Stack | undefined)?.stop();
});

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core through the DevTools protocol, which the console's CSP does not govern. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  const result = await page.evaluate<{ violations: AxeViolation[] }>(`axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ["violations"] })`);
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

async function signedIn(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${stack.c.url}/merchant/sign-in?lang=en`);
  await page.fill("#field-email", OWNER);
  await page.fill("#field-password", PASSWORD);
  await Promise.all([page.waitForURL(`${stack.c.url}/merchant`), page.click("form[action='/merchant/sign-in'] button[type=submit]")]);
  return page;
}

const withLang = (path: string, lang: string) => `${stack.c.url}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`;

test.serial("every merchant page, in Turkish and English: no serious or critical axe violation", async (t) => {
  const context = await browser.newContext({ locale: "tr-TR" });
  const visitor = await browser.newContext({ locale: "tr-TR" });
  try {
    const page = await signedIn(context);
    const anonymous = await visitor.newPage();
    for (const lang of ["tr", "en"]) {
      for (const [tab, list] of [
        [page, pages],
        [anonymous, publicPages],
      ] as const) {
        for (const path of list) {
          const res = await tab.goto(withLang(path, lang));
          t.is(res?.status(), 200, `${path} in ${lang}`);
          t.is(await tab.getAttribute("html", "lang"), lang, `${path} in ${lang}`);
          t.deepEqual(await seriousViolations(tab), [], `${path} in ${lang}`);
        }
      }
    }
  } finally {
    await context.close();
    await visitor.close();
  }
});

test.serial("on a phone (390×844), no merchant page scrolls sideways and the main navigation is visible and clickable", async (t) => {
  const context = await browser.newContext({ locale: "tr-TR", viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const visitor = await browser.newContext({ locale: "tr-TR", viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  context.setDefaultTimeout(5_000);
  visitor.setDefaultTimeout(5_000);
  try {
    const page = await signedIn(context);
    const anonymous = await visitor.newPage();
    for (const lang of ["tr", "en"]) {
      for (const path of pages) {
        await page.goto(withLang(path, lang));
        const width = await page.evaluate<number>("document.documentElement.scrollWidth");
        t.true(width <= PHONE.width, `${path} in ${lang} is ${width} px wide`);
        for (const area of AREAS) {
          const link = page.locator(`nav.areas a[href="${area}"]`);
          t.true(await link.isVisible(), `${path} in ${lang}: the link to ${area} is visible`);
          // Playwright's actionability checks (visible, stable, enabled, not covered), without the click.
          await t.notThrowsAsync(link.click({ trial: true }), `${path} in ${lang}: the link to ${area} is clickable`);
        }
      }
      for (const path of publicPages) {
        await anonymous.goto(withLang(path, lang));
        const width = await anonymous.evaluate<number>("document.documentElement.scrollWidth");
        t.true(width <= PHONE.width, `${path} in ${lang} is ${width} px wide`);
        await t.notThrowsAsync(anonymous.locator("form button[type=submit]").first().click({ trial: true }), `${path} in ${lang}: the form's button is clickable`);
      }
    }
    // And the navigation works by touch: a tap on Money opens it.
    await page.goto(withLang("/merchant", "en"));
    await Promise.all([page.waitForURL(`${stack.c.url}/merchant/money`), page.tap(`nav.areas a[href="/merchant/money"]`)]);
    t.is(await page.textContent("h1"), "Money");
  } finally {
    await context.close();
    await visitor.close();
  }
});
