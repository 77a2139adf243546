import { DepositStatus, type Deposit } from "@payments/contracts/deposit";
import { WithdrawalStatus, type Withdrawal } from "@payments/contracts/payout";
import { depositStatusFromProto, withdrawalStatusFromProto } from "@payments/contracts/statuses";
import { html, type SafeHtml } from "../../shared/html.js";
import type { Language } from "../../shared/i18n.js";
import { timeOf } from "../../shared/params.js";
import { formatMoney } from "../../shared/format.js";
import { codeText } from "../../shared/service-texts.js";
import { tableScroll } from "../merchant-call.js";
import { paymentTexts } from "./texts.js";

/**
 * The Payments lists: who first (the customer, the account holder), then how much (a completed
 * deposit that paid another amount than it asked shows both), the state, when, and the merchant's
 * own process id linking to the payment; the payment's id last.
 */

type Key = Parameters<typeof paymentTexts>[1];
type T = (key: Key, params?: Record<string, string | number>) => string;

export function depositStatus(t: T, status: DepositStatus): string {
  return t(`deposit.status.${depositStatusFromProto(status) ?? "unknown"}`);
}

export function withdrawalStatus(t: T, w: Withdrawal, lang: Language): string {
  const name = t(`withdrawal.status.${withdrawalStatusFromProto(w.status) ?? "unknown"}`);
  return w.status === WithdrawalStatus.FAILED && w.failureReason ? `${name} (${codeText(lang, w.failureReason)})` : name;
}

export const modeText = (t: T, sandbox: boolean) => (sandbox ? t("mode.sandbox") : t("mode.live"));

/** What a deposit brought: the amount received and, when a completed one paid another amount than it asked, the amount asked. */
export function depositAmount(t: T, lang: Language, d: Deposit): SafeHtml {
  const received = formatMoney(d.amount, d.currency, lang);
  if (d.status !== DepositStatus.COMPLETED || d.amount === d.requestedAmount) return html`${received}`;
  const requested = formatMoney(d.requestedAmount, d.currency, lang);
  return html`${received}<br><small>${t(d.amount < d.requestedAmount ? "amount.short" : "amount.over", { requested })}</small>`;
}

export function depositsTable(t: T, lang: Language, rows: Deposit[]): SafeHtml {
  if (rows.length === 0) return html`<p>${t("list.empty")}</p>`;
  return tableScroll(
    t("list.depositsCaption"),
    html`<table><caption>${t("list.depositsCaption")}</caption>
<thead><tr><th scope="col">${t("col.customer")}</th><th scope="col" class="num">${t("col.amount")}</th><th scope="col">${t("col.status")}</th><th scope="col">${t("col.created")}</th><th scope="col">${t("col.processId")}</th><th scope="col">${t("col.reference")}</th><th scope="col">${t("col.mode")}</th><th scope="col">${t("col.id")}</th></tr></thead>
<tbody>${rows.map(
      (d) =>
        html`<tr><td>${d.customer ? html`${d.customer.name}<br><small>${d.customer.id || "—"}</small>` : "—"}</td><td class="num">${depositAmount(t, lang, d)}</td><td>${depositStatus(t, d.status)}</td><td>${timeOf(d.createdAt, lang)}</td><td><a href="${`/merchant/deposits/${d.id}`}">${d.processId}</a></td><td><code>${d.reference}</code></td><td>${modeText(t, d.sandbox)}</td><td><small>${d.id}</small></td></tr>`,
    )}</tbody></table>`,
  );
}

export function withdrawalsTable(t: T, lang: Language, rows: Withdrawal[]): SafeHtml {
  if (rows.length === 0) return html`<p>${t("list.empty")}</p>`;
  return tableScroll(
    t("list.withdrawalsCaption"),
    html`<table><caption>${t("list.withdrawalsCaption")}</caption>
<thead><tr><th scope="col">${t("col.holder")}</th><th scope="col" class="num">${t("col.amount")}</th><th scope="col">${t("col.status")}</th><th scope="col">${t("col.created")}</th><th scope="col">${t("col.processId")}</th><th scope="col">IBAN</th><th scope="col">${t("col.mode")}</th><th scope="col">${t("col.id")}</th></tr></thead>
<tbody>${rows.map(
      (w) =>
        html`<tr><td>${w.accountName}</td><td class="num">${formatMoney(w.amount, w.currency, lang)}</td><td>${withdrawalStatus(t, w, lang)}</td><td>${timeOf(w.createdAt, lang)}</td><td><a href="${`/merchant/withdrawals/${w.id}`}">${w.processId}</a></td><td><code>${w.iban}</code></td><td>${modeText(t, w.sandbox)}</td><td><small>${w.id}</small></td></tr>`,
    )}</tbody></table>`,
  );
}
