import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import test from "ava";
import type { Browser, Page } from "playwright-core";
import type { CallbackEvent } from "@payments/contracts/callback";
import type { Withdrawal } from "@payments/contracts/payout";
import { eventually } from "@payments/testing";
import { assertChromium, launchChromium } from "./browser.js";
import { merchantDeposit, operatorAccount, PASSWORD, reportTo, startStack, type Stack } from "../console/test/service-harness.js";

/*
 * axe-core on every page of the console added after the operators' day (deposits, withdrawals
 * and their queue, callbacks, merchants, receiving accounts, banks, the statement upload), in
 * Turkish and English, as an admin (who sees every form) in a real Chromium: no serious or
 * critical violation.
 */

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const ADMIN = "a11y-admin@example.com";

let stack: Stack;
let browser: Browser;

test.before(async () => {
  assertChromium();
  stack = await startStack();
  await operatorAccount(stack.c, ADMIN, "admin");
  browser = await launchChromium();
});

test.after.always(async () => {
  await (browser as Browser | undefined)?.close();
  await (stack as Stack | undefined)?.stop();
});

async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  const result = await page.evaluate<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }>(
    `axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ["violations"] })`,
  );
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

test.serial("every new page of the console, in Turkish and English: no serious or critical axe violation", async (t) => {
  // A paid live deposit (its callback), a live withdrawal left to an operator, a pending deposit.
  const paid = await merchantDeposit(stack);
  await reportTo(stack, paid, paid.requestedAmount, `odeme ${paid.reference}`);
  const pending = await merchantDeposit(stack, { sandbox: true });
  await eventually(async () => (await stack.payouts.getBalances({ merchantId: paid.merchantId })).balances.some((b) => b.available > 0n), "the deposit credited");
  const created = (await stack.payouts.createWithdrawal({ merchantId: paid.merchantId, processId: "a11y-1", amount: 10_000n, accountName: "Ayşe Yılmaz", iban: "TR330006100519786457841326", userId: "u1", userName: "ayse", name: "Ayşe Yılmaz" })).withdrawal!;
  let withdrawal: Withdrawal | undefined;
  await eventually(async () => {
    withdrawal = (await stack.payouts.getWithdrawal({ allMerchants: true, key: { case: "withdrawalId", value: created.id } })).withdrawal;
    return withdrawal?.awaitingOperator === true;
  }, "the withdrawal awaits an operator");
  let event: CallbackEvent | undefined;
  await eventually(async () => {
    event = (await stack.callbacks.listEvents({ allMerchants: true, transactionId: paid.id, limit: 5 })).events[0];
    return event !== undefined;
  }, "the callback event");
  const bank = (await stack.bankCatalog.listBanks({})).banks[0]!;

  const context = await browser.newContext({ locale: "en-US" });
  try {
    const page = await context.newPage();
    await page.goto(`${stack.c.url}/sign-in?lang=en`);
    await page.fill("#field-email", ADMIN);
    await page.fill("#field-password", PASSWORD);
    await Promise.all([page.waitForURL(`${stack.c.url}/`), page.click("button[type=submit]")]);

    const pages = [
      "/",
      "/deposits",
      `/deposits?merchant=${paid.merchantId}&status=completed`,
      `/deposits/${paid.id}`,
      `/deposits/${pending.id}`,
      "/withdrawals",
      `/withdrawals/${withdrawal!.id}`,
      "/withdrawals/awaiting",
      "/events",
      `/events/${event!.id}`,
      "/merchants",
      `/merchants/${paid.merchantId}`,
      "/accounts",
      "/banks",
      `/banks/${bank.id}`,
      "/statements",
    ];
    for (const lang of ["en", "tr"]) {
      for (const path of pages) {
        const res = await page.goto(`${stack.c.url}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`);
        t.is(res?.status(), 200, `${path} in ${lang}`);
        t.deepEqual(await seriousViolations(page), [], `${path} in ${lang}`);
      }
    }
    // The page that shows a new merchant's secrets once.
    await page.goto(`${stack.c.url}/merchants?lang=tr`);
    await page.fill("#create-name", "Erişilebilir Mağaza");
    await Promise.all([page.waitForURL(`${stack.c.url}/merchants`), page.click("form[action='/merchants'][method=post] button[type=submit]")]);
    t.regex((await page.textContent("[role=status]")) ?? "", /yalnızca bu kez/);
    t.deepEqual(await seriousViolations(page), [], "the secrets page");
  } finally {
    await context.close();
  }
});
