import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import test from "ava";
import { type Browser, type Page } from "playwright-core";
import { assertChromium, launchChromium } from "./browser.js";
import { startAllInOne, type AllInOne } from "@payments/all-in-one";
import { sign, unixTimestamp } from "@payments/signing";

/*
 * examples/demo-shop end to end, in a real headless Chromium: the whole product in-process
 * (as `pnpm start`, with CALLBACK_ALLOW_PRIVATE so that it calls the shop on 127.0.0.1), the
 * shop as `pnpm demo` runs it, in a child process that bootstraps its own sandbox merchant
 * with the CLI. A customer buys, lands on the gateway's checkout page, pays (simulated),
 * and the order page turns "Paid" because a verified callback reached the shop.
 */

const WAIT = { timeout: 20_000 };
const root = fileURLToPath(new URL("..", import.meta.url));

const gatewayDir = mkdtempSync(join(tmpdir(), "demo-shop-gateway-"));
const shopDir = mkdtempSync(join(tmpdir(), "demo-shop-data-"));
let app: AllInOne | undefined;
let browser: Browser | undefined;
let shopProcess: ChildProcess | undefined;
/** Everything the shop printed: its callback log lines are asserted on. */
let shopLog = "";
let shopUrl = "";

/** Starts `pnpm demo`'s command on a free port and resolves with the URL it prints once ready. */
function startShop(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "examples/demo-shop/src/main.ts"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  shopProcess = child;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo shop did not start in time:\n${shopLog}`)), 60_000);
    const onData = (chunk: Buffer) => {
      shopLog += chunk.toString();
      const ready = /demo shop ready on (http:\/\/\S+)/.exec(shopLog);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo shop exited with ${code}:\n${shopLog}`));
    });
  });
}

test.before(async () => {
  assertChromium();
  app = await startAllInOne({
    env: {
      DATA_DIR: gatewayDir,
      PORT: "0",
      GRPC_PORT: "0",
      CONSOLE_PORT: "0",
      LOG_LEVEL: "warn",
      MASTER_KEY: randomBytes(32).toString("hex"),
      // The shop listens on 127.0.0.1: refused as a callback address otherwise (SSRF guard).
      CALLBACK_ALLOW_PRIVATE: "1",
    },
  });
  shopUrl = await startShop({
    GATEWAY_URL: app.gateway.url,
    // The CLI the shop bootstraps its merchant with talks to the internal API here.
    GRPC_URL: app.services.server.url,
    // …signing as an operator on the all-in-one's machine: with the local admin key in its data directory.
    DATA_DIR: gatewayDir,
    DEMO_PORT: "0",
    DEMO_DATA_DIR: shopDir,
  });
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close();
  if (shopProcess && shopProcess.exitCode === null) {
    const exited = new Promise((resolve) => shopProcess!.once("exit", resolve));
    shopProcess.kill("SIGTERM");
    await exited;
  }
  await app?.stop();
  rmSync(gatewayDir, { recursive: true, force: true });
  rmSync(shopDir, { recursive: true, force: true });
});

/** Script errors and failed requests of the shop's pages (a broken status poll would show here). */
const pageErrors: string[] = [];

async function newPage(): Promise<Page> {
  const context = await browser!.newContext({ locale: "en-US" });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`${page.url()}: ${error.message}`));
  page.on("response", (response) => {
    // Browsers ask every origin for a favicon; neither the shop nor the gateway has one.
    if (response.status() >= 400 && !response.url().endsWith("/favicon.ico")) pageErrors.push(`${response.status()} ${response.url()}`);
  });
  return page;
}

/** Buys a product on the shop page and follows the redirect to the gateway's checkout page; returns the order id. */
async function buy(page: Page, productId: string): Promise<string> {
  await page.goto(shopUrl, WAIT);
  await page.click(`[data-product="${productId}"] button`, WAIT);
  await page.waitForURL(/\/checkout\?token=/, WAIT);
  const res = await fetch(`${shopUrl}/`);
  // The newest order is listed first on the shop page.
  const id = /href="\/orders\/(ord_[A-Za-z0-9]+)"/.exec(await res.text())?.[1];
  if (!id) throw new Error("the shop lists no order after the purchase");
  return id;
}

async function orderStatus(id: string): Promise<{ status: string; sequence: number }> {
  return (await (await fetch(`${shopUrl}/orders/${id}/status`)).json()) as { status: string; sequence: number };
}

test.serial("first run: the shop created its own sandbox merchant and lists the gateway's banks with logos", async (t) => {
  const stored = JSON.parse(readFileSync(join(shopDir, "merchant.json"), "utf8")) as Record<string, string>;
  t.regex(stored.merchantId ?? "", /^mer_/);
  t.regex(stored.apiKey ?? "", /^pk_/);
  t.is(stored.callbackUrl, `${shopUrl}/payments/callback`);
  t.true(shopLog.includes("created sandbox merchant"));

  const page = await newPage();
  await page.goto(shopUrl, WAIT);
  const banks = await page.locator(".bank-name").allTextContents();
  t.true(banks.length > 0, "banks from availableBanks are shown");
  t.true(banks.includes("Akbank"), banks.join(", "));
  const logo = await page.locator(".banks img").first().getAttribute("src");
  t.true(logo?.startsWith("http") ?? false, `logo ${logo}`);
  t.is(await page.locator("[data-product] button").count(), 3);
  await page.context().close();
});

test.serial("buy, pay on the checkout page, and the open order page turns Paid by the verified callback", async (t) => {
  const checkout = await newPage();
  const orderId = await buy(checkout, "towel");
  t.is((await orderStatus(orderId)).status, "pending");
  await checkout.waitForSelector('#checkout[data-status="pending"]', WAIT);

  // The order page, open before the payment: it must change by itself.
  const orderPage = await newPage();
  await orderPage.goto(`${shopUrl}/orders/${orderId}`, WAIT);
  t.is(await orderPage.getAttribute("#order", "data-status"), "pending");
  t.is((await orderPage.textContent("#order-status"))?.trim(), "Awaiting payment");

  await checkout.getByRole("button", { name: "Simulate payment" }).click(WAIT);
  await checkout.waitForSelector('#checkout[data-status="completed"]', WAIT);

  await orderPage.waitForSelector('#order[data-status="completed"]', WAIT);
  t.is((await orderPage.textContent("#order-status"))?.trim(), "Paid");
  t.false(await orderPage.isVisible("#simulate"), "nothing left to pay");
  const status = await orderStatus(orderId);
  t.true(status.sequence > 0, "set by a callback, which carries the sequence");
  t.regex(shopLog, /callback evt_\S+ deposit\.completed seq \d+: applied/);
  // The checkout's link back (the shop's returnUrl) takes the customer to this order, paid.
  t.is(await checkout.getAttribute("#return-link", "href"), `${shopUrl}/orders/${orderId}`);
  await checkout.click("#return-link", WAIT);
  await checkout.waitForURL(`${shopUrl}/orders/${orderId}`, WAIT);
  await checkout.waitForSelector('#order[data-status="completed"]', WAIT);
  t.deepEqual(pageErrors, []);
  await checkout.context().close();
  await orderPage.context().close();
});

test.serial("the order page's own simulate button pays through sdk.sandbox.payDeposit", async (t) => {
  const page = await newPage();
  const orderId = await buy(page, "tea");
  await page.goto(`${shopUrl}/orders/${orderId}`, WAIT);
  t.true(await page.isVisible("#checkout-link"));
  await page.click("#simulate", WAIT);
  await page.waitForSelector('#order[data-status="completed"]', WAIT);
  t.is((await page.textContent("#order-status"))?.trim(), "Paid");
  await page.context().close();
});

test.serial("a forged callback is refused with 401 and changes nothing; a stale or repeated one is acknowledged and ignored", async (t) => {
  const page = await newPage();
  const orderId = await buy(page, "coffee-set");
  await page.context().close();
  const before = await orderStatus(orderId);
  t.is(before.status, "pending");

  const callbackUrl = `${shopUrl}/payments/callback`;
  const post = (secret: string, event: { id: string; type: string; data: Record<string, unknown> }) => {
    const body = JSON.stringify({ ...event, createdAt: new Date().toISOString() });
    const timestamp = unixTimestamp();
    return fetch(callbackUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "X-Event-Id": event.id,
        "X-Event-Type": event.type,
        "X-Timestamp": timestamp,
        "X-Signature": sign(secret, { timestamp, method: "POST", path: "/payments/callback", body }),
      },
      body,
    });
  };
  const transactionId = (JSON.parse(readFileSync(join(shopDir, "orders.json"), "utf8")) as { id: string; transactionId: string }[]).find((o) => o.id === orderId)!.transactionId;
  const paid = { transactionId, processId: orderId, status: "completed", sequence: 99 };

  // Signed with a secret that is not the merchant's: refused, logged, order unchanged.
  const forged = await post(`sk_${randomBytes(16).toString("hex")}`, { id: "evt_forged", type: "deposit.completed", data: paid });
  t.is(forged.status, 401);
  // No signature at all.
  const unsigned = await fetch(callbackUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "evt_x", type: "deposit.completed", data: paid }) });
  t.is(unsigned.status, 401);
  t.is((await orderStatus(orderId)).status, "pending");
  t.regex(shopLog, /callback refused from \S+: INVALID_SIGNATURE/);
  t.regex(shopLog, /callback refused from \S+: MISSING_HEADER/);

  // Correctly signed (the secret the shop stored): applied once, in sequence order.
  const { apiSecret } = JSON.parse(readFileSync(join(shopDir, "merchant.json"), "utf8")) as { apiSecret: string };
  t.is((await post(apiSecret, { id: "evt_cancel", type: "deposit.cancelled", data: { ...paid, status: "cancelled", sequence: 5 } })).status, 204);
  t.is((await orderStatus(orderId)).status, "cancelled");
  // An older event arriving late, and a redelivery: acknowledged, nothing changes.
  t.is((await post(apiSecret, { id: "evt_old", type: "deposit.expired", data: { ...paid, status: "expired", sequence: 3 } })).status, 204);
  t.is((await post(apiSecret, { id: "evt_cancel", type: "deposit.cancelled", data: { ...paid, status: "cancelled", sequence: 5 } })).status, 204);
  t.deepEqual(await orderStatus(orderId).then((o) => [o.status, o.sequence]), ["cancelled", 5]);
  t.regex(shopLog, /callback evt_old deposit\.expired seq 3: stale/);
  t.regex(shopLog, /callback evt_cancel deposit\.cancelled seq 5: duplicate/);
});
