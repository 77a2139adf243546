import { readFile } from "node:fs/promises";
import test from "ava";
import { parse as parseCsv } from "csv-parse/sync";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { eventually, spawnAllInOne, type AllInOneProcess } from "@payments/testing";
import { PaymentsClient } from "../packages/sdk/src/index.js";
import { assertChromium, launchChromium } from "./browser.js";

/*
 * The merchant dashboard's walk of issue 24, by clicks and typing in a real Chromium, on the
 * real `pnpm start` process (gateway, services and the console, which serves both audiences): a
 * sandbox merchant with paid deposits (POST /v1/deposit and the sandbox pay endpoint, signed
 * with its API key); our side invites its owner (`pnpm cli merchant user invite`), who sets a
 * password through the link and signs in; the owner invites a finance user on the Team page;
 * the finance user, in a second browser context, sets a password, signs in, finds a deposit
 * by the customer's name on Payments and opens it, downloads the statement CSV from Money
 * (its totals equal GET /v1/statement of the same days), and creates a withdrawal to a TR
 * IBAN; the owner then sees the invite and the withdrawal in the merchant's audit trail.
 */

const PASSWORD = "correct horse battery staple";
const OWNER = "owner@dashboard-shop.test";
const FINANCE = "finance@dashboard-shop.test";
const IBAN = "TR330006100519786457841326";

let app: AllInOneProcess;
let consoleUrl: string;
let browser: Browser;

test.before(async () => {
  assertChromium();
  app = await spawnAllInOne({ SANDBOX_PAYOUT_DELAY: "50ms", PAYOUT_WORKER_INTERVAL: "100ms" });
  // The ready line (JSON) names the console's address.
  for (const line of app.logLines) {
    if (!line.startsWith("{") || !line.includes("ready")) continue;
    const entry = JSON.parse(line) as { console?: string };
    if (entry.console) consoleUrl = entry.console;
  }
  if (!consoleUrl) throw new Error(`no console in the ready line:\n${app.logLines.join("\n")}`);
  browser = await launchChromium();
});

test.after.always(async () => {
  await (browser as Browser | undefined)?.close();
  await (app as AllInOneProcess | undefined)?.stop();
});

/** The one-time link's path on this console (the link names CONSOLE_PUBLIC_URL's host, the same server). */
function onConsole(link: string, lang = "en"): string {
  const url = new URL(link);
  url.searchParams.set("lang", lang);
  return `${consoleUrl}${url.pathname}${url.search}`;
}

/** Opens a one-time link, sets the password, and signs in at /merchant/sign-in: the page lands on the dashboard's home. */
async function acceptInvite(context: BrowserContext, link: string, email: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(onConsole(link));
  await page.fill("#field-password", PASSWORD);
  await page.fill("#field-confirm", PASSWORD);
  await Promise.all([page.waitForURL(/\/merchant\/sign-in\?done=password/), page.click("form[action='/merchant/set-password'] button[type=submit]")]);
  await page.fill("#field-email", email);
  await page.fill("#field-password", PASSWORD);
  await Promise.all([page.waitForURL(`${consoleUrl}/merchant`), page.click("form[action='/merchant/sign-in'] button[type=submit]")]);
  return page;
}

/** A click on the main navigation's link to `path`, as a person moves between the areas. */
async function navigate(page: Page, path: string): Promise<void> {
  await Promise.all([page.waitForURL(`${consoleUrl}${path}`), page.click(`nav.areas a[href="${path}"]`)]);
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test.serial("an owner invited by us, a finance user invited by the owner: a deposit found by name, the statement CSV equal to the API's, a withdrawal, both in the audit trail", async (t) => {
  // The merchant and its money, through the gateway as the merchant's own server does it.
  const made = await app.cli(["merchant", "create", "--name", "Dashboard Shop", "--sandbox", "--ip", "127.0.0.1,::1", "--json"]);
  t.is(made.code, 0, made.stderr);
  const creds = JSON.parse(made.stdout.trim()) as { merchantId: string; apiKey: string; apiSecret: string };
  const client = new PaymentsClient({ baseUrl: app.gatewayUrl, apiKey: creds.apiKey, apiSecret: creds.apiSecret });
  const zeynep = await client.createDeposit({ processId: "dash-order-1", amount: 150_050, customer: { id: "cus_zk", name: "Zeynep Kaya", username: "zeynep" } });
  const ayse = await client.createDeposit({ processId: "dash-order-2", amount: 20_000, customer: { id: "cus_ay", name: "Ayşe Yılmaz", username: "ayse" } });
  await client.createDeposit({ processId: "dash-order-3", amount: 5_000, customer: { id: "cus_md", name: "Mehmet Demir", username: "mehmet" } });
  await client.sandbox.payDeposit(zeynep.transactionId);
  await client.sandbox.payDeposit(ayse.transactionId);
  await eventually(async () => ((await client.balance()).balances.find((b) => b.currency === "TRY")?.available ?? 0) === 170_050, "both deposits credited", 15_000);

  // Our side invites the owner.
  const invited = await app.cli(["merchant", "user", "invite", "--merchant", creds.merchantId, "--email", OWNER, "--role", "owner", "--name", "Owner Öztürk", "--json"], { CONSOLE_URL: consoleUrl });
  t.is(invited.code, 0, invited.stderr);
  const ownerLink = (JSON.parse(invited.stdout.trim()) as { link: { url: string } }).link.url;

  const ownerContext = await browser.newContext({ locale: "en-US" });
  const financeContext = await browser.newContext({ locale: "en-US", acceptDownloads: true });
  ownerContext.setDefaultTimeout(10_000);
  financeContext.setDefaultTimeout(10_000);
  try {
    const owner = await acceptInvite(ownerContext, ownerLink, OWNER);
    t.regex((await owner.textContent("header")) ?? "", /Owner Öztürk/);

    // The owner invites a finance user on the Team page; the link is shown once.
    await navigate(owner, "/merchant/team");
    await owner.fill("#field-email", FINANCE);
    await owner.fill("#field-displayName", "Fatma Finans");
    await owner.selectOption("#invite-role", "finance");
    await owner.click("form[action='/merchant/team/invite'] button[type=submit]");
    const financeLink = ((await owner.textContent("#invite-link")) ?? "").trim();
    t.regex(financeLink, /\/merchant\/set-password\?token=/);
    t.regex((await owner.textContent("main table")) ?? "", new RegExp(FINANCE));

    // The finance user, in another browser, takes the link.
    const finance = await acceptInvite(financeContext, financeLink, FINANCE);
    t.regex((await finance.textContent("header")) ?? "", /Fatma Finans/);

    // Finds Zeynep's deposit by her name on Payments, and opens it.
    await navigate(finance, "/merchant/payments");
    await finance.fill("#field-customerName", "Zeynep");
    await Promise.all([finance.waitForURL(/customerName=Zeynep/), finance.click("form[action='/merchant/payments'] button[type=submit]")]);
    const found = await finance.evaluate<string[]>(`Array.from(document.querySelectorAll("main tbody tr"), (tr) => tr.textContent || "")`);
    t.is(found.length, 1, found.join("\n"));
    t.true(found[0]?.includes("Zeynep Kaya"), found.join("\n"));
    await Promise.all([finance.waitForURL(`${consoleUrl}/merchant/deposits/${zeynep.transactionId}`), finance.click(`main tbody a[href="/merchant/deposits/${zeynep.transactionId}"]`)]);
    const detail = (await finance.textContent("main")) ?? "";
    t.true(detail.includes(zeynep.transactionId) && detail.includes("Zeynep Kaya") && detail.includes("dash-order-1"), detail);

    // The statement of yesterday and today (UTC days, as the API's) from Money, and its CSV.
    const from = utcDay(Date.now() - 86_400_000);
    const to = utcDay(Date.now());
    await navigate(finance, "/merchant/money");
    await finance.fill("#statement-from", from);
    await finance.fill("#statement-to", to);
    await Promise.all([finance.waitForURL(/\/merchant\/money\?from=/), finance.click("form[action='/merchant/money'] button[type=submit]")]);
    const [download] = await Promise.all([finance.waitForEvent("download"), finance.click(`a[href^="/merchant/statement.csv"][href*="locale=en"]`)]);
    t.regex(download.suggestedFilename(), /^statement-TRY-.*\.csv$/);
    const csvText = await readFile(await download.path(), "utf8");
    const rows: string[][] = parseCsv(csvText, { bom: true, skip_empty_lines: true });
    const api = await client.statement({ from, to });
    const opening = rows.find((r) => r[1] === "opening_balance");
    const closing = rows.find((r) => r[1] === "closing_balance");
    const movements = rows.slice(1).filter((r) => r[1] !== "opening_balance" && r[1] !== "closing_balance");
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const amounts = movements.map((r) => Number(r[2]));
    t.is(Number(opening?.[4]), api.openingBalance, "opening balance");
    t.is(Number(closing?.[4]), api.closingBalance, "closing balance");
    t.is(sum(amounts.filter((a) => a > 0)), sum(api.movements.map((m) => m.amount).filter((a) => a > 0)), "credits");
    t.is(sum(amounts.filter((a) => a < 0)), sum(api.movements.map((m) => m.amount).filter((a) => a < 0)), "debits");
    t.deepEqual(movements.map((r) => [r[1], r[6]]), api.movements.map((m) => [m.kind, m.transactionId]), "the same movements, in order");
    t.is(api.closingBalance - api.openingBalance, 170_050);

    // A withdrawal to a TR IBAN, on Money.
    await finance.fill("#withdraw-amount", "100");
    await finance.fill("#withdraw-iban", IBAN);
    await finance.fill("#withdraw-holder", "Fatma Finans");
    // First the review: amount, IBAN, holder and the bank read from the IBAN; nothing is created yet.
    await Promise.all([finance.waitForURL(`${consoleUrl}/merchant/money/withdrawals`), finance.click("form[action='/merchant/money/withdrawals'] button[type=submit]")]);
    t.regex((await finance.textContent("main")) ?? "", /Fatma Finans/);
    await Promise.all([finance.waitForURL(/[?&]created=wdr_/), finance.click("button[name=step][value=confirm]")]);
    const withdrawalId = new URL(finance.url()).searchParams.get("created")!;
    t.regex((await finance.textContent("main [role=status]")) ?? "", new RegExp(withdrawalId));
    const withdrawal = await client.getWithdrawal(withdrawalId);
    t.like(withdrawal, { amount: 10_000, iban: IBAN, accountName: "Fatma Finans" });

    // The owner, back in the first browser, sees both in the merchant's audit trail.
    await navigate(owner, "/merchant/team");
    await Promise.all([owner.waitForURL(`${consoleUrl}/merchant/team/audit`), owner.click(`main a[href="/merchant/team/audit"]`)]);
    const trail = await owner.evaluate<string[]>(`Array.from(document.querySelectorAll("main tbody tr"), (tr) => tr.textContent || "")`);
    t.true(
      trail.some((r) => r.includes(OWNER) && r.includes("Merchant user invited") && r.includes(FINANCE) && r.includes("as finance") && r.includes("done")),
      `the invite:\n${trail.join("\n")}`,
    );
    // And our side's invite of the owner, by the CLI's operator.
    t.true(
      trail.some((r) => r.includes("cli-test") && r.includes("Merchant user invited") && r.includes(OWNER) && r.includes("as owner")),
      `the owner's invite:\n${trail.join("\n")}`,
    );
    t.true(
      trail.some((r) => r.includes(FINANCE) && r.includes("Withdrawal created") && r.includes(withdrawalId) && r.includes("done")),
      `the withdrawal:\n${trail.join("\n")}`,
    );
  } finally {
    await ownerContext.close();
    await financeContext.close();
  }
});
