import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import test from "ava";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { assertChromium, launchChromium } from "./browser.js";
import { operatorAccount, PASSWORD, startStack, type Stack } from "../console/test/service-harness.js";

/*
 * Four-eyes between people on the operators' console pages (issue 32), by clicks in a real
 * Chromium: one admin asks for a live merchant and invites a merchant user; each waits, and the
 * page says so with a link to the approval. A second admin, on a phone, approves both on the
 * approvals page and is shown the live merchant's secrets and the user's one-time link, once.
 * Every page on the way: no serious or critical axe violation in Turkish and English, and none
 * scrolls sideways at 1280 or 390 px.
 */

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const MAKER = "maker-admin@example.com";
const APPROVER = "approver-admin@example.com";
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let stack: Stack;
let browser: Browser;

test.before(async () => {
  assertChromium();
  stack = await startStack();
  await operatorAccount(stack.c, MAKER, "admin");
  await operatorAccount(stack.c, APPROVER, "admin");
  browser = await launchChromium();
});

test.after.always(async () => {
  await (browser as Browser | undefined)?.close();
  await (stack as Stack | undefined)?.stop();
});

async function signIn(context: BrowserContext, email: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${stack.c.url}/sign-in?lang=en`);
  await page.fill("#field-email", email);
  await page.fill("#field-password", PASSWORD);
  await Promise.all([page.waitForURL(`${stack.c.url}/`), page.click("button[type=submit]")]);
  return page;
}

/** axe-core through the DevTools protocol (the console's CSP refuses an injected script, rightly). */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  const result = await page.evaluate<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }>(
    `axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ["violations"] })`,
  );
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

/** The page as it is now: no serious axe violation, and nothing wider than the window. */
async function checkPage(t: import("ava").ExecutionContext, page: Page, what: string): Promise<void> {
  t.deepEqual(await seriousViolations(page), [], what);
  const widths = await page.evaluate<{ scroll: number; inner: number }>("({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })");
  t.true(widths.scroll <= widths.inner, `${what}: ${widths.scroll} px wide in a ${widths.inner} px window`);
}

test.serial("one admin asks (a live merchant, a merchant user); a second admin on a phone approves on the approvals page and alone sees the secrets and the link, once", async (t) => {
  const { merchant } = await stack.merchants.createMerchant({ name: "Davet Mağazası", sandbox: true });
  const makerContext = await browser.newContext({ viewport: DESKTOP, locale: "en-US" });
  const approverContext = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, locale: "tr-TR" });
  try {
    const maker = await signIn(makerContext, MAKER);
    // A live merchant: it waits, and the list says so with the approval's link.
    await maker.goto(`${stack.c.url}/merchants?lang=en`);
    await maker.fill("#create-name", "Canlı Mağaza");
    await maker.selectOption("#create-kind", "live");
    await Promise.all([maker.waitForURL(/\/merchants\?approval=apr_/), maker.click("form[action='/merchants'][method=post] button[type=submit]")]);
    t.regex((await maker.textContent("[role=status]")) ?? "", /A live merchant waits for a second admin/);
    const merchantApproval = (await maker.getAttribute("[role=status] a", "href")) ?? "";
    t.regex(merchantApproval, /^\/approvals\/merchant\/apr_/);
    await checkPage(t, maker, "the live merchant waiting");

    // A merchant user invited from the merchant's page: it waits too; no link for the maker.
    await maker.goto(`${stack.c.url}/merchants/${merchant!.id}?lang=en`);
    await maker.fill("#invite-email", "patron@davet.test");
    await maker.selectOption("#invite-role", "owner");
    await maker.click("form[action$='/users/invite'] button[type=submit]");
    await maker.waitForSelector("[role=status] a[href^='/approvals/console/']");
    t.regex((await maker.textContent("[role=status]")) ?? "", /waits for a second admin/);
    t.is(await maker.$("#invite-link"), null);
    const inviteApproval = (await maker.getAttribute("[role=status] a", "href")) ?? "";
    await checkPage(t, maker, "the invite waiting");
    // The maker's own view of it: waiting for someone else, no approve button.
    await maker.goto(`${stack.c.url}${inviteApproval}?lang=en`);
    t.regex((await maker.textContent("main")) ?? "", /You asked for this: it waits for someone else to approve it\./);
    t.is(await maker.$(`form[action='${inviteApproval}/approve']`), null);

    // The second admin, on a phone, in Turkish: the inbox lists both.
    const approver = await signIn(approverContext, APPROVER);
    await approver.goto(`${stack.c.url}/approvals?lang=tr`);
    t.truthy(await approver.$(`a[href='${inviteApproval}']`));
    t.truthy(await approver.$(`a[href='${merchantApproval}']`));
    await checkPage(t, approver, "the inbox on a phone");

    await approver.click(`a[href='${inviteApproval}']`);
    await approver.waitForURL(new RegExp(`${inviteApproval}$`));
    await checkPage(t, approver, "an account change on a phone");
    await Promise.all([approver.waitForSelector("#sign-in-link"), approver.click(`form[action='${inviteApproval}/approve'] button[type=submit]`)]);
    t.regex((await approver.textContent("#sign-in-link")) ?? "", /\/merchant\/set-password\?token=/);
    await checkPage(t, approver, "the link shown once");

    await approver.goto(`${stack.c.url}${merchantApproval}?lang=tr`);
    await Promise.all([approver.waitForSelector("dl.facts code"), approver.click(`form[action='${merchantApproval}/approve'] button[type=submit]`)]);
    const shown = (await approver.textContent("main")) ?? "";
    t.regex(shown, /canlı üye işyeri oluşturuldu/);
    t.regex(shown, /whsec_/);
    await checkPage(t, approver, "the live merchant's secrets on a phone");

    // Both languages, both widths, on the pages of this flow once decided.
    for (const [page, width] of [
      [maker, "1280"],
      [approver, "390"],
    ] as const) {
      for (const lang of ["en", "tr"]) {
        for (const path of ["/approvals", inviteApproval, merchantApproval, `/merchants?approval=${merchantApproval.split("/").pop()}`]) {
          const res = await page.goto(`${stack.c.url}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`);
          t.is(res?.status(), 200, `${path} in ${lang}`);
          await checkPage(t, page, `${path} in ${lang} at ${width} px`);
        }
      }
    }
    // The secrets are not on the approval's page any more (its stored answer has them left out).
    await approver.goto(`${stack.c.url}${merchantApproval}?lang=en`);
    t.notRegex((await approver.textContent("main")) ?? "", /whsec_[A-Za-z0-9]/);
  } finally {
    await makerContext.close();
    await approverContext.close();
  }
});
