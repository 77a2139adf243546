import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Browser, type Page } from "playwright-core";
import { assertChromium, launchChromium, waitUntil } from "./browser.js";
import { startAllInOne, type AllInOne } from "@payments/all-in-one";
import { DepositService, type Deposit } from "@payments/contracts/deposit";
import { MerchantService } from "@payments/contracts/merchant";
import { createServiceClient, TEST_OPERATOR_KEYS_ENV } from "@payments/testing";
import type { Client } from "@connectrpc/connect";

/*
 * What the checkout page tells the customer, and whether everyone can read it: axe-core
 * (WCAG 2.0–2.2 A and AA) in a real Chromium on every state of the page, in Turkish and
 * English, on a desktop and a phone; then the live region, the focus after a status change,
 * the deadline in Türkiye's time and the link back to the merchant.
 *
 * Deposits are made through the deposit service's CreateDeposit with a return URL, for a
 * sandbox merchant with a display name, and moved to each final state by the service's own
 * RPCs, so the page is the one a real deposit gets.
 *
 * The clock stands still at 20:11 UTC: every deposit expires at 20:41 UTC, 23:41 in Türkiye,
 * so the deadline has one right text, and no deposit expires under a slow test.
 */

const NOW = new Date("2026-11-25T20:11:00.000Z");
const EXPIRES_AT = "2026-11-25T20:41:00.000Z";
const DEADLINE = { tr: "25 Kasım 2026 23:41", en: "25 November 2026, 23:41 (Türkiye time)" } as const;
const DISPLAY_NAME = "Örnek Mağaza";
const WAIT = { timeout: 15_000 };
const SCREENS = [
  { name: "1280 px", viewport: { width: 1280, height: 800 }, isMobile: false },
  { name: "390 px", viewport: { width: 390, height: 844 }, isMobile: true },
] as const;
const LANGS = ["tr", "en"] as const;
type Lang = (typeof LANGS)[number];
const STATES = ["pending", "completed", "expired", "cancelled", "failed"] as const;
type State = (typeof STATES)[number];
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

/** What the page says per state, written out here rather than read from the gateway's texts, so a changed text is seen. */
const TITLES: Record<Lang, Record<State, string>> = {
  tr: { pending: "Ödemeniz bekleniyor", completed: "Ödeme alındı", expired: "Ödeme süresi doldu", cancelled: "Ödeme iptal edildi", failed: "Ödeme başarısız" },
  en: { pending: "Waiting for your payment", completed: "Payment received", expired: "This payment has expired", cancelled: "Payment cancelled", failed: "Payment failed" },
};
const RETURN_TEXT: Record<Lang, string> = { tr: `${DISPLAY_NAME} sitesine dön`, en: `Back to ${DISPLAY_NAME}` };

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const dataDir = mkdtempSync(join(tmpdir(), "checkout-a11y-"));
let app: AllInOne | undefined;
let browser: Browser | undefined;
let deposits: Client<typeof DepositService>;
let merchantId = "";

test.before(async () => {
  // CI installs Chromium (.ci/run); a machine without it must fail here, not skip.
  assertChromium();
  const clock = { now: () => new Date(NOW.getTime()) };
  app = await startAllInOne({
    clock,
    env: {
      ...TEST_OPERATOR_KEYS_ENV,
      DATA_DIR: dataDir,
      PORT: "0",
      GRPC_PORT: "0",
      CONSOLE_PORT: "0",
      LOG_LEVEL: "warn",
      MASTER_KEY: randomBytes(32).toString("hex"),
      // The clock stands still, so a client IP's bucket would never refill; every page here comes from 127.0.0.1.
      CHECKOUT_RATE_LIMIT_RPS: "0",
    },
  });
  const url = app.services.server.url;
  // The services verify the operator's assertion at their standing clock: the client signs at it.
  const created = await createServiceClient(MerchantService, url, { clock }).createMerchant({ name: "A11y Sandbox Shop Ltd", displayName: DISPLAY_NAME, sandbox: true });
  merchantId = created.merchant!.id;
  deposits = createServiceClient(DepositService, url, { clock });
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close();
  await app?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface MadeDeposit {
  deposit: Deposit;
  checkoutUrl: string;
  returnUrl: string;
}

/** A pending deposit with its own return URL, then moved to `state` by the deposit service. */
async function depositIn(state: State): Promise<MadeDeposit> {
  const processId = `order-${randomBytes(4).toString("hex")}`;
  const returnUrl = `https://shop.example.com/orders/${processId}?from=checkout`;
  const { deposit } = await deposits.createDeposit({
    merchantId,
    processId,
    amount: 125_000n,
    customer: { id: "cus_1", name: "Ayşe Yılmaz", username: "ayse" },
    returnUrl,
  });
  if (!deposit) throw new Error("CreateDeposit answered without a deposit");
  const depositId = deposit.id;
  if (state === "completed") await deposits.sandboxPayDeposit({ merchantId, depositId });
  if (state === "expired") await deposits.sandboxExpireDeposit({ merchantId, depositId });
  if (state === "cancelled") await deposits.cancelDeposit({ merchantId, depositId });
  if (state === "failed") await deposits.rejectDeposit({ depositId, reason: "sender is not the customer" });
  return { deposit, checkoutUrl: `${app!.gateway.config.PUBLIC_BASE_URL}/checkout?token=${deposit.checkoutToken}`, returnUrl };
}

/** A fresh browser context on this screen, recording CSP violations and page errors. */
async function openPage(t: ExecutionContext, url: string, screen: (typeof SCREENS)[number], lang: Lang): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport: screen.viewport, isMobile: screen.isMobile, hasTouch: screen.isMobile, locale: lang === "tr" ? "tr-TR" : "en-US" });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  const response = await page.goto(`${url}&lang=${lang}`, { waitUntil: "load", ...WAIT });
  if (response?.status() !== 200) throw new Error(`${url} answered ${response?.status()}`);
  return { page, problems };
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * axe-core over the whole document. It is evaluated through the DevTools protocol, which
 * the page's CSP does not govern; an injected <script> would be refused, rightly.
 */
async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  const result = await page.evaluate<{ violations: AxeViolation[] }>(
    `axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ["violations"] })`,
  );
  return result.violations;
}

function describe(violations: AxeViolation[]): string[] {
  return violations.map((v) => `${v.impact ?? "?"} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`);
}

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.textContent(selector, WAIT)) ?? "").trim();
}

async function activeElementId(page: Page): Promise<string> {
  return page.evaluate<string>("document.activeElement ? document.activeElement.id : ''");
}

for (const state of STATES) {
  test.serial(`the ${state} page has no serious or critical axe violation in Turkish and English at 1280 and 390 px, and links back to the return URL`, async (t) => {
    const made = await depositIn(state);
    t.is(timestampDate(made.deposit.expiresAt!).toISOString(), EXPIRES_AT, "the deposit expires 30 minutes after the standing clock");
    for (const lang of LANGS) {
      for (const screen of SCREENS) {
        const where = `${state}, ${lang}, ${screen.name}`;
        const { page, problems } = await openPage(t, made.checkoutUrl, screen, lang);
        t.is(await page.getAttribute("#checkout", "data-status"), state, where);
        t.is(await page.getAttribute("html", "lang"), lang, where);
        t.is(await text(page, "#status-title"), TITLES[lang][state], where);
        t.is(await text(page, "#merchant-name"), DISPLAY_NAME, `${where}: whom the customer pays`);
        t.is(await text(page, "#order-id"), made.deposit.processId, `${where}: the merchant's order reference`);

        const link = page.locator("#return-link");
        t.is(await link.getAttribute("href"), made.returnUrl, `${where}: the link back goes to the return URL`);
        t.is(await link.getAttribute("rel"), "noopener noreferrer", where);
        t.is((await link.textContent())?.trim(), RETURN_TEXT[lang], where);

        if (state === "pending") {
          t.is(await text(page, "#deadline"), DEADLINE[lang], `${where}: the deadline in Türkiye's time`);
          t.is(await page.getAttribute("#deadline", "datetime"), EXPIRES_AT, where);
          t.regex(await text(page, "#countdown"), /^(30:00|29:\d\d)$/, where);
        } else {
          t.false(await page.isVisible("#countdown-row"), `${where}: no deadline once final`);
        }

        const widths = await page.evaluate<{ scroll: number; inner: number }>("({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })");
        t.true(widths.scroll <= widths.inner, `${where}: ${widths.scroll}px wide on a ${widths.inner}px screen`);

        const violations = await axeViolations(page);
        const blocking = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        t.deepEqual(describe(blocking), [], `${where}: no serious or critical violation`);
        if (violations.length > blocking.length) t.log(`${where}: minor findings`, describe(violations.filter((v) => !blocking.includes(v))));
        t.deepEqual(problems, [], `${where}: the page's own script and style run under its CSP`);
      }
    }
  });
}

test.serial("copying the IBAN and the reference is said in the polite live region, again on a second copy", async (t) => {
  const made = await depositIn("pending");
  const account = made.deposit.assignedAccount;
  if (!account) throw new Error("the seeded sandbox pool assigned no account");
  const { page, problems } = await openPage(t, made.checkoutUrl, SCREENS[1], "tr");
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(made.checkoutUrl).origin });
  t.is(await page.getAttribute("#live", "role"), "status");
  t.is(await page.getAttribute("#live", "aria-live"), "polite");
  t.is(await text(page, "#live"), "", "nothing said before anything happens");

  // The accessible names a screen reader gives the buttons.
  await page.getByRole("button", { name: "Kopyala IBAN", exact: true }).click(WAIT);
  await waitUntil(page, `document.getElementById("live").textContent === "IBAN kopyalandı"`, WAIT);
  t.is(await page.evaluate<string>("navigator.clipboard.readText()"), account.iban);
  t.is(await text(page, "#iban + button.copy .copy-label"), "Kopyalandı");

  await page.getByRole("button", { name: "Kopyala Açıklama (referans kodu)", exact: true }).click(WAIT);
  await waitUntil(page, `document.getElementById("live").textContent === "Referans kodu kopyalandı"`, WAIT);

  // The same words twice: the region is emptied and filled again, so it is a change a screen reader reads.
  await page.evaluate(`(() => {
    window.liveTexts = [];
    new MutationObserver(() => window.liveTexts.push(document.getElementById("live").textContent)).observe(document.getElementById("live"), { childList: true, characterData: true, subtree: true });
  })()`);
  await page.getByRole("button", { name: "Kopyala Açıklama (referans kodu)", exact: true }).click(WAIT);
  await waitUntil(page, `window.liveTexts.at(-1) === "Referans kodu kopyalandı"`, WAIT);
  t.deepEqual(await page.evaluate<string[]>("window.liveTexts"), ["", "Referans kodu kopyalandı"]);
  t.deepEqual(problems, []);
});

test.serial("the countdown never speaks: over three seconds of ticking the live region does not change", async (t) => {
  const made = await depositIn("pending");
  const { page } = await openPage(t, made.checkoutUrl, SCREENS[0], "en");
  await page.evaluate(`(() => {
    window.liveChanges = 0;
    new MutationObserver(() => { window.liveChanges += 1; }).observe(document.getElementById("live"), { childList: true, characterData: true, subtree: true });
  })()`);
  const before = await text(page, "#countdown");
  await waitUntil(page, `document.getElementById("countdown").textContent !== ${JSON.stringify(before)}`, WAIT);
  await page.waitForTimeout(3_000);
  t.is(await page.evaluate<number>("window.liveChanges"), 0);
  t.is(await page.evaluate<boolean>(`!!document.getElementById("countdown").closest("[aria-live],[role=status],[role=alert],[role=timer]")`), false, "not inside any live region");
});

test.serial("simulate payment: the new status is said in the live region, focus is on its heading, the link back stays, and axe still passes", async (t) => {
  const made = await depositIn("pending");
  const { page, problems } = await openPage(t, made.checkoutUrl, SCREENS[1], "tr");
  await page.getByRole("button", { name: "Ödemeyi simüle et" }).click(WAIT);
  await page.waitForSelector('#checkout[data-status="completed"]', WAIT);

  const said = "Ödeme alındı. Teşekkürler, ödemeniz onaylandı. Aşağıdaki bağlantıyla satıcının sitesine dönebilirsiniz.";
  await waitUntil(page, `document.getElementById("live").textContent === ${JSON.stringify(said)}`, WAIT);
  t.is(await activeElementId(page), "status-title", "focus is on the new status, not lost on the hidden button");
  t.is(await page.getAttribute("#status-title", "tabindex"), "-1");
  t.is(await page.title(), `Ödeme: Ödeme alındı – ${DISPLAY_NAME}`);
  t.is(await page.getAttribute("#return-link", "href"), made.returnUrl);
  t.true(await page.isVisible("#return-link"));
  t.deepEqual(describe((await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical")), []);
  t.deepEqual(problems, []);
});

test.serial("a status change the page polls (the merchant cancels) is said in English, with focus on the status", async (t) => {
  const made = await depositIn("pending");
  const { page, problems } = await openPage(t, made.checkoutUrl, SCREENS[0], "en");
  // Focus somewhere else first, as a customer reading the page would have it.
  await page.focus("#iban + button.copy");
  await deposits.cancelDeposit({ merchantId, depositId: made.deposit.id });
  await page.waitForSelector('#checkout[data-status="cancelled"]', WAIT);

  const said = "Payment cancelled. This payment was cancelled. Do not send money to this account.";
  await waitUntil(page, `document.getElementById("live").textContent === ${JSON.stringify(said)}`, WAIT);
  t.is(await activeElementId(page), "status-title");
  t.is(await text(page, "#status-title"), "Payment cancelled");
  t.false(await page.isVisible("#details"));
  t.is(await page.getAttribute("#return-link", "href"), made.returnUrl, "the way back is still there");
  t.deepEqual(problems, []);
});
