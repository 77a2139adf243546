import type { Merchant } from "@payments/contracts/merchant";
import { MerchantStatus } from "@payments/contracts/merchant";
import type { Balance, LedgerEntry } from "@payments/contracts/payout";
import { roleAtLeast } from "@payments/access";
import { html, type SafeHtml } from "../../shared/html.js";
import { field } from "../../shared/layout.js";
import { csrfField, money, scrollingTable, timeOf, type Refusal, type SignedIn } from "../operator-call.js";
import { formatMajorPlain, parseMoney } from "../../shared/format.js";
import { balanceTexts, type BalanceTextKey } from "./texts.js";

export type T = (key: BalanceTextKey, params?: Record<string, string | number>) => string;
export const textsOf = (who: SignedIn): T => (key, params) => balanceTexts(who.lang, key, params);

export const DIRECTIONS = ["credit", "debit"] as const;
export type Direction = (typeof DIRECTIONS)[number];
const KINDS = ["deposit_credit", "withdrawal_hold", "withdrawal_release", "withdrawal_settle", "adjustment"] as const;

/** An adjustment as typed: the form's fields, kept as typed so a page can show them again. */
export type AdjustForm = Partial<Record<"direction" | "amount" | "currency" | "reason", string>>;

/** An adjustment read and judged by the console before anything is sent: a positive amount, the way, the currency, a reason. */
export interface Adjustment {
  direction: Direction;
  /** Smallest unit, > 0; the sign comes from the direction. */
  amount: bigint;
  currency: string;
  reason: string;
}

/** The form's problems, by field. */
export type FieldErrors = Partial<Record<keyof AdjustForm, string>>;

/**
 * The adjustment the form asks for, or what is wrong with it. `amount` is lira as a person types
 * it (shared/format.ts `parseMoney`), or with `minor` the smallest unit (the review's hidden field).
 */
export function readAdjustment(t: T, form: AdjustForm, lang: SignedIn["lang"], minor = false): Adjustment | FieldErrors {
  const errors: FieldErrors = {};
  const direction = form.direction;
  if (direction !== "credit" && direction !== "debit") errors.direction = t("adjust.badDirection");
  const text = (form.amount ?? "").trim();
  const amount = minor ? (/^\d{1,18}$/.test(text) ? BigInt(text) : undefined) : parseMoney(text, lang);
  if (amount === undefined || amount <= 0n) errors.amount = t("adjust.badAmount");
  const currency = (form.currency ?? "TRY").trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) errors.currency = t("adjust.badCurrency");
  const reason = (form.reason ?? "").trim();
  if (!reason) errors.reason = t("adjust.reasonRequired");
  if (Object.keys(errors).length > 0 || amount === undefined || (direction !== "credit" && direction !== "debit")) return errors;
  return { direction, amount, currency, reason };
}

export function isAdjustment(value: Adjustment | FieldErrors): value is Adjustment {
  return "amount" in value && typeof value.amount === "bigint";
}

export function summary(who: SignedIn, t: T, m: Merchant): SafeHtml {
  const threshold = m.withdrawalApprovalThreshold;
  return html`<dl class="facts card" aria-label="${t("summary.caption")}">
<dt>${t("summary.name")}</dt><dd>${m.name}</dd>
<dt>${t("summary.status")}</dt><dd>${m.status === MerchantStatus.DISABLED ? t("summary.disabled") : t("summary.active")}</dd>
<dt>${t("summary.kind")}</dt><dd>${m.sandbox ? t("summary.sandbox") : t("summary.live")}</dd>
<dt>${t("summary.callback")}</dt><dd>${m.callbackUrl ? html`<code>${m.callbackUrl}</code>` : "—"}</dd>
<dt>${t("summary.threshold")}</dt><dd>${threshold === undefined ? t("summary.noThreshold") : money(threshold, "TRY", who.lang)}</dd>
<dt>${t("summary.id")}</dt><dd><code>${m.id}</code></dd>
</dl>`;
}

export function balancesTable(who: SignedIn, t: T, balances: Balance[]): SafeHtml {
  return scrollingTable(
    t("balances.caption"),
    html`<table><caption>${t("balances.caption")}</caption>
<thead><tr><th scope="col">${t("balances.currency")}</th><th scope="col" class="num">${t("balances.available")}</th><th scope="col" class="num">${t("balances.held")}</th><th scope="col" class="num">${t("balances.total")}</th></tr></thead>
<tbody>${balances.map((b) => html`<tr><th scope="row">${b.currency}</th><td class="num">${money(b.available, b.currency, who.lang)}</td><td class="num">${money(b.held, b.currency, who.lang)}</td><td class="num">${money(b.available + b.held, b.currency, who.lang)}</td></tr>`)}</tbody></table>`,
  );
}

/** A change of a balance with its sign: `+₺12,50`, `-₺3,00`, `₺0,00`. */
function signed(amount: bigint, currency: string, lang: SignedIn["lang"]): string {
  return amount > 0n ? `+${money(amount, currency, lang)}` : money(amount, currency, lang);
}

export function ledgerTable(who: SignedIn, t: T, entries: LedgerEntry[], shown: number): SafeHtml {
  if (entries.length === 0) return html`<p>${t("ledger.empty")}</p>`;
  const kind = (k: string) => ((KINDS as readonly string[]).includes(k) ? t(`kind.${k}` as BalanceTextKey) : k);
  return html`<p class="hint">${t("ledger.intro", { n: shown })}</p>${scrollingTable(
    t("ledger.caption"),
    html`<table><caption>${t("ledger.caption")}</caption>
<thead><tr><th scope="col">${t("ledger.time")}</th><th scope="col">${t("ledger.kind")}</th><th scope="col" class="num">${t("ledger.available")}</th><th scope="col" class="num">${t("ledger.held")}</th><th scope="col">${t("ledger.reason")}</th><th scope="col">${t("ledger.actor")}</th><th scope="col">${t("ledger.transaction")}</th></tr></thead>
<tbody>${entries.map(
      (e) =>
        html`<tr><td>${timeOf(e.createdAt, who.lang)}</td><td>${kind(e.kind)}</td><td class="num">${signed(e.availableDelta, e.currency, who.lang)}</td><td class="num">${signed(e.heldDelta, e.currency, who.lang)}</td><td>${e.reason || "—"}</td><td>${e.actor || "—"}</td><td><code>${e.transactionId || e.id}</code></td></tr>`,
    )}</tbody></table>`,
  )}`;
}

export interface FormState {
  form?: AdjustForm;
  errors?: FieldErrors;
  refusal?: Refusal;
}

function directionChoice(t: T, chosen: string | undefined, error: string | undefined): SafeHtml {
  const radio = (d: Direction) =>
    html`<div><input type="radio" id="${`adjust-${d}`}" name="direction" value="${d}"${chosen === d ? html` checked` : null}> <label class="inline-label" for="${`adjust-${d}`}">${t(d === "credit" ? "adjust.credit" : "adjust.debit")}</label></div>`;
  return html`<fieldset${error ? html` aria-describedby="adjust-direction-error"` : null}><legend>${t("adjust.direction")}</legend>${radio("credit")}${radio("debit")}
${error ? html`<p class="error" id="adjust-direction-error">${error}</p>` : null}</fieldset>`;
}

/** The adjustment form (finance and above: the payout service decides), which only leads to the review. */
export function adjustForm(who: SignedIn, t: T, merchantId: string, state: FormState): SafeHtml {
  if (!roleAtLeast(who.operator.role, "finance")) return html`<h2>${t("adjust.title")}</h2><p class="hint">${t("adjust.onlyFinance")}</p>`;
  const form = state.form ?? {};
  const errors = state.errors ?? {};
  return html`<form method="post" action="${`/merchants/${merchantId}/balance/review`}" class="card" aria-labelledby="h-adjust"><h2 id="h-adjust">${t("adjust.title")}</h2>
<p>${t("adjust.intro")}</p>${csrfField(who)}
${directionChoice(t, form.direction, errors.direction)}
${field({ id: "adjust-amount", name: "amount", label: t("adjust.amount"), required: true, value: form.amount ?? "", hint: t("adjust.amountHint"), error: errors.amount })}
${field({ id: "adjust-currency", name: "currency", label: t("adjust.currency"), required: true, value: form.currency ?? "TRY", error: errors.currency })}
${field({ id: "adjust-reason", name: "reason", label: t("adjust.reason"), required: true, value: form.reason ?? "", hint: t("adjust.reasonHint"), error: errors.reason })}
<button type="submit">${t("adjust.review")}</button></form>`;
}

/** The review: what will be sent, the balance before and after, and two ways on: send it, or change it. */
export function reviewBody(who: SignedIn, t: T, m: Merchant, a: Adjustment, availableNow: bigint | undefined): SafeHtml {
  const delta = a.direction === "credit" ? a.amount : -a.amount;
  const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;
  const typed = formatMajorPlain(a.amount, who.lang);
  return html`<p>${t("review.intro")}</p>
<div class="notice" role="status">${t(m.sandbox ? "review.sandboxAtOnce" : "review.liveWaits", { name: m.name })}</div>
<dl class="facts card">
<dt>${t("summary.name")}</dt><dd>${m.name}</dd>
<dt>${t("adjust.direction")}</dt><dd>${t(a.direction === "credit" ? "adjust.credit" : "adjust.debit")}</dd>
<dt>${t(a.direction === "credit" ? "review.change.credit" : "review.change.debit")}</dt><dd>${money(a.amount, a.currency, who.lang)}</dd>
<dt>${t("adjust.reason")}</dt><dd>${a.reason}</dd>
${availableNow === undefined ? null : html`<dt>${t("review.now")}</dt><dd>${money(availableNow, a.currency, who.lang)}</dd><dt>${t("review.after")}</dt><dd>${money(availableNow + delta, a.currency, who.lang)}</dd>`}
</dl>
<div class="actions">
<form method="post" action="${`/merchants/${m.id}/balance/adjust`}" class="card">${csrfField(who)}${hidden("direction", a.direction)}${hidden("amount", String(a.amount))}${hidden("currency", a.currency)}${hidden("reason", a.reason)}
<button type="submit">${t("review.send")}</button></form>
<form method="post" action="${`/merchants/${m.id}/balance/edit`}" class="card">${csrfField(who)}${hidden("direction", a.direction)}${hidden("amount", typed)}${hidden("currency", a.currency)}${hidden("reason", a.reason)}
<button type="submit">${t("review.change")}</button></form>
</div>`;
}
