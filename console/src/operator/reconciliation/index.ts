import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DepositService, type GetReconciliationResponse } from "@payments/contracts/deposit";
import { PayoutService, type CheckLedgerResponse } from "@payments/contracts/payout";
import type { ConsoleContext } from "../../context.js";
import { html, type SafeHtml } from "../../shared/html.js";
import { alert, field } from "../../shared/layout.js";
import type { ConsoleRoute } from "../../route.js";
import { money, operatorRoute, queryText, type Refusal, refusalOf, type SignedIn, workPage } from "../operator-call.js";
import { accountNamed, merchantNamed, Names } from "../directory.js";
import { sandboxFilter } from "../../shared/mode.js";

/** The other mode's part of the period, left out (a receiving account's kind; a merchant's mode now). */
const TEXTS = {
  en: { otherAccounts: "{n} receiving accounts of the other mode are not shown: switch mode to see them." },
  tr: { otherAccounts: "Diğer moda ait {n} alıcı hesap gösterilmiyor: görmek için modu değiştirin." },
} as const;

type Accounts = GetReconciliationResponse["accounts"];
type LedgerMerchants = CheckLedgerResponse["merchants"];

/** A day in Türkiye's time (UTC+3) at its start. */
function dayStart(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00+03:00`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function accountsTable(who: SignedIn, names: Names, accounts: Accounts): SafeHtml {
  if (accounts.length === 0) return html`<p>${who.t("reconciliation.noAccounts")}</p>`;
  return html`<table><caption>${who.t("reconciliation.caption")}</caption>
<thead><tr><th scope="col">${who.t("transfer.receivingIban")}</th><th scope="col" class="num">${who.t("reconciliation.received")}</th><th scope="col" class="num">${who.t("reconciliation.credited")}</th><th scope="col" class="num">${who.t("reconciliation.suspense")}</th><th scope="col" class="num">${who.t("reconciliation.returned")}</th><th scope="col" class="num">${who.t("reconciliation.difference")}</th><th scope="col">${who.t("reconciliation.state")}</th></tr></thead>
<tbody>${accounts.map((a) => {
    const balanced = a.difference === 0n && a.discrepancies.length === 0;
    return html`<tr><th scope="row">${accountNamed(names, a.iban)}</th><td class="num">${money(a.received, a.currency, who.lang)}</td><td class="num">${money(a.credited, a.currency, who.lang)}</td><td class="num">${money(a.suspense, a.currency, who.lang)}</td><td class="num">${money(a.returned, a.currency, who.lang)}</td><td class="num">${money(a.difference, a.currency, who.lang)}</td>
<td class="${balanced ? "ok" : "bad"}">${balanced ? who.t("reconciliation.balanced") : who.t("reconciliation.unbalanced")}${a.discrepancies.length > 0 ? html`<ul>${a.discrepancies.map((d) => html`<li>${d}</li>`)}</ul>` : null}</td></tr>`;
  })}</tbody></table>`;
}

function ledgerSection(who: SignedIn, names: Names, ledger: CheckLedgerResponse | Refusal, sandbox: boolean): SafeHtml {
  if ("message" in ledger) return html`<h2>${who.t("reconciliation.ledger")}</h2>${alert(ledger.message)}`;
  const merchants: LedgerMerchants = ledger.merchants.filter((m) => (names.merchant(m.merchantId)?.sandbox ?? false) === sandbox);
  const unbalanced = merchants.filter((m) => !m.balanced);
  const ok = unbalanced.length === 0 && ledger.discrepancies.length === 0;
  return html`<h2>${who.t("reconciliation.ledger")}</h2>
<p class="${ok ? "ok" : "bad"}">${ok ? who.t("reconciliation.ledgerOk", { n: merchants.length }) : who.t("reconciliation.ledgerBad")}</p>
${
  unbalanced.length > 0
    ? html`<table><caption>${who.t("reconciliation.ledgerCaption")}</caption><thead><tr><th scope="col">${who.t("reconciliation.merchant")}</th><th scope="col" class="num">${who.t("reconciliation.available")}</th><th scope="col" class="num">${who.t("reconciliation.ledgerAvailable")}</th><th scope="col" class="num">${who.t("reconciliation.held")}</th><th scope="col" class="num">${who.t("reconciliation.ledgerHeld")}</th></tr></thead>
<tbody>${unbalanced.map((m) => html`<tr><th scope="row">${merchantNamed(names, m.merchantId)}</th><td class="num">${money(m.available, m.currency, who.lang)}</td><td class="num">${money(m.ledgerAvailable, m.currency, who.lang)}</td><td class="num">${money(m.held, m.currency, who.lang)}</td><td class="num">${money(m.ledgerHeld, m.currency, who.lang)}</td></tr>`)}</tbody></table>`
    : null
}
${ledger.discrepancies.length > 0 ? html`<ul>${ledger.discrepancies.map((d) => html`<li>${d}</li>`)}</ul>` : null}
${ledger.dismissed.length > 0 ? html`<h3>${who.t("reconciliation.dismissed")}</h3><ul>${ledger.dismissed.map((d) => html`<li>${d}</li>`)}</ul>` : null}`;
}

/**
 * Reconciliation for a period: per receiving account, the money received against where it went
 * (DepositService.GetReconciliation), and the merchants' ledger checked against the deposits it
 * must have credited (PayoutService.CheckLedger, with the same period's credits). Finance's.
 */
export function reconciliationPages(deps: ConsoleContext): ConsoleRoute[] {
  return [
    operatorRoute(deps, { method: "GET", path: "/reconciliation" }, async (ctx, who) => {
      const raw = { from: queryText(ctx.query.from, 10), to: queryText(ctx.query.to, 10) };
      const from = raw.from ? dayStart(raw.from) : undefined;
      const toDay = raw.to ? dayStart(raw.to) : undefined;
      const bad = (raw.from && !from) || (raw.to && !toDay);
      const form = html`<form method="get" action="/reconciliation" class="filters">
<div>${field({ name: "from", label: who.t("reconciliation.from"), type: "date", value: raw.from, error: raw.from && !from ? who.t("reconciliation.badDate") : undefined })}</div>
<div>${field({ name: "to", label: who.t("reconciliation.to"), type: "date", value: raw.to, error: raw.to && !toDay ? who.t("reconciliation.badDate") : undefined })}</div>
<div><button type="submit">${who.t("reconciliation.check")}</button></div>
</form><p class="hint">${who.t("reconciliation.periodHint")}</p>`;
      const title = who.t("reconciliation.title");
      if (bad) return workPage(ctx, who, { title, body: form }, 400);
      const namesRead = Names.of(deps, who);
      // "to" names the last day of the period: the service's bound is the next day's start, excluded.
      const to = toDay ? new Date(toDay.getTime() + 24 * 3600_000) : undefined;
      let rec: GetReconciliationResponse;
      try {
        rec = await who.client(DepositService).getReconciliation({ ...(from ? { from: timestampFromDate(from) } : {}), ...(to ? { to: timestampFromDate(to) } : {}) });
      } catch (err) {
        const refusal = refusalOf(err, who.t);
        return workPage(ctx, who, { title, body: html`${form}${alert(refusal.message)}` }, refusal.status);
      }
      let ledger: CheckLedgerResponse | Refusal;
      try {
        ledger = await who.client(PayoutService).checkLedger({ allMerchants: true, credits: rec.credits.map((c) => ({ depositId: c.depositId, merchantId: c.merchantId, amount: c.amount, currency: c.currency })) });
      } catch (err) {
        ledger = refusalOf(err, who.t);
      }
      // One mode at a time: the accounts of its kind, the ledger of its merchants (their mode now).
      const sandbox = sandboxFilter(ctx.state.mode);
      const names = await (await namesRead).ensure({ ibans: rec.accounts.map((a) => a.iban), merchants: "message" in ledger ? [] : ledger.merchants.map((m) => m.merchantId) });
      const accounts = rec.accounts.filter((a) => (names.account(a.iban)?.sandbox ?? false) === sandbox);
      const hidden = rec.accounts.length - accounts.length;
      const balanced = accounts.every((a) => a.difference === 0n && a.discrepancies.length === 0);
      workPage(ctx, who, {
        title,
        body: html`${form}
<p class="${balanced ? "ok" : "bad"}" role="status">${balanced ? who.t("reconciliation.allBalanced") : who.t("reconciliation.someUnbalanced")}</p>
${accountsTable(who, names, accounts)}
${hidden > 0 ? html`<p class="hint" role="note">${TEXTS[who.lang].otherAccounts.replace("{n}", String(hidden))}</p>` : null}
${ledgerSection(who, names, ledger, sandbox)}`,
      });
    }),
  ];
}
