import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { BankCatalogService } from "@payments/contracts/bank-catalog";
import { CallbackService } from "@payments/contracts/callback";
import { DepositSchema, DepositService, DepositStatus } from "@payments/contracts/deposit";
import { Health } from "@payments/contracts/health";
import { MerchantService } from "@payments/contracts/merchant";
import { PayoutService } from "@payments/contracts/payout";
import { createServiceClient, TEST_OPERATOR_ENV } from "@payments/testing";
import { createLogger, createMetrics, type RunningServices } from "@payments/kit";
import { startInProcess } from "@payments/testing/services";
import { createApp } from "../src/app.js";
import { loadGatewayConfig } from "../src/config.js";
import { CredentialCache } from "../src/credential-cache.js";
import { basePathOf, checkoutSecurityHeaders, escapeHtml, renderCheckoutPage, renderInvalidLinkPage } from "../src/checkout/page.js";
import { CHECKOUT_SCRIPT } from "../src/checkout/page-script.js";
import { chooseLanguage, fillText, LANGUAGES, returnLinkText, statusTexts, TEXTS, type CheckoutTexts } from "../src/checkout/texts.js";
import { CHECKOUT_STATUSES, checkoutOrder, checkoutView, formatAmount, formatDeadline, groupIban, safeReturnUrl, type CheckoutOrder, type CheckoutView } from "../src/checkout/view.js";
import { startGateway, type RunningGateway } from "../src/server.js";

/*
 * The checkout page: the renderer alone (escaping, languages, no outside URL, nonces), then
 * the three routes against the real merchant, bank-catalog and deposit services.
 */

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)> ' " & </style></main>`;
const IBAN = "TR330006100519786457841326";
const NONCE = "bm9uY2Utb2YtdGhlLXRlc3Q=";

function pendingView(overrides: Partial<CheckoutView> = {}): CheckoutView {
  return {
    status: "pending",
    amount: 125_000,
    currency: "TRY",
    bankName: "Akbank",
    accountName: "Sandbox Ödeme Hizmetleri A.Ş.",
    iban: IBAN,
    reference: "K7Q2MZ",
    expiresAt: "2026-11-22T10:30:00.000Z",
    serverTime: "2026-11-22T10:00:00.000Z",
    sandbox: false,
    ...overrides,
  };
}

const RETURN_URL = "https://shop.example.com/orders/1001?from=checkout";

/** A merchant with a display name and no return URL; tests that need one say so. */
function order(overrides: Partial<CheckoutOrder> = {}): CheckoutOrder {
  return { merchantName: "Örnek Mağaza", processId: "order-1001", returnUrl: null, ...overrides };
}

function render(view: CheckoutView, lang: "tr" | "en" = "tr", token = "tok_0123456789abcdef", orderInfo: CheckoutOrder = order()): string {
  return renderCheckoutPage({ view, order: orderInfo, token, lang, nonce: NONCE, basePath: "" });
}

/** What the inline script is given. */
function scriptData(html: string): { view: CheckoutView; texts: CheckoutTexts; merchantName: string | null; statusUrl: string } {
  const data = /<script type="application\/json" id="checkout-data">([^<]*)<\/script>/.exec(html);
  if (!data) throw new Error("no data block");
  return JSON.parse(data[1]!) as { view: CheckoutView; texts: CheckoutTexts; merchantName: string | null; statusUrl: string };
}

/** The text of the element with this id (no nested elements of the same name). */
function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`<([a-z0-9]+)\\b[^>]*\\bid="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return match?.[2];
}

/** Opening tags of one element, with their attributes. */
function tags(html: string, name: string): string[] {
  return html.match(new RegExp(`<${name}\\b[^>]*>`, "gi")) ?? [];
}

/** Any absolute or protocol-relative URL, or an attribute that would load something. */
function outsideReferences(html: string): string[] {
  return [...(html.match(/(?:[a-z][a-z0-9+.-]*:)?\/\/[a-z0-9[]/gi) ?? []), ...(html.match(/<(?:link|img|iframe|object|embed|source|video|audio)\b[^>]*>/gi) ?? []), ...(html.match(/\bsrc\s*=/gi) ?? []), ...(html.match(/@import|url\(/gi) ?? [])];
}

// ---------------------------------------------------------------- renderer

test("hostile text from the catalog or a token is escaped everywhere it appears, and cannot close the data block", (t) => {
  const html = render(pendingView({ bankName: HOSTILE, accountName: HOSTILE, reference: HOSTILE, sandbox: true }), "tr", `"><script>alert(2)</script>`, {
    merchantName: HOSTILE,
    processId: HOSTILE,
    returnUrl: `https://shop.example.com/?q="><script>alert(3)</script>`,
  });
  t.false(html.includes("<script>alert"));
  t.false(html.includes("<img"));
  t.false(html.includes("onerror=alert(1)>"));
  t.true(html.includes(escapeHtml(HOSTILE)), "the holder name is shown, escaped");
  t.is(textOf(html, "merchant-name"), escapeHtml(HOSTILE), "the merchant's name too");
  t.is(textOf(html, "order-id"), escapeHtml(HOSTILE), "and the order reference");
  t.true(html.includes('href="https://shop.example.com/?q=%22%3E%3Cscript%3Ealert(3)%3C/script%3E"'), "the return URL is a URL, percent-encoded");
  // Exactly the page's own two script elements and one style element.
  t.is(html.match(/<\/script/gi)?.length, 2);
  t.is(html.match(/<\/style/gi)?.length, 1);
  t.is(tags(html, "main").length, 1);
  const data = /<script type="application\/json" id="checkout-data">([^<]*)<\/script>/.exec(html);
  t.truthy(data, "the data block is intact");
  const parsed = JSON.parse(data![1]!) as { view: CheckoutView; statusUrl: string };
  t.is(parsed.view.accountName, HOSTILE, "the script gets the same text back");
  t.is(parsed.statusUrl, `/checkout/status?token=${encodeURIComponent(`"><script>alert(2)</script>`)}`);
});

test("the page is Turkish with Turkish amounts, and English with English amounts", (t) => {
  const tr = render(pendingView());
  t.true(tr.includes('<html lang="tr">'));
  t.true(tr.includes(TEXTS.tr.status.pending.title));
  t.true(tr.includes(escapeHtml(TEXTS.tr.referenceNote)));
  t.true(tr.includes('<span class="copy-label">Kopyala</span><span class="sr-only"> IBAN</span></button>'), "the copy button's name is the visible word and the field");
  t.true(tr.includes("1.250,00") && tr.includes("₺"), "Turkish grouping and the lira sign");
  t.true(tr.includes(formatAmount(125_000, "TRY", "tr-TR")));
  t.true(tr.includes("TR33 0006 1005 1978 6457 8413 26"), "IBAN in blocks of four");
  t.true(tr.includes(`data-copy="${IBAN}"`), "the copy button copies the IBAN without spaces");
  t.true(tr.includes('data-copy="K7Q2MZ"'));
  t.true(tr.includes(">30:00</span>"), "the countdown starts from the server's time");

  const en = render(pendingView(), "en");
  t.true(en.includes('<html lang="en">'));
  t.true(en.includes(TEXTS.en.status.pending.title));
  t.true(en.includes('<span class="copy-label">Copy</span><span class="sr-only"> IBAN</span></button>'));
  t.true(en.includes("₺1,250.00"));
  t.false(en.includes(TEXTS.tr.status.pending.title));
  // The switch keeps the token.
  t.true(en.includes('href="?token=tok_0123456789abcdef&amp;lang=tr"'));
  t.true(en.includes('href="?token=tok_0123456789abcdef&amp;lang=en" hreflang="en" lang="en" aria-current="true">EN<span class="sr-only"> English</span></a>'));
  t.true(en.includes('hreflang="tr" lang="tr">TR<span class="sr-only"> Türkçe</span></a>'), "each language is named in itself");
});

test("no page loads anything from outside: no absolute URL, no external tag, no src, no url()", (t) => {
  for (const html of [
    render(pendingView({ sandbox: true })),
    render(pendingView({ iban: null, bankName: null, accountName: null }), "en"),
    render(pendingView({ status: "completed", iban: null, bankName: null, accountName: null })),
    renderInvalidLinkPage({ lang: "tr", nonce: NONCE, token: "abc" }),
  ]) {
    t.deepEqual(outsideReferences(html), []);
  }
  // The return link is the one absolute URL, and it is only followed when clicked.
  const withReturn = render(pendingView(), "tr", "tok_1", order({ returnUrl: RETURN_URL }));
  t.deepEqual(outsideReferences(withReturn.replace(`href="${escapeHtml(RETURN_URL)}"`, "")), []);
});

test("the CSP carries the nonce, and every script and style tag carries it too", (t) => {
  const headers = checkoutSecurityHeaders(NONCE);
  const csp = headers["Content-Security-Policy"]!;
  for (const directive of [
    "default-src 'none'",
    `script-src 'nonce-${NONCE}'`,
    `style-src 'nonce-${NONCE}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ]) {
    t.true(csp.split("; ").includes(directive), directive);
  }
  t.false(csp.includes("unsafe-inline"));
  t.is(headers["Referrer-Policy"], "no-referrer");
  t.is(headers["Cache-Control"], "no-store");
  t.is(headers["X-Content-Type-Options"], "nosniff");

  const html = render(pendingView({ sandbox: true }));
  const executable = tags(html, "script").filter((tag) => !tag.includes('type="application/json"'));
  t.is(executable.length, 1);
  for (const tag of [...executable, ...tags(html, "style")]) t.true(tag.includes(`nonce="${NONCE}"`), tag);
  // Inline style attributes and handlers would be blocked by this CSP, so there are none.
  t.deepEqual(html.match(/\sstyle=|\son[a-z]+=/gi) ?? [], []);
});

test("a final deposit shows its outcome without the account, the countdown or the simulate button", (t) => {
  const deposit = create(DepositSchema, {
    id: "dep_secret",
    merchantId: "mer_secret",
    processId: "order-secret",
    amount: 99_000n,
    requestedAmount: 125_000n,
    currency: "TRY",
    status: DepositStatus.COMPLETED,
    assignedAccount: { accountId: "acc_1", bankId: "bnk_1", bankName: "Akbank", accountName: "Holder", iban: IBAN },
    reference: "K7Q2MZ",
    checkoutToken: "tok_secret",
    customer: { id: "cus_secret", name: "Ayşe", username: "ayse" },
    metadataJson: '{"secret":1}',
    expiresAt: timestampFromMs(Date.parse("2026-11-22T10:30:00.000Z")),
    returnUrl: RETURN_URL,
  });
  const view = checkoutView(deposit, true, new Date("2026-11-22T10:05:00.000Z"));
  t.deepEqual(checkoutOrder(deposit, "  Örnek Mağaza "), { merchantName: "Örnek Mağaza", processId: "order-secret", returnUrl: RETURN_URL });
  t.deepEqual(view, {
    status: "completed",
    amount: 99_000,
    currency: "TRY",
    bankName: null,
    accountName: null,
    iban: null,
    reference: "K7Q2MZ",
    expiresAt: "2026-11-22T10:30:00.000Z",
    serverTime: "2026-11-22T10:05:00.000Z",
    sandbox: true,
  });
  const html = render(view, "en", "tok_0123456789abcdef", checkoutOrder(deposit, "Örnek Mağaza"));
  t.true(html.includes('data-status="completed"'));
  t.is(textOf(html, "order-id"), "order-secret", "the customer still sees which order was paid");
  t.true(html.includes(TEXTS.en.status.completed.title));
  t.true(html.includes("₺990.00"), "the amount actually received");
  t.false(JSON.stringify(scriptData(html).view).includes("order-secret"), "the polled view has no process id: the order is rendered once");
  for (const absent of ["id=\"details\"", "id=\"countdown\"", "id=\"deadline\"", "id=\"simulate\"", IBAN, "dep_secret", "mer_secret", "cus_secret", "tok_secret"]) {
    t.false(html.includes(absent), absent);
  }
});

test("without an assigned account the page says the details are not available and offers no simulation", (t) => {
  const html = render(pendingView({ iban: null, bankName: null, accountName: null, sandbox: true }), "en");
  t.true(html.includes(TEXTS.en.noAccountTitle));
  t.true(html.includes(escapeHtml(TEXTS.en.noAccountText)));
  t.false(html.includes('id="details"'));
  t.false(html.includes('id="simulate"'));
  t.true(html.includes('id="sandbox-banner"'), "still marked as a test payment");
});

test("a sandbox deposit gets a clearly marked simulate button in the page's language", (t) => {
  t.true(render(pendingView({ sandbox: true })).includes(`id="simulate" data-sandbox="true">Ödemeyi simüle et</button>`));
  t.true(render(pendingView({ sandbox: true }), "en").includes(`>Simulate payment</button>`));
  t.false(render(pendingView({ sandbox: false })).includes('id="simulate"'));
  t.false(render(pendingView({ sandbox: false })).includes('id="sandbox-banner"'));
});

test("the language is ?lang when valid, else the best of Accept-Language, else Turkish", (t) => {
  t.is(chooseLanguage(undefined, undefined), "tr");
  t.is(chooseLanguage("en", "tr-TR"), "en");
  t.is(chooseLanguage("EN", undefined), "en");
  t.is(chooseLanguage("tr", "en-US,en;q=0.9"), "tr");
  t.is(chooseLanguage("de", "en-GB,en;q=0.8"), "en");
  t.is(chooseLanguage(["en", "tr"], "tr"), "tr");
  t.is(chooseLanguage(undefined, "de-DE,de;q=0.9,en;q=0.8,tr;q=0.7"), "en");
  t.is(chooseLanguage(undefined, "de-DE,tr;q=0.5,en;q=0.4"), "tr");
  t.is(chooseLanguage(undefined, "en;q=0,fr"), "tr");
  t.is(chooseLanguage(undefined, "*"), "tr");
});

test("IBANs are grouped in fours and amounts follow the currency's minor unit", (t) => {
  t.is(groupIban(IBAN), "TR33 0006 1005 1978 6457 8413 26");
  t.is(groupIban("tr33 0006 1005"), "tr33 0006 1005");
  t.is(formatAmount(1, "TRY", "en-US"), "₺0.01");
  t.is(formatAmount(125_000, "EUR", "en-US"), "€1,250.00");
  t.is(formatAmount(1250, "JPY", "en-US"), "¥1,250");
});

test("behind a path prefix in PUBLIC_BASE_URL the page polls and posts under that prefix", (t) => {
  t.is(basePathOf("https://pay.example.com"), "");
  t.is(basePathOf("https://pay.example.com/"), "");
  t.is(basePathOf("https://shop.example.com/pay/"), "/pay");
  const html = renderCheckoutPage({ view: pendingView({ sandbox: true }), order: order(), token: "tok_1", lang: "tr", nonce: NONCE, basePath: "/pay" });
  t.true(html.includes('"statusUrl":"/pay/checkout/status?token=tok_1"'));
  t.true(html.includes('"simulateUrl":"/pay/checkout/simulate?token=tok_1"'));
});

test("the deadline is a date and time in Türkiye's time zone, whatever the machine's zone, seconds dropped", (t) => {
  const saved = process.env.TZ;
  // A zone far from Türkiye's: a formatter that used the machine's zone would show another day.
  process.env.TZ = "Pacific/Kiritimati";
  try {
    t.is(formatDeadline("2026-11-25T20:41:00.000Z", TEXTS.tr), "25 Kasım 2026 23:41");
    t.is(formatDeadline("2026-11-25T20:41:00.000Z", TEXTS.en), "25 November 2026, 23:41 (Türkiye time)");
    t.is(formatDeadline("2026-11-25T20:41:59.999Z", TEXTS.tr), "25 Kasım 2026 23:41", "never later than the real deadline");
    t.is(formatDeadline("2026-11-25T21:05:00.000Z", TEXTS.tr), "26 Kasım 2026 00:05", "past midnight in Türkiye is the next day");
    t.is(formatDeadline("2026-07-01T09:00:00.000Z", TEXTS.en), "1 July 2026, 12:00 (Türkiye time)", "UTC+3 in summer too: Türkiye keeps no daylight saving");
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
  const html = render(pendingView({ expiresAt: "2026-11-25T20:41:00.000Z", serverTime: "2026-11-25T20:11:00.000Z" }));
  t.is(textOf(html, "deadline"), "25 Kasım 2026 23:41");
  t.true(html.includes('<time id="deadline" datetime="2026-11-25T20:41:00.000Z">'), "machine-readable too");
  t.true(html.includes(`${TEXTS.tr.deadlineLabel}: <time`));
  t.is(textOf(html, "countdown"), "30:00", "beside the countdown");
  const en = render(pendingView({ expiresAt: "2026-11-25T20:41:00.000Z", serverTime: "2026-11-25T20:11:00.000Z" }), "en");
  t.is(textOf(en, "deadline"), "25 November 2026, 23:41 (Türkiye time)");
});

test("a return URL is kept only when it is http(s) without credentials; anything else gives no link at all", (t) => {
  t.is(safeReturnUrl("https://shop.example.com/orders/1001?from=checkout"), "https://shop.example.com/orders/1001?from=checkout");
  t.is(safeReturnUrl("http://localhost:3000/done"), "http://localhost:3000/done");
  t.is(safeReturnUrl("HTTPS://Shop.Example.com"), "https://shop.example.com/", "normalised");
  t.is(safeReturnUrl(" https://shop.example.com/a b "), "https://shop.example.com/a%20b");
  for (const refused of [
    "",
    "   ",
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "ftp://shop.example.com/",
    "mailto:shop@example.com",
    "//evil.example/",
    "/orders/1001",
    "https://bank.example@evil.example/",
    "https://user:pw@shop.example.com/",
  ]) {
    t.is(safeReturnUrl(refused), null, refused);
  }
  const deposit = create(DepositSchema, { processId: "order-1", returnUrl: "javascript:alert(1)" });
  t.is(checkoutOrder(deposit, "Örnek Mağaza").returnUrl, null);
  // Even an order built without safeReturnUrl cannot put another scheme in the page.
  for (const status of CHECKOUT_STATUSES) {
    const html = render(pendingView({ status }), "tr", "tok_1", order({ returnUrl: "javascript:alert(1)" }));
    t.false(html.includes('id="return-link"'), status);
    t.false(html.toLowerCase().includes("javascript:"), status);
  }
});

test("the return link goes back to the return URL at every status, names the merchant, and opens nothing with a referrer", (t) => {
  for (const lang of LANGUAGES) {
    for (const status of CHECKOUT_STATUSES) {
      const html = render(pendingView({ status }), lang, "tok_1", order({ returnUrl: RETURN_URL }));
      const link = tags(html, "a").filter((tag) => tag.includes('id="return-link"'));
      t.deepEqual(link, [`<a class="back" id="return-link" href="${escapeHtml(RETURN_URL)}" rel="noopener noreferrer">`], `${lang} ${status}`);
      t.false(link[0]!.includes("target="), "same tab: the customer goes back, no second window");
    }
  }
  t.is(textOf(render(pendingView(), "tr", "tok_1", order({ returnUrl: RETURN_URL })), "return-link"), "Örnek Mağaza sitesine dön");
  t.is(textOf(render(pendingView(), "en", "tok_1", order({ returnUrl: RETURN_URL })), "return-link"), "Back to Örnek Mağaza");
  t.is(textOf(render(pendingView(), "tr", "tok_1", order({ merchantName: null, returnUrl: RETURN_URL })), "return-link"), "Mağazaya dön");
  t.is(textOf(render(pendingView(), "en", "tok_1", order({ merchantName: null, returnUrl: RETURN_URL })), "return-link"), "Back to the shop");
  t.is(returnLinkText(TEXTS.en, "Shop {merchant} & Co"), "Back to Shop {merchant} & Co", "a name that looks like a blank is not filled again");
});

test("without a return URL there is no link, and the completed and expired texts promise no way back", (t) => {
  for (const lang of LANGUAGES) {
    const texts = TEXTS[lang];
    for (const status of ["completed", "expired"] as const) {
      const without = render(pendingView({ status, iban: null, bankName: null, accountName: null }), lang, "tok_1", order({ returnUrl: null }));
      t.false(without.includes('id="return-link"'));
      t.is(textOf(without, "status-text"), escapeHtml(texts.status[status].text), `${lang} ${status}`);
      t.notRegex(texts.status[status].text, /link|bağlantı|dön/i, "no link, no return promised");
      const withLink = render(pendingView({ status, iban: null, bankName: null, accountName: null }), lang, "tok_1", order({ returnUrl: RETURN_URL }));
      t.is(textOf(withLink, "status-text"), escapeHtml(texts.status[status].textWithReturn!));
    }
    // The script, which writes the text after a change, gets the same choice.
    t.deepEqual(scriptData(render(pendingView(), lang, "tok_1", order({ returnUrl: null }))).texts.status, statusTexts(texts, false));
    t.deepEqual(scriptData(render(pendingView(), lang, "tok_1", order({ returnUrl: RETURN_URL }))).texts.status, statusTexts(texts, true));
    t.is(statusTexts(texts, true).completed.text, texts.status.completed.textWithReturn!);
    t.is(statusTexts(texts, false).completed.text, texts.status.completed.text);
  }
});

test("the page names whom the customer pays and the order in both languages, and reads well without a display name", (t) => {
  const tr = render(pendingView());
  t.true(tr.includes('<div class="row"><dt>Satıcı</dt><dd id="merchant-name">Örnek Mağaza</dd></div>'));
  t.true(tr.includes('<div class="row"><dt>Sipariş numarası</dt><dd id="order-id">order-1001</dd></div>'));
  t.true(tr.includes("<title>Ödeme: Ödemeniz bekleniyor – Örnek Mağaza</title>"));
  const en = render(pendingView(), "en");
  t.true(en.includes('<dt>Merchant</dt><dd id="merchant-name">Örnek Mağaza</dd>'));
  t.true(en.includes('<dt>Order reference</dt><dd id="order-id">order-1001</dd>'));
  // What the page already showed stays: amount, IBAN, holder, bank, reference.
  for (const html of [tr, en]) {
    for (const id of ["amount", "iban", "account-name", "bank-name", "reference", "deadline", "countdown"]) t.not(textOf(html, id), undefined, id);
  }

  const nameless = render(pendingView(), "tr", "tok_1", order({ merchantName: null }));
  t.false(nameless.includes('id="merchant-name"'));
  t.false(nameless.includes("<dt>Satıcı</dt>"), "no label left without its value");
  t.true(nameless.includes("<title>Ödeme: Ödemeniz bekleniyor</title>"));
  t.is(textOf(nameless, "order-id"), "order-1001");
  t.is(scriptData(nameless).merchantName, null);
  t.is(checkoutOrder(create(DepositSchema, { processId: "p" }), "   ").merchantName, null, "a blank display name is no name");
});

test("screen readers: one empty polite status region, a focusable status heading, named copy buttons, a countdown that is never announced", (t) => {
  for (const lang of LANGUAGES) {
    const html = render(pendingView({ sandbox: true }), lang, "tok_1", order({ returnUrl: RETURN_URL }));
    const live = html.match(/<[^>]*aria-live=[^>]*>/g) ?? [];
    t.deepEqual(live, ['<div class="sr-only" id="live" role="status" aria-live="polite" aria-atomic="true">'], "one live region, no other");
    t.is(textOf(html, "live"), "", "empty at first, so its later text is announced");
    t.true(html.includes(`<h2 id="status-title" tabindex="-1">${escapeHtml(TEXTS[lang].status.pending.title)}</h2>`));
    t.false(/id="countdown"[^>]*(role|aria-live)/.test(html), "the countdown is not a live region");
    // Every button has words of its own.
    for (const button of html.match(/<button\b[^>]*>[\s\S]*?<\/button>/g) ?? []) {
      t.regex(button.replace(/<[^>]+>/g, "").trim(), /\S/, button);
    }
    t.is(html.match(/<button\b[^>]*class="copy"/g)?.length, 2);
    t.true(html.includes(`data-copy-name="${TEXTS[lang].copyNames.iban}"`));
    t.true(html.includes(`data-copy-name="${TEXTS[lang].copyNames.reference}"`));
  }
  // The script says what the markup promises.
  t.true(CHECKOUT_SCRIPT.includes('byId("live")'));
  t.true(CHECKOUT_SCRIPT.includes("heading.focus()"));
  t.false(/announce\([^)]*formatRemaining/.test(CHECKOUT_SCRIPT), "the countdown is not announced");
});

test("both languages have every text, with the same blanks in their templates", (t) => {
  const blanks = (value: string) => [...value.matchAll(/\{([a-z]+)\}/g)].map((m) => m[1]).sort();
  const flat = (texts: CheckoutTexts): Record<string, string> => {
    const out: Record<string, string> = {};
    const walk = (prefix: string, value: unknown) => {
      if (typeof value === "string") out[prefix] = value;
      else if (value && typeof value === "object") for (const [key, inner] of Object.entries(value)) walk(prefix ? `${prefix}.${key}` : key, inner);
    };
    walk("", texts);
    return out;
  };
  const tr = flat(TEXTS.tr);
  const en = flat(TEXTS.en);
  t.deepEqual(Object.keys(tr).sort(), Object.keys(en).sort());
  for (const [key, value] of Object.entries(tr)) {
    t.true(value.trim().length > 0, `tr ${key}`);
    t.true(en[key]!.trim().length > 0, `en ${key}`);
    t.deepEqual(blanks(value), blanks(en[key]!), key);
  }
  t.is(fillText(TEXTS.tr.copiedAnnouncement, { name: TEXTS.tr.copyNames.iban }), "IBAN kopyalandı");
  t.is(fillText(TEXTS.en.copiedAnnouncement, { name: TEXTS.en.copyNames.reference }), "Reference code copied");
  t.is(fillText("{a} {b}", { a: "{b}", b: "x" }), "{b} x", "one pass");
  t.is(fillText("{unknown}", {}), "{unknown}");
});

// ---------------------------------------------------------------- routes, real services

const dataDirs: string[] = [];
let running: RunningServices | undefined;
let gateway: RunningGateway | undefined;
let merchants: Client<typeof MerchantService>;
let bankCatalog: Client<typeof BankCatalogService>;
let deposits: Client<typeof DepositService>;
let sandboxMerchant = "";
let liveMerchant = "";
/** A bank of its own whose one account has a hostile holder name. */
let hostileBank = "";
/** A bank with no receiving account. */
let emptyBank = "";

test.before(async () => {
  const dir = mkdtempSync(join(tmpdir(), "checkout-test-"));
  dataDirs.push(dir);
  running = await startInProcess(["merchant", "bank-catalog", "deposit"], {
    env: { DATA_DIR: dir, MASTER_KEY: randomBytes(32).toString("hex"), LOG_LEVEL: "warn" },
    receivingAccounts: true,
  });
  const url = running.server.url;
  merchants = createServiceClient(MerchantService, url);
  bankCatalog = createServiceClient(BankCatalogService, url);
  deposits = createServiceClient(DepositService, url);
  gateway = await startGateway({
    env: { ...TEST_OPERATOR_ENV, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    bus: running.bus,
    merchantUrl: url,
    bankCatalogUrl: url,
    depositUrl: url,
    payoutUrl: url,
    callbackUrl: url,
  });
  sandboxMerchant = (await merchants.createMerchant({ name: "Sandbox Shop", sandbox: true })).merchant!.id;
  liveMerchant = (await merchants.createMerchant({ name: "Live Shop", sandbox: false })).merchant!.id;
  const limits = { minAmount: 100n, maxAmount: 10_000_000n };
  hostileBank = (await bankCatalog.createBank({ name: HOSTILE, code: "EVIL", logoUrl: "", ...limits })).bank!.id;
  await bankCatalog.createReceivingAccount({ bankId: hostileBank, accountName: HOSTILE, iban: IBAN, fastEnabled: false, sandbox: true });
  emptyBank = (await bankCatalog.createBank({ name: "Empty Bank", code: "EMPTY", logoUrl: "", ...limits })).bank!.id;
});

test.after.always(async () => {
  await gateway?.stop();
  await running?.stop();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

const gw = () => gateway!.url;

async function newDeposit(merchantId: string, options: { bankId?: string; amount?: bigint } = {}) {
  const res = await deposits.createDeposit({
    merchantId,
    processId: `order-${randomBytes(4).toString("hex")}`,
    amount: options.amount ?? 125_000n,
    bankId: options.bankId ?? "",
    customer: { id: "cus_42", name: HOSTILE, username: "ayse" },
    metadataJson: '{"cart":"c_1"}',
  });
  return res.deposit!;
}

/** One character changed, so it still has a token's shape. */
function tamper(token: string): string {
  const i = Math.floor(token.length / 2);
  return token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
}

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw()}${path}`, { headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function post(path: string) {
  const res = await fetch(`${gw()}${path}`, { method: "POST", redirect: "manual" });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: JSON.parse(text) as { success: boolean; data?: Record<string, unknown>; error?: { code: string; message: string } } };
}

function securityHeaders(t: { is(a: unknown, b: unknown, m?: string): void; true(a: boolean, m?: string): void }, headers: Headers): void {
  t.is(headers.get("referrer-policy"), "no-referrer");
  t.is(headers.get("cache-control"), "no-store");
  t.is(headers.get("x-content-type-options"), "nosniff");
  const csp = headers.get("content-security-policy") ?? "";
  t.true(csp.includes("default-src 'none'") && csp.includes("frame-ancestors 'none'"), csp);
}

function cspNonce(headers: Headers): string {
  return /script-src 'nonce-([^']+)'/.exec(headers.get("content-security-policy") ?? "")?.[1] ?? "";
}

test("a valid token opens the page: account, reference, amount and countdown, under the security headers and a fresh nonce", async (t) => {
  const deposit = await newDeposit(sandboxMerchant);
  const account = deposit.assignedAccount!;
  t.truthy(account, "the seeded pool assigns an account");
  const page = await get(`/checkout?token=${deposit.checkoutToken}`);
  t.is(page.status, 200);
  t.regex(page.headers.get("content-type") ?? "", /^text\/html; charset=utf-8/);
  securityHeaders(t, page.headers);
  const nonce = cspNonce(page.headers);
  t.true(nonce.length >= 22);
  t.true(page.text.includes(`<script nonce="${nonce}">`));
  t.true(page.text.includes(`<style nonce="${nonce}">`));
  t.not(cspNonce((await get(`/checkout?token=${deposit.checkoutToken}`)).headers), nonce, "a new nonce per response");

  t.true(page.text.includes(escapeHtml(account.bankName)));
  t.true(page.text.includes(escapeHtml(account.accountName)));
  t.true(page.text.includes(groupIban(account.iban)));
  t.true(page.text.includes(`data-copy="${deposit.reference}"`));
  t.true(page.text.includes("1.250,00"));
  t.true(page.text.includes('<html lang="tr">'));
  t.regex(page.text, /<span id="countdown">(29:59|30:00)<\/span>/);
  t.is(textOf(page.text, "order-id"), deposit.processId, "the merchant's order reference is shown");
  // Nothing else of the merchant's or the customer's leaks into the page.
  for (const secret of [deposit.id, deposit.merchantId, "cus_42", "c_1", "ayse"]) t.false(page.text.includes(secret), secret);
  t.false(page.text.includes("<script>alert"), "the hostile customer name is nowhere");
});

test("an unknown, a tampered, a missing or a doubled token gets the 404 invalid-link page, never a deposit or a stack", async (t) => {
  const deposit = await newDeposit(sandboxMerchant);
  for (const query of ["?token=nope", `?token=${tamper(deposit.checkoutToken)}`, "", `?token=${deposit.checkoutToken}&token=${deposit.checkoutToken}`, `?token=${"x".repeat(500)}`]) {
    const page = await get(`/checkout${query}`);
    t.is(page.status, 404, query);
    securityHeaders(t, page.headers);
    t.regex(page.headers.get("content-type") ?? "", /^text\/html/);
    t.true(page.text.includes(TEXTS.tr.invalidTitle));
    t.true(page.text.includes(TEXTS.tr.invalidText));
    t.false(page.text.includes(deposit.reference), "no reference of any deposit");
    t.false(page.text.includes(deposit.assignedAccount!.iban));
    t.false(/\bat .*\.(ts|js):\d+/.test(page.text), "no stack");
  }
  const en = await get(`/checkout?token=${tamper(deposit.checkoutToken)}`, { "Accept-Language": "en-US,en;q=0.9" });
  t.is(en.status, 404);
  t.true(en.text.includes("This payment link is not valid or has expired"));
});

test("Accept-Language picks English, ?lang=tr overrides it, and the switch keeps the token", async (t) => {
  const deposit = await newDeposit(sandboxMerchant);
  const en = await get(`/checkout?token=${deposit.checkoutToken}`, { "Accept-Language": "en-GB,en;q=0.9" });
  t.true(en.text.includes('<html lang="en">'));
  t.true(en.text.includes(TEXTS.en.status.pending.title));
  t.true(en.text.includes("₺1,250.00"));
  t.true(en.text.includes(`href="?token=${deposit.checkoutToken}&amp;lang=tr"`));
  t.is(en.headers.get("content-language"), "en");
  const tr = await get(`/checkout?token=${deposit.checkoutToken}&lang=tr`, { "Accept-Language": "en-GB,en;q=0.9" });
  t.true(tr.text.includes('<html lang="tr">'));
  t.true(tr.text.includes(TEXTS.tr.status.pending.title));
});

test("the status JSON has exactly the page's fields; a tampered token is 404 CHECKOUT_NOT_FOUND", async (t) => {
  const deposit = await newDeposit(liveMerchant);
  const res = await fetch(`${gw()}/checkout/status?token=${deposit.checkoutToken}`);
  t.is(res.status, 200);
  securityHeaders(t, res.headers);
  t.regex(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = (await res.json()) as { success: boolean; data: Record<string, unknown>; timestamp: number };
  t.true(body.success);
  t.true(Number.isInteger(body.timestamp));
  t.deepEqual(Object.keys(body.data).sort(), ["accountName", "amount", "bankName", "currency", "expiresAt", "iban", "reference", "sandbox", "serverTime", "status"]);
  t.like(body.data, {
    status: "pending",
    amount: 125_000,
    currency: "TRY",
    bankName: deposit.assignedAccount!.bankName,
    accountName: deposit.assignedAccount!.accountName,
    iban: deposit.assignedAccount!.iban,
    reference: deposit.reference,
    sandbox: false,
  });
  t.regex(String(body.data.expiresAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.true(Math.abs(Date.parse(String(body.data.serverTime)) - Date.now()) < 10_000);

  for (const query of [`?token=${tamper(deposit.checkoutToken)}`, "?token=", ""]) {
    const missing = await fetch(`${gw()}/checkout/status${query}`);
    t.is(missing.status, 404);
    securityHeaders(t, missing.headers);
    const failure = (await missing.json()) as { success: boolean; error: { code: string } };
    t.false(failure.success);
    t.is(failure.error.code, "CHECKOUT_NOT_FOUND");
  }
});

test("simulate completes a sandbox merchant's deposit once; the status then hides the account; again is 409", async (t) => {
  const deposit = await newDeposit(sandboxMerchant);
  const first = await post(`/checkout/simulate?token=${deposit.checkoutToken}`);
  t.is(first.status, 200);
  securityHeaders(t, first.headers);
  t.true(first.json.success);
  t.like(first.json.data, { status: "completed", amount: 125_000, iban: null, bankName: null, accountName: null, sandbox: true });
  t.is((await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit.id } })).deposit?.status, DepositStatus.COMPLETED);

  const status = await fetch(`${gw()}/checkout/status?token=${deposit.checkoutToken}`);
  t.like(((await status.json()) as { data: Record<string, unknown> }).data, { status: "completed", iban: null });
  const page = await get(`/checkout?token=${deposit.checkoutToken}`, { "Accept-Language": "en" });
  t.is(page.status, 200);
  t.true(page.text.includes(TEXTS.en.status.completed.title));
  t.false(page.text.includes(deposit.assignedAccount!.iban));

  const again = await post(`/checkout/simulate?token=${deposit.checkoutToken}`);
  t.is(again.status, 409);
  t.is(again.json.error?.code, "INVALID_TRANSACTION_STATE");
});

test("simulate for a live merchant is 403 SANDBOX_ONLY and nothing changes", async (t) => {
  const deposit = await newDeposit(liveMerchant);
  const page = await get(`/checkout?token=${deposit.checkoutToken}`);
  t.false(page.text.includes('id="simulate"'), "no button for a live merchant");
  const res = await post(`/checkout/simulate?token=${deposit.checkoutToken}`);
  t.is(res.status, 403);
  securityHeaders(t, res.headers);
  t.false(res.json.success);
  t.is(res.json.error?.code, "SANDBOX_ONLY");
  const after = (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: deposit.id } })).deposit!;
  t.is(after.status, DepositStatus.PENDING);
  t.is(after.sequence, deposit.sequence);
  t.is((await post(`/checkout/simulate?token=${tamper(deposit.checkoutToken)}`)).status, 404);
});

test("a bank without a receiving account takes no deposit; one stored without an account (made before accounts were required) gets a page saying so, and simulate is 409 NO_ASSIGNED_ACCOUNT", async (t) => {
  const refused = await t.throwsAsync(newDeposit(sandboxMerchant, { bankId: emptyBank }));
  t.regex(refused.message, /no receiving account is available for this bank/);
  const made = await newDeposit(sandboxMerchant);
  await running!
    .contexts.get("deposit")!
    .db("deposits")
    .where({ id: made.id })
    .update({ account_id: null, account_bank_id: null, account_bank_name: null, account_name: null, account_iban: null });
  const deposit = (await deposits.getDeposit({ allMerchants: true, key: { case: "depositId", value: made.id } })).deposit!;
  t.is(deposit.assignedAccount, undefined);
  const page = await get(`/checkout?token=${deposit.checkoutToken}&lang=en`);
  t.is(page.status, 200);
  t.true(page.text.includes(TEXTS.en.noAccountTitle));
  t.false(page.text.includes('id="simulate"'));
  const res = await post(`/checkout/simulate?token=${deposit.checkoutToken}`);
  t.is(res.status, 409);
  t.is(res.json.error?.code, "NO_ASSIGNED_ACCOUNT");
});

test("a bank and holder name full of markup reach the customer as text", async (t) => {
  const deposit = await newDeposit(sandboxMerchant, { bankId: hostileBank });
  t.is(deposit.assignedAccount?.accountName, HOSTILE.trim());
  const page = await get(`/checkout?token=${deposit.checkoutToken}`);
  t.is(page.status, 200);
  t.false(page.text.includes("<script>alert"));
  t.false(page.text.includes("<img"));
  t.true(page.text.includes(escapeHtml(HOSTILE.trim())));
  t.is(page.text.match(/<\/script/gi)?.length, 2);
});

test("HEAD works on the page and other methods are 405", async (t) => {
  const deposit = await newDeposit(sandboxMerchant);
  const head = await fetch(`${gw()}/checkout?token=${deposit.checkoutToken}`, { method: "HEAD" });
  t.is(head.status, 200);
  t.is(head.headers.get("referrer-policy"), "no-referrer");
  t.is((await fetch(`${gw()}/checkout/simulate?token=${deposit.checkoutToken}`)).status, 405);
  t.is((await fetch(`${gw()}/checkout?token=${deposit.checkoutToken}`, { method: "POST" })).status, 405);
});

// ---------------------------------------------------------------- a failing service (fakes)

test("a deposit service that is down gives the customer a 503 page to reload, no envelope and no stack; the log has it", async (t) => {
  const logLines: string[] = [];
  const transport = createRouterTransport(({ service }) => {
    service(DepositService, {
      getCheckout: () => {
        throw new ConnectError("connect ECONNREFUSED 10.0.0.7:9090 at Socket.internalConnect", Code.Unavailable);
      },
      simulatePayment: () => {
        throw new ConnectError("boom SELECT * FROM deposits", Code.Internal);
      },
    });
  });
  const merchantsClient = createClient(MerchantService, transport);
  const app = createApp({
    config: loadGatewayConfig({ PORT: "0" }),
    merchants: merchantsClient,
    bankCatalog: createClient(BankCatalogService, transport),
    deposits: createClient(DepositService, transport),
    payouts: createClient(PayoutService, transport),
    callbacks: createClient(CallbackService, transport),
    health: { deposit: createClient(Health, transport) },
    credentials: new CredentialCache({ merchants: merchantsClient, clock: { now: () => new Date() }, ttlMs: 0, negativeTtlMs: 0 }),
    logger: createLogger({ service: "gateway", level: "info", destination: { write: (line: string) => void logLines.push(line) } }),
    metrics: createMetrics(),
    clock: { now: () => new Date() },
  });
  const handle = app.callback();
  // Fire-and-forget is safe: Koa catches every error of a request itself (the error handler answers
  // with the envelope), so the promise never rejects.
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = "A".repeat(32);

  const page = await fetch(`${base}/checkout?token=${token}`);
  const text = await page.text();
  t.is(page.status, 503);
  t.regex(page.headers.get("content-type") ?? "", /^text\/html/);
  t.is(page.headers.get("referrer-policy"), "no-referrer");
  t.true(text.includes(TEXTS.tr.unavailableTitle));
  t.false(text.includes("ECONNREFUSED"));
  t.true(logLines.some((line) => line.includes("ECONNREFUSED")));

  const status = await fetch(`${base}/checkout/status?token=${token}`);
  t.is(status.status, 503);
  t.is(((await status.json()) as { error: { code: string } }).error.code, "SERVICE_UNAVAILABLE");

  const simulate = await fetch(`${base}/checkout/simulate?token=${token}`, { method: "POST" });
  const simulateText = await simulate.text();
  t.is(simulate.status, 500);
  t.false(simulateText.includes("SELECT"));
  t.is(simulate.headers.get("cache-control"), "no-store");
});
