import { html, type SafeHtml } from "../html.js";
import { field } from "../layout.js";
import type { ConsoleContextKoa } from "../state.js";
import { queryText, type SignedIn } from "./operator-call.js";

/** A transaction list's filters (deposits, withdrawals), as the query carries them. */
export interface Filters {
  q: string;
  merchant: string;
  status: string;
  from: string;
  to: string;
}

export function filtersOf(ctx: ConsoleContextKoa): Filters {
  return { q: queryText(ctx.query.q, 100), merchant: queryText(ctx.query.merchant, 80), status: queryText(ctx.query.status, 20), from: queryText(ctx.query.from, 10), to: queryText(ctx.query.to, 10) };
}

/** The filter form: the fields ListDeposits and ListWithdrawals offer, and a search by id or process id. */
export function filterForm<S extends string>(who: SignedIn, path: string, f: Filters, statuses: readonly S[], statusLabel: (s: S) => string, invalid: Set<string>): SafeHtml {
  const bad = (name: string) => (invalid.has(name) ? who.t("list.badDay") : undefined);
  return html`<form method="get" action="${path}" class="filters" role="search" aria-label="${who.t("list.search")}">
<div>${field({ name: "q", label: who.t("list.q"), type: "search", value: f.q, hint: who.t("list.qHint") })}</div>
<div>${field({ name: "merchant", label: who.t("list.merchant"), type: "search", value: f.merchant, hint: who.t("list.merchantHint") })}</div>
<div><label for="field-status">${who.t("list.status")}</label>
<select id="field-status" name="status"><option value="">${who.t("list.anyStatus")}</option>${statuses.map((s) => html`<option value="${s}"${s === f.status ? html` selected` : null}>${statusLabel(s)}</option>`)}</select></div>
<div>${field({ name: "from", label: who.t("list.from"), type: "date", value: f.from, error: bad("from") })}</div>
<div>${field({ name: "to", label: who.t("list.to"), type: "date", value: f.to, error: bad("to") })}</div>
<div><button type="submit">${who.t("list.searchButton")}</button></div>
</form>`;
}
