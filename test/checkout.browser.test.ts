import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test, { type ExecutionContext } from "ava";
import { type Browser, type BrowserContext, type Page } from "playwright-core";
import { assertChromium, launchChromium, waitUntil } from "./browser.js";
import { startAllInOne, type AllInOne } from "@payments/all-in-one";
import { MerchantService } from "@payments/contracts/merchant";
import { signedFetch, type Credentials } from "./helpers.js";
import { createServiceClient, credentialsOf, TEST_OPERATOR_KEYS_ENV } from "@payments/testing";

/*
 * The checkout page in a real headless Chromium (Debian's, driven by playwright-core; no
 * browser is ever downloaded), on a 360×740 phone screen, against the whole product
 * started in-process. Deposits are created with a merchant's signed POST /v1/deposit, so
 * the page is opened at the checkoutUrl a merchant would redirect to.
 */

/** Short, so "expired" shows up within the test; the expiry job runs often enough to see it. */
const DEPOSIT_TTL_MS = 4_000;
const WAIT = { timeout: 15_000 };
const PHONE = { width: 360, height: 740 };

/**
 * Real time, until held; then it stands still. Only the expiry test needs time to pass, and
 * it runs first (serial); the others hold the clock so that a slow, busy machine cannot let
 * their pending deposit expire under them before the click (DEPOSIT_TTL is only 4 s).
 */
function holdableClock() {
  let heldAt: Date | undefined;
  return {
    now: () => (heldAt ? new Date(heldAt.getTime()) : new Date()),
    hold() {
      heldAt ??= new Date();
    },
  };
}
const clock = holdableClock();

const dataDir = mkdtempSync(join(tmpdir(), "checkout-browser-"));
let app: AllInOne | undefined;
let browser: Browser | undefined;
let merchant: Credentials | undefined;

test.before(async () => {
  // CI installs Chromium (.ci/run); a machine without it must fail here, not skip.
  assertChromium();
  app = await startAllInOne({
    clock,
    env: {
      ...TEST_OPERATOR_KEYS_ENV,
      DATA_DIR: dataDir,
      PORT: "0",
      GRPC_PORT: "0",
      CONSOLE_PORT: "0",
      LOG_LEVEL: "warn",
      DEPOSIT_TTL: `${DEPOSIT_TTL_MS / 1000}s`,
      DEPOSIT_EXPIRY_INTERVAL: "200ms",
      MASTER_KEY: randomBytes(32).toString("hex"),
    },
  });
  const merchants = createServiceClient(MerchantService, app.services.server.url, { clock });
  const created = await merchants.createMerchant({ name: "Browser Sandbox Shop", sandbox: true });
  merchant = credentialsOf(created);
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close();
  await app?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface CreatedDeposit {
  transactionId: string;
  reference?: string;
  checkoutUrl: string;
  assignedAccount?: { bankName: string; accountName: string; iban: string };
}

/** A deposit as a merchant creates it: signed POST /v1/deposit through the gateway. */
async function createDeposit(): Promise<CreatedDeposit> {
  const res = await signedFetch(app!.gateway.url, merchant!, "POST", "/v1/deposit", {
    processId: `order-${randomBytes(4).toString("hex")}`,
    amount: 125_000,
    customer: { id: "cus_1", name: "Ayşe <b>Yılmaz</b>", username: "ayse" },
  });
  if (res.status !== 201) throw new Error(`POST /v1/deposit answered ${res.status}: ${JSON.stringify(res.json)}`);
  return (res.json as { data: CreatedDeposit }).data;
}

async function depositStatus(transactionId: string): Promise<string> {
  const res = await signedFetch(app!.gateway.url, merchant!, "GET", `/v1/deposit/${transactionId}`);
  return String((res.json as { data?: { status?: string } }).data?.status);
}

/** A phone-sized page that records every request it makes and every CSP violation it hits. */
async function phonePage(t: ExecutionContext, locale = "tr-TR"): Promise<{ page: Page; context: BrowserContext; requests: string[]; violations: string[] }> {
  const context = await browser!.newContext({ viewport: PHONE, locale, isMobile: true, hasTouch: true });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const requests: string[] = [];
  const violations: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  page.on("pageerror", (error) => violations.push(`page error: ${error.message}`));
  return { page, context, requests, violations };
}

function groupIban(iban: string): string {
  return iban.replace(/(.{4})(?=.)/g, "$1 ");
}

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.textContent(selector, WAIT)) ?? "").trim();
}

/** Set before an action; still there afterwards only if the page was not reloaded. */
async function markWindow(page: Page): Promise<string> {
  const marker = randomBytes(6).toString("hex");
  await page.evaluate((value) => {
    (globalThis as unknown as { checkoutMarker: string }).checkoutMarker = value;
  }, marker);
  return marker;
}

async function windowMarker(page: Page): Promise<unknown> {
  return page.evaluate(() => (globalThis as unknown as { checkoutMarker?: string }).checkoutMarker);
}

/** The renderer process started and the gateway connected, so the real visit that follows is quick. */
async function warmUp(page: Page): Promise<void> {
  await page.goto(`${app!.gateway.config.PUBLIC_BASE_URL}/checkout`, WAIT);
}

// Serial, so it runs before the others and alone with a running clock.
test.serial("an unpaid deposit shows expired after DEPOSIT_TTL without a reload, counting down on the server's clock", async (t) => {
  const { page, violations } = await phonePage(t);
  // The customer's clock is an hour fast; the countdown must not believe it.
  await page.addInitScript(() => {
    const realNow = Date.now.bind(Date);
    Date.now = () => realNow() + 3_600_000;
  });
  await warmUp(page);
  const createdAt = Date.now();
  const deposit = await createDeposit();
  await page.goto(deposit.checkoutUrl, WAIT);
  const marker = await markWindow(page);
  const loadedAfter = Date.now() - createdAt;
  const first = await page.getAttribute("#checkout", "data-status", WAIT);
  if (first !== "pending") throw new Error(`the page loaded ${loadedAfter} ms after the deposit was created and it was already ${first}: too slow for the 4 s DEPOSIT_TTL`);
  const countdown = await text(page, "#countdown");
  if (Date.now() - createdAt < DEPOSIT_TTL_MS - 1_000) {
    t.regex(countdown, /^00:0[0-4]$/, `countdown ${countdown} follows the server's clock and the 4 s TTL`);
  } else {
    t.log(`countdown not checked: the page took ${loadedAfter} ms to load`);
  }

  await page.waitForSelector('#checkout[data-status="expired"]', WAIT);
  t.is(await windowMarker(page), marker, "the page was not reloaded");
  t.is(await text(page, "#status-title"), "Ödeme süresi doldu");
  t.false(await page.isVisible("#details"));
  t.false(await page.isVisible("#simulate"));
  t.false(await page.isVisible("#countdown-row"));
  t.is(await depositStatus(deposit.transactionId), "expired");
  t.deepEqual(violations, []);
});

test("the page shows the assigned account's bank, holder, IBAN and reference on a 360 px phone, loading nothing from elsewhere", async (t) => {
  clock.hold();
  const { page, context, requests, violations } = await phonePage(t);
  const deposit = await createDeposit();
  const account = deposit.assignedAccount;
  if (!account) throw new Error("the seeded sandbox pool assigned no account");
  t.true(deposit.checkoutUrl.startsWith(`${app!.gateway.config.PUBLIC_BASE_URL}/checkout?token=`), deposit.checkoutUrl);

  const origin = new URL(deposit.checkoutUrl).origin;
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const response = await page.goto(deposit.checkoutUrl, { waitUntil: "load", ...WAIT });
  t.is(response?.status(), 200);

  t.is(await text(page, "#iban"), groupIban(account.iban));
  t.is(await text(page, "#account-name"), account.accountName);
  t.is(await text(page, "#bank-name"), account.bankName);
  const reference = await text(page, "#reference");
  t.regex(reference, /^[A-Z0-9-]{4,}$/);
  if (deposit.reference) t.is(reference, deposit.reference);
  t.true((await text(page, "#reference-note")).includes("açıklama"));
  t.is(await text(page, "#amount"), new Intl.NumberFormat("tr-TR", { style: "currency", currency: "TRY", currencyDisplay: "narrowSymbol" }).format(1250));
  t.is(await text(page, "#status-title"), "Ödemeniz bekleniyor");
  t.regex(await text(page, "#countdown"), /^(00:0\d|Süre doldu)$/);
  t.true(await page.isVisible("#simulate"), "a sandbox merchant's page offers the simulation");

  // Fits the phone: nothing wider than the screen, so nothing to scroll sideways.
  // Browser-side code is passed as text: this project's TypeScript has no DOM types.
  const widths = await page.evaluate<{ scroll: number; inner: number }>("({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })");
  t.true(widths.scroll <= widths.inner, `page is ${widths.scroll}px wide on a ${widths.inner}px screen`);

  // The copy button puts the IBAN, without spaces, on the clipboard.
  await page.click("#iban + button.copy", WAIT);
  await waitUntil(page, `document.querySelector("#iban + button.copy .copy-label").textContent === "Kopyalandı"`, WAIT);
  t.is(await page.evaluate<string>("navigator.clipboard.readText()"), account.iban);

  t.deepEqual(
    requests.filter((url) => new URL(url).origin !== origin),
    [],
    "every request stays on the gateway",
  );
  t.deepEqual(violations, [], "the page's own script and style run under its CSP");
});

test("clicking simulate payment turns the status to paid without a reload and hides the account", async (t) => {
  clock.hold();
  const deposit = await createDeposit();
  const { page, violations } = await phonePage(t);
  await page.goto(deposit.checkoutUrl, WAIT);
  await page.waitForSelector("#simulate", { state: "visible", ...WAIT });
  t.true(await page.isVisible("#details"));
  const marker = await markWindow(page);

  await page.getByRole("button", { name: "Ödemeyi simüle et" }).click(WAIT);
  await page.waitForSelector('#checkout[data-status="completed"]', WAIT);

  t.is(await windowMarker(page), marker, "the page was not reloaded");
  t.is(await text(page, "#status-title"), "Ödeme alındı");
  t.false(await page.isVisible("#details"), "account details are hidden once paid");
  t.false(await page.isVisible("#simulate"));
  t.false(await page.isVisible("#countdown-row"));
  t.is(await depositStatus(deposit.transactionId), "completed");
  t.deepEqual(violations, []);
});

test("the English version is English, and the language switch keeps the token", async (t) => {
  clock.hold();
  const deposit = await createDeposit();
  const { page, violations } = await phonePage(t);
  await page.goto(deposit.checkoutUrl, WAIT);
  await page.waitForSelector("#checkout", WAIT);
  t.is(await page.getAttribute("html", "lang"), "tr");

  await page.click('nav.lang a[hreflang="en"]', WAIT);
  await page.waitForSelector('html[lang="en"]', WAIT);
  t.is(new URL(page.url()).searchParams.get("token"), new URL(deposit.checkoutUrl).searchParams.get("token"));
  t.is(new URL(page.url()).searchParams.get("lang"), "en");
  t.is(await text(page, "h1"), "Pay by bank transfer");
  t.is(await text(page, "#status-title"), "Waiting for your payment");
  t.is(await text(page, "#amount"), "₺1,250.00");
  t.true((await text(page, "#reference-note")).includes("transfer description"));
  t.is(await text(page, "#iban + button.copy .copy-label"), "Copy");
  const row = await text(page, "#countdown-row");
  t.regex(row, /^Pay by: \d{1,2} [A-Z][a-z]+ \d{4}, \d{2}:\d{2} \(Türkiye time\)/, row);
  t.true(row.includes("Time left: "), row);

  // The English simulate button works the same way.
  await page.getByRole("button", { name: "Simulate payment" }).click(WAIT);
  await page.waitForSelector('#checkout[data-status="completed"]', WAIT);
  t.is(await text(page, "#status-title"), "Payment received");

  // A browser that asks for English gets it without ?lang.
  const english = await phonePage(t, "en-US");
  await english.page.goto(deposit.checkoutUrl, WAIT);
  t.is(await english.page.getAttribute("html", "lang"), "en");
  t.is(await text(english.page, "#status-title"), "Payment received");
  t.deepEqual([...violations, ...english.violations], []);
});

test("a tampered token shows the invalid-link page", async (t) => {
  clock.hold();
  const deposit = await createDeposit();
  const url = new URL(deposit.checkoutUrl);
  const token = url.searchParams.get("token")!;
  const i = Math.floor(token.length / 2);
  url.searchParams.set("token", token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1));

  const { page } = await phonePage(t);
  const response = await page.goto(url.toString(), WAIT);
  t.is(response?.status(), 404);
  t.is(await text(page, "#status-title"), "Geçersiz ödeme bağlantısı");
  t.true((await text(page, "#status-text")).includes("geçerli değil"));
  t.is(await page.$("#iban"), null);
  t.false((await page.content()).includes(deposit.assignedAccount?.iban ?? "no-iban"));
});
