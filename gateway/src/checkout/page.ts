import { randomBytes } from "node:crypto";
import { CHECKOUT_SCRIPT } from "./page-script.js";
import { CHECKOUT_STYLE } from "./page-style.js";
import { LANGUAGE_NAMES, LANGUAGES, TEXTS, returnLinkText, statusTexts, type CheckoutTexts, type Language } from "./texts.js";
import { formatAmount, formatDeadline, groupIban, isFinalStatus, safeReturnUrl, type CheckoutOrder, type CheckoutView } from "./view.js";

/** How often the page asks for the status while the deposit is pending. */
export const POLL_INTERVAL_MS = 3000;

/** A fresh 128-bit nonce for one response's script and style. */
export function newNonce(): string {
  return randomBytes(16).toString("base64");
}

/**
 * The headers of every checkout response, HTML and JSON. The token is in the URL, so no
 * referrer leaves the page and nothing is cached; the page may not be framed, may not
 * submit forms, and runs only the script and style carrying this response's nonce.
 */
export function checkoutSecurityHeaders(nonce?: string): Record<string, string> {
  const policy = nonce
    ? [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "connect-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
      ]
    : ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"];
  return {
    "Content-Security-Policy": policy.join("; "),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
  };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text for an HTML text node or a double-quoted attribute. Everything from outside goes through this. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** JSON for an inert `<script type="application/json">` block: nothing in it can close the element or open a comment. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Where the gateway's own paths start, from PUBLIC_BASE_URL ("" at the root, "/pay" behind a prefix). */
export function basePathOf(publicBaseUrl: string): string {
  try {
    return new URL(publicBaseUrl).pathname.replace(/\/+$/, "");
  } catch {
    return "";
  }
}

/** A link to this page in another language, keeping the token; relative, so it works behind any prefix. */
function languageHref(token: string | undefined, lang: Language): string {
  const params = new URLSearchParams();
  if (token !== undefined) params.set("token", token);
  params.set("lang", lang);
  return `?${params.toString()}`;
}

function languageSwitch(current: Language, token: string | undefined): string {
  const t = TEXTS[current];
  const links = LANGUAGES.map((lang) => {
    const label = lang.toUpperCase();
    const currentAttr = lang === current ? ' aria-current="true"' : "";
    // "TR" alone says little to a screen reader; the name follows it, so the visible label still starts the accessible name.
    return `<a href="${escapeHtml(languageHref(token, lang))}" hreflang="${lang}" lang="${lang}"${currentAttr}>${label}<span class="sr-only"> ${escapeHtml(LANGUAGE_NAMES[lang])}</span></a>`;
  }).join("");
  return `<nav class="lang" aria-label="${escapeHtml(t.languageSwitch)}">${links}</nav>`;
}

function documentShell(options: { lang: Language; nonce: string; title: string; body: string; script?: string }): string {
  const { lang, nonce } = options;
  return [
    "<!doctype html>",
    `<html lang="${lang}">`,
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="robots" content="noindex, nofollow">',
    `<title>${escapeHtml(options.title)}</title>`,
    `<style nonce="${escapeHtml(nonce)}">${CHECKOUT_STYLE}</style>`,
    "</head>",
    "<body>",
    options.body,
    options.script ?? "",
    "</body>",
    "</html>",
  ].join("\n");
}

/** The countdown as first painted, before the script takes over; the same format the script uses. */
function remainingText(view: CheckoutView, timeUp: string): string {
  const ms = Date.parse(view.expiresAt) - Date.parse(view.serverTime);
  if (!(ms > 0)) return timeUp;
  const s = Math.ceil(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${h > 0 ? `${h}:${two(m)}` : two(m)}:${two(s % 60)}`;
}

function copyField(options: { label: string; value: string; display?: string; copyLabel: string; copyName: string; id: string; mono?: boolean }): string {
  // The visible word ("Kopyala") starts the button's accessible name and the field follows,
  // hidden: "Kopyala IBAN". No colon: the hidden part is a block to the name computation, so
  // it would be read as "Kopyala : IBAN". The script changes only the visible word
  // ("Kopyalandı") and says what was copied through the live region.
  return [
    '<div class="field">',
    `<dt>${escapeHtml(options.label)}</dt>`,
    `<dd><span class="value${options.mono ? " mono" : ""}" id="${options.id}">${escapeHtml(options.display ?? options.value)}</span>`,
    `<button type="button" class="copy" data-copy="${escapeHtml(options.value)}" data-copy-name="${escapeHtml(options.copyName)}">`,
    `<span class="copy-label">${escapeHtml(options.copyLabel)}</span><span class="sr-only"> ${escapeHtml(options.label)}</span></button></dd>`,
    "</div>",
  ].join("");
}

function plainField(label: string, value: string, id: string): string {
  return `<div class="field"><dt>${escapeHtml(label)}</dt><dd><span class="value" id="${id}">${escapeHtml(value)}</span></dd></div>`;
}

/** The tab's title; the script builds the same after a status change. */
function documentTitle(t: CheckoutTexts, statusTitle: string, merchantName: string | null): string {
  return `${t.pageTitle}: ${statusTitle}${merchantName === null ? "" : ` – ${merchantName}`}`;
}

export interface CheckoutPageInput {
  view: CheckoutView;
  order: CheckoutOrder;
  token: string;
  lang: Language;
  nonce: string;
  /** basePathOf(PUBLIC_BASE_URL). */
  basePath: string;
  pollMs?: number;
}

/** The whole checkout page for a deposit the token opened. */
export function renderCheckoutPage(input: CheckoutPageInput): string {
  const { view, order, token, lang, nonce } = input;
  const t = TEXTS[lang];
  const final = isFinalStatus(view.status);
  const hasAccount = view.iban !== null;
  // Checked again here, not only when the order was made: this is where it becomes an href.
  const returnUrl = order.returnUrl === null ? null : safeReturnUrl(order.returnUrl);
  const statuses = statusTexts(t, returnUrl !== null);
  const status = statuses[view.status];
  const query = `token=${encodeURIComponent(token)}`;

  const summary = [
    '<dl class="summary" id="summary">',
    order.merchantName === null ? "" : `<div class="row"><dt>${escapeHtml(t.merchantLabel)}</dt><dd id="merchant-name">${escapeHtml(order.merchantName)}</dd></div>`,
    `<div class="row"><dt>${escapeHtml(t.orderLabel)}</dt><dd id="order-id">${escapeHtml(order.processId)}</dd></div>`,
    "</dl>",
  ].join("");
  const details =
    !final && hasAccount
      ? [
          '<section id="details" aria-labelledby="details-title">',
          `<h2 id="details-title">${escapeHtml(t.instructions)}</h2>`,
          "<dl>",
          plainField(t.bankName, view.bankName ?? "", "bank-name"),
          plainField(t.accountName, view.accountName ?? "", "account-name"),
          copyField({ label: t.iban, value: view.iban ?? "", display: groupIban(view.iban ?? ""), copyLabel: t.copy, copyName: t.copyNames.iban, id: "iban", mono: true }),
          copyField({ label: t.reference, value: view.reference, copyLabel: t.copy, copyName: t.copyNames.reference, id: "reference", mono: true }),
          "</dl>",
          `<p class="note" id="reference-note">${escapeHtml(t.referenceNote)}</p>`,
          "</section>",
        ].join("\n")
      : "";
  const noAccount = !final && !hasAccount ? `<section id="no-account" class="note"><strong>${escapeHtml(t.noAccountTitle)}</strong><br>${escapeHtml(t.noAccountText)}</section>` : "";
  const sandboxBanner = view.sandbox
    ? `<p class="sandbox" id="sandbox-banner"><span class="badge">${escapeHtml(t.sandboxBadge)}</span>${escapeHtml(t.sandboxText)}</p>`
    : "";
  const simulate =
    view.sandbox && !final && hasAccount
      ? [
          '<section id="simulate-box">',
          `<button type="button" class="simulate" id="simulate" data-sandbox="true">${escapeHtml(t.simulate)}</button>`,
          '<p class="error" id="simulate-error" role="alert" hidden></p>',
          "</section>",
        ].join("\n")
      : "";
  // The deadline does not change, so it is written once; the countdown beside it runs in the
  // script but is no live region: a screen reader reads it when asked, and is not told every second.
  const deadline = final
    ? ""
    : [
        '<div class="deadline" id="countdown-row">',
        `<p>${escapeHtml(t.deadlineLabel)}: <time id="deadline" datetime="${escapeHtml(view.expiresAt)}">${escapeHtml(formatDeadline(view.expiresAt, t))}</time></p>`,
        `<p>${escapeHtml(t.timeLeft)}: <span id="countdown">${escapeHtml(remainingText(view, t.timeUp))}</span></p>`,
        "</div>",
      ].join("");
  // Same tab: the customer goes back to the shop, not to a second window. No referrer, so the token stays here.
  const returnLink =
    returnUrl === null
      ? ""
      : `<p class="return"><a class="back" id="return-link" href="${escapeHtml(returnUrl)}" rel="noopener noreferrer">${escapeHtml(returnLinkText(t, order.merchantName))}</a></p>`;

  const body = [
    `<main class="checkout" id="checkout" data-status="${view.status}">`,
    '<div class="card">',
    `<div class="top"><h1>${escapeHtml(t.heading)}</h1>${languageSwitch(lang, token)}</div>`,
    sandboxBanner,
    summary,
    `<p class="amount-label" id="amount-label">${escapeHtml(t.amountLabel)}</p>`,
    `<p class="amount" id="amount">${escapeHtml(formatAmount(view.amount, view.currency, t.locale))}</p>`,
    // Focus moves to the heading when the status changes (tabindex -1: focusable by script, not a tab stop).
    `<div class="status status-${view.status}" id="status"><h2 id="status-title" tabindex="-1">${escapeHtml(status.title)}</h2><p id="status-text">${escapeHtml(status.text)}</p></div>`,
    deadline,
    details,
    noAccount,
    simulate,
    `<p class="muted" id="connection" hidden>${escapeHtml(t.connectionLost)}</p>`,
    returnLink,
    // Empty at first, so that what the script puts in it later is announced.
    '<div class="sr-only" id="live" role="status" aria-live="polite" aria-atomic="true"></div>',
    "</div>",
    "</main>",
  ]
    .filter((part) => part !== "")
    .join("\n");

  const data = {
    view,
    texts: { ...t, status: statuses },
    merchantName: order.merchantName,
    pollMs: input.pollMs ?? POLL_INTERVAL_MS,
    statusUrl: `${input.basePath}/checkout/status?${query}`,
    simulateUrl: `${input.basePath}/checkout/simulate?${query}`,
  };
  const script = [
    `<script type="application/json" id="checkout-data">${jsonForScript(data)}</script>`,
    `<script nonce="${escapeHtml(nonce)}">${CHECKOUT_SCRIPT}</script>`,
  ].join("\n");
  return documentShell({ lang, nonce, title: documentTitle(t, status.title, order.merchantName), body, script });
}

function messagePage(options: { lang: Language; nonce: string; token: string | undefined; kind: "invalid" | "unavailable" }): string {
  const t = TEXTS[options.lang];
  const title = options.kind === "invalid" ? t.invalidTitle : t.unavailableTitle;
  const text = options.kind === "invalid" ? t.invalidText : t.unavailableText;
  const body = [
    `<main class="checkout" id="checkout" data-status="${options.kind}">`,
    '<div class="card">',
    `<div class="top"><h1>${escapeHtml(t.pageTitle)}</h1>${languageSwitch(options.lang, options.token)}</div>`,
    `<div class="status status-invalid" id="status" role="alert"><h2 id="status-title">${escapeHtml(title)}</h2><p id="status-text">${escapeHtml(text)}</p></div>`,
    "</div>",
    "</main>",
  ].join("\n");
  return documentShell({ lang: options.lang, nonce: options.nonce, title: `${t.pageTitle}: ${title}`, body });
}

/** The one answer for an unknown, malformed or long-final token: it says nothing about which tokens exist. */
export function renderInvalidLinkPage(options: { lang: Language; nonce: string; token?: string }): string {
  return messagePage({ ...options, token: options.token, kind: "invalid" });
}

/** A backing service failed: a page the customer can reload, never a stack or a JSON envelope. */
export function renderUnavailablePage(options: { lang: Language; nonce: string; token?: string }): string {
  return messagePage({ ...options, token: options.token, kind: "unavailable" });
}
