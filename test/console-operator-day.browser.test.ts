import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import test from "ava";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { TransferStatus } from "@payments/contracts/deposit";
import { assertChromium, launchChromium, waitUntil } from "./browser.js";
import { merchantDeposit, operatorAccount, PASSWORD, reportTo, startStack, type Stack } from "../console/test/service-harness.js";

/*
 * An operators' day in the console, in a real Chromium, against the five services in this
 * process (the console signs with the test operators' key, which they trust): operator 1 is
 * refused the statement import (finance's), finance 1 uploads the file (a short payment waits in
 * review), operator 1 decides that transfer by keyboard alone, finance 1 asks to return a live
 * stray transfer and is told it waits for a second operator, finance 2 approves it in another
 * browser context; reconciliation balances and the audit shows both decisions. Then axe-core
 * on every page, in Turkish and English.
 */

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const OPS = "ops1@example.com";
const FIN1 = "fin1@example.com";
const FIN2 = "fin2@example.com";

let stack: Stack;
let browser: Browser;

test.before(async () => {
  assertChromium();
  stack = await startStack();
  await operatorAccount(stack.c, OPS, "operator");
  await operatorAccount(stack.c, FIN1, "finance");
  await operatorAccount(stack.c, FIN2, "finance");
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

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** axe-core through the DevTools protocol, which the console's CSP does not govern (an injected <script> would be refused, rightly). */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  const result = await page.evaluate<{ violations: AxeViolation[] }>(`axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ["violations"] })`);
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

/** Presses Tab until the focused element matches `selector` (at most `limit` times); false if it never does. */
async function tabTo(page: Page, selector: string, limit = 80): Promise<boolean> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate<boolean>(`document.activeElement !== null && document.activeElement.matches(${JSON.stringify(selector)})`)) return true;
  }
  return false;
}

function mt940(iban: string, amount: string, description: string): string {
  const ref = `DAY${Date.now()}`;
  return [`:20:${ref}`, `:25:${iban}`, ":28C:00001/001", ":60F:C261122TRY0,00", `:61:2611231123C${amount}NTRF${ref}//${ref}`, `:86:${description}`, `:62F:C261123TRY${amount}`, "-"].join("\n");
}

test.serial("an operators' day: statement, a decision by keyboard, a return approved by a second finance operator, balanced books, the audit", async (t) => {
  const reviewed = await merchantDeposit(stack);
  const strayDeposit = await merchantDeposit(stack);
  const stray = await reportTo(stack, strayDeposit, 3_000n, "unknown payment", "");
  t.is(stray.status, TransferStatus.UNMATCHED);
  const statement = mt940(reviewed.assignedAccount!.iban, "490,00", `GELEN EFT AYSE YILMAZ ${reviewed.reference}`);

  const opsContext = await browser.newContext({ locale: "en-US" });
  const fin1Context = await browser.newContext({ locale: "en-US" });
  const fin2Context = await browser.newContext({ locale: "en-US" });
  try {
    // Operator 1 is offered no import: the deposit service wants finance, and the page says so (a replayed POST is the service's to refuse: console/test).
    const ops = await signIn(opsContext, OPS);
    await ops.goto(`${stack.c.url}/statements`);
    t.is(await ops.$("#statement-file"), null, "no upload form for an operator");
    t.regex((await ops.textContent("main")) ?? "", /Importing a statement is finance's work/);

    // Finance 1 uploads the file itself (multipart); the page's script (under the CSP nonce) names it.
    const fin1 = await signIn(fin1Context, FIN1);
    await fin1.goto(`${stack.c.url}/statements`);
    await fin1.setInputFiles("#statement-file", { name: "akbank.sta", mimeType: "text/plain", buffer: Buffer.from(statement) });
    await waitUntil(fin1, `document.getElementById("field-fileName").value === "akbank.sta"`);
    await fin1.click("form[action='/statements'] button[type=submit]");
    t.regex((await fin1.textContent("[role=status]")) ?? "", /The statement akbank\.sta was imported\./);
    const { transfers } = await stack.deposits.listUnmatchedTransfers({ includeReview: true, reviewOnly: true, limit: 500 });
    const inReview = transfers.find((tr) => tr.reviewDepositId === reviewed.id);
    if (!inReview) return t.fail("the short payment is not in review");

    // Operator 1 works the queue by keyboard alone: Tab to the transfer, Enter, Tab to the reason, type, Enter.
    await ops.goto(`${stack.c.url}/transfers`);
    t.true(await tabTo(ops, `a[href="/transfers/${inReview.id}"]`), "the transfer's link is reached by Tab");
    await Promise.all([ops.waitForURL(`${stack.c.url}/transfers/${inReview.id}`), ops.keyboard.press("Enter")]);
    t.true(await tabTo(ops, "#complete-reason"), "the reason of 'complete' is reached by Tab");
    await ops.keyboard.type("bank fee of 10 TRY, accepted");
    await Promise.all([ops.waitForURL(/done=complete/), ops.keyboard.press("Enter")]);
    t.regex((await ops.textContent("[role=status]")) ?? "", /The deposit was completed\./);
    t.is((await stack.deposits.getTransfer({ transferId: inReview.id })).transfer!.status, TransferStatus.MATCHED);

    // Finance 1 returns the live stray transfer: four-eyes.
    await fin1.goto(`${stack.c.url}/transfers/${stray.id}`);
    await fin1.fill("#return-name", "Kemal Sunal");
    await fin1.fill("#return-reason", "no such order");
    await Promise.all([fin1.waitForURL(/approval=/), fin1.click("form:has(input[value=return]) button[type=submit]")]);
    const waiting = (await fin1.textContent("[role=status]")) ?? "";
    t.regex(waiting, /Waiting for a second operator: approval \S+/);
    const approvalHref = await fin1.getAttribute("[role=status] a", "href");
    if (!approvalHref) return t.fail("no link to the approval");
    await fin1.goto(`${stack.c.url}${approvalHref}`);
    t.regex((await fin1.textContent("main")) ?? "", /You asked for this\. A second person must approve it; you may only withdraw it\./);
    t.is(await fin1.$(`form[action="${approvalHref}/approve"]`), null, "the maker has no approve button");

    // Finance 2, in another browser context, approves it from the inbox.
    const fin2 = await signIn(fin2Context, FIN2);
    await fin2.goto(`${stack.c.url}/approvals`);
    await Promise.all([fin2.waitForURL(`${stack.c.url}${approvalHref}`), fin2.click(`a[href="${approvalHref}"]`)]);
    await fin2.fill("#approve-note", "sender confirmed by phone");
    await Promise.all([fin2.waitForURL(/done=approve/), fin2.click(`form[action="${approvalHref}/approve"] button[type=submit]`)]);
    t.regex((await fin2.textContent("main")) ?? "", /You approved it/);
    t.regex((await fin2.textContent("main")) ?? "", /Outcome of the run\s*Done/);
    t.true([TransferStatus.RETURNING, TransferStatus.RETURNED].includes((await stack.deposits.getTransfer({ transferId: stray.id })).transfer!.status));

    // The books balance.
    await fin2.goto(`${stack.c.url}/reconciliation`);
    t.regex((await fin2.textContent("main")) ?? "", /Every account is balanced\./);

    // Both decisions are in the audit: the completion by operator 1, the return by finance 2 as asked by finance 1.
    await fin2.goto(`${stack.c.url}/audit?target=${inReview.id}`);
    const completion = (await fin2.textContent("tbody")) ?? "";
    t.true(completion.includes(OPS) && completion.includes("Transfer resolved") && completion.includes("done"));
    await fin2.goto(`${stack.c.url}/audit?target=${stray.id}`);
    const rows = await fin2.evaluate<string[]>(`Array.from(document.querySelectorAll("tbody tr"), (tr) => tr.textContent || "")`);
    t.true(rows.some((r) => r.includes(FIN2) && r.includes(`asked by fin1 (${FIN1})`) && r.includes("Transfer resolved") && r.includes("done")), rows.join("\n"));
    t.true(rows.some((r) => r.includes(FIN1) && r.includes("Waits for a second person's approval")), rows.join("\n"));

    // Every page: no serious or critical axe violation, in English and Turkish.
    const pages = ["/", "/transfers", `/transfers/${stray.id}`, `/transfers/${inReview.id}`, "/statements", "/approvals", approvalHref, "/audit", `/audit?target=${stray.id}`, "/reconciliation"];
    for (const lang of ["en", "tr"]) {
      for (const path of pages) {
        await fin2.goto(`${stack.c.url}${path}${path.includes("?") ? "&" : "?"}lang=${lang}`);
        t.deepEqual(await seriousViolations(fin2), [], `${path} in ${lang}`);
      }
    }
    const anonymous = await browser.newContext({ locale: "tr-TR" });
    const signInPage = await anonymous.newPage();
    await signInPage.goto(`${stack.c.url}/sign-in`);
    t.deepEqual(await seriousViolations(signInPage), [], "sign-in");
    await anonymous.close();
  } finally {
    await opsContext.close();
    await fin1Context.close();
    await fin2Context.close();
  }
});
